// A group comparison (analysis/group_compare.h) as text, Markdown (a pull request comment),
// JSON (schema kernlens.compare-groups/1, docs/schema) or HTML (tables and a chart of each
// row's interval against the threshold).
#pragma once

#include <string>

#include "kernlens/analysis/group_compare.h"
#include "kernlens/report/compare_report.h"

namespace kernlens::report {

std::string group_compare_text(const analysis::GroupComparison& c, const CompareReportOptions& options);
std::string group_compare_markdown(const analysis::GroupComparison& c, const CompareReportOptions& options);
std::string group_compare_json(const analysis::GroupComparison& c);
std::string group_compare_html(const analysis::GroupComparison& c, const CompareReportOptions& options);

}  // namespace kernlens::report

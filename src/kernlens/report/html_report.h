// `kernlens report -o report.html`: one self-contained HTML page (inline CSS, SVG and a few
// lines of script; no network) with the summary, stages, top kernels, roofline, time by
// operation class, GPU busy timeline, warp stalls and advice. Every name is HTML-escaped.
#pragma once

#include <string>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"
#include "kernlens/report/tables.h"

namespace kernlens::report {

std::string analysis_html(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx);

}  // namespace kernlens::report

// `kernlens report -o report.html`: one self-contained HTML page (inline CSS, SVG and a few
// lines of script; no network) with the summary, stages, top kernels, roofline, time by
// operation class, GPU busy timeline, warp stalls and advice. Every name is HTML-escaped.
#pragma once

#include <string>
#include <string_view>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"
#include "kernlens/report/tables.h"

namespace kernlens::report {

std::string analysis_html(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx);

// The parts every kernlens HTML page is made of (the cross-model page uses them too): the
// page with its inline style and script around `body` (`title` up to " — " is its heading),
// a section with a heading and an optional note, and a table.
std::string html_page(std::string_view title, std::string_view subtitle, const std::string& body);
std::string section(std::string_view id, std::string_view title, std::string_view intro, const std::string& body);
std::string render_table(const Table& t, std::string_view css_class, bool show_header);

}  // namespace kernlens::report

// `kernlens report --format md` (and `analyze --format md`): the HTML report's numbers and
// tables as GitHub-flavoured Markdown, for a pull request; no images.
#pragma once

#include <string>
#include <string_view>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"
#include "kernlens/report/tables.h"

namespace kernlens::report {

std::string analysis_markdown(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx);

// A code span for a table cell: kernel names hold < > & * _ that Markdown would otherwise read
// as markup, '|' would end the cell (escaped), a name holding backticks gets a longer fence.
std::string code_span(std::string_view s);
// The same without the spaces inside the fence (`name`), but where the text starts or ends
// with a backtick: for names in the compare reports' tables and lists.
std::string tight_code_span(std::string_view s);

// `t` as a GitHub-flavoured Markdown table (and its note) at the end of `out`.
void append_table(std::string& out, const Table& t);

}  // namespace kernlens::report

#include "kernlens/report/markdown_report.h"

#include <fmt/format.h>

#include "kernlens/common/text.h"
#include "kernlens/report/format.h"
#include "kernlens/report/missing.h"
#include "kernlens/report/summary.h"

namespace kernlens::report {
namespace {

// Text in a table cell: '|' ends the cell even inside code, and a newline ends the row (so
// control characters are escaped, common/text.h).
std::string cell_text(std::string_view s) {
  std::string out;
  for (char c : escape_controls(s)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string plain(std::string_view s) {
  // Outside code spans, escape what Markdown (and the HTML GitHub allows in it) would interpret.
  std::string out;
  for (char c : cell_text(s)) {
    if (std::string_view("\\`*_<>[]#").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// A code span around `s`: a double fence when it holds a backtick; spaces inside the fence
// when `pad` (CommonMark strips one on each side).
std::string fenced(std::string_view s, bool pad) {
  std::string_view fence = s.find('`') == std::string_view::npos ? "`" : "``";
  std::string_view space = pad ? " " : "";
  return fmt::format("{}{}{}{}{}", fence, space, cell_text(s), space, fence);
}

std::string render_cell(const Cell& c) { return c.code ? code_span(c.text) : plain(c.text); }

}  // namespace

std::string code_span(std::string_view s) { return fenced(s, true); }

std::string tight_code_span(std::string_view s) {
  return fenced(s, s.empty() || s.front() == '`' || s.back() == '`');
}

void append_table(std::string& out, const Table& t) {
  if (t.rows.empty()) return;
  std::string header = "|", rule = "|";
  for (std::size_t i = 0; i < t.headers.size(); ++i) {
    header += fmt::format(" {} |", plain(t.headers[i]));
    rule += t.numeric[i] ? " ---: |" : " --- |";
  }
  out += header + "\n" + rule + "\n";
  for (const auto& row : t.rows) {
    std::string line = "|";
    for (const auto& c : row) line += fmt::format(" {} |", render_cell(c));
    out += line + "\n";
  }
  if (!t.note.empty()) out += fmt::format("\n{}\n", plain(t.note));
}

namespace {

void append_summary(std::string& out, const Table& t) {
  for (const auto& row : t.rows) out += fmt::format("- **{}**: {}\n", plain(row[0].text), render_cell(row[1]));
}

void append_advice(std::string& out, const std::vector<KernelAdvice>& list) {
  for (const auto& k : list) {
    out += fmt::format("- {} ({} of kernel time): **{}**", code_span(k.name), k.share, k.bottleneck);
    if (!k.reason.empty()) out += fmt::format(" — {}", plain(k.reason));
    out += "\n";
    for (const auto& a : k.advice) {
      std::string speedup = a.est_speedup_pct ? fmt::format(" (est. {:.0f}%)", *a.est_speedup_pct) : "";
      out += fmt::format("  - `{}`{}: {}\n", cell_text(a.rule), speedup, plain(first_sentence(a.text)));
    }
  }
}

}  // namespace

std::string analysis_markdown(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx) {
  std::string out = "# kernlens report\n\n";
  append_summary(out, summary_table(profile, analysis, ctx));
  if (auto missing = missing_parts(profile, analysis, ctx.top); !missing.empty()) {
    out += "\n## Not in this report\n\n";
    for (const auto& m : missing) out += fmt::format("- **{}**: needs {}.\n", plain(m.what), plain(m.needs));
  }
  auto section = [&out](std::string_view title, const Table& t) {
    if (t.rows.empty()) return;
    out += fmt::format("\n## {}\n\n", title);
    append_table(out, t);
  };
  section("Stages", stage_table(analysis));
  section("Top kernels", kernel_table(profile, analysis, ctx));
  section("Time by operation class", op_class_table(analysis));
  section("Warp stalls of the top kernels", stall_table(profile, analysis, ctx));
  auto advice = advice_list(profile, analysis, ctx);
  if (!advice.empty()) {
    out += "\n## Why the top kernels are slow, and advice (ncu's and kernlens's)\n\n";
    append_advice(out, advice);
  }
  return out;
}

}  // namespace kernlens::report

#include "kernlens/report/html_report.h"

#include <fmt/format.h>

#include "kernlens/report/charts.h"
#include "kernlens/report/format.h"
#include "kernlens/report/summary.h"

namespace kernlens::report {
namespace {

// Inline, so that the file opens from a share or a ticket with no network.
constexpr std::string_view kStyle = R"css(
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328; margin: 0; background: #f6f8fa; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 32px 0 10px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
.subtitle { color: #57606a; margin: 0 0 16px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 4px 8px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; }
th { background: #f6f8fa; position: sticky; top: 0; }
table.sortable th { cursor: pointer; user-select: none; } table.sortable th:hover { background: #eaeef2; }
td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; word-break: break-all; }
table.summary td:first-child { width: 150px; color: #57606a; font-weight: 600; }
.note { color: #57606a; font-style: italic; }
svg.chart { display: block; max-width: 100%; height: auto; }
.grid { stroke: #eaeef2; } .frame { fill: none; stroke: #8c959f; }
.tick { font-size: 11px; fill: #57606a; } .axis-title { font-size: 12px; fill: #24292f; }
.y-title { transform-box: fill-box; transform-origin: center; transform: rotate(-90deg); }
.roof { stroke-width: 2.5; } .compute-roof { stroke: #cf222e; } .memory-roof { stroke: #0969da; }
.roof-label { font-size: 12px; font-weight: 600; fill: #24292f; }
.dot { fill-opacity: 0.75; stroke: #24292f; stroke-width: 0.6; } .dot:hover { stroke-width: 2.5; fill-opacity: 1; }
.legend, .bar-value, .lane-label, .bar-label { font-size: 12px; fill: #24292f; } .legend-title { font-size: 12px; font-weight: 600; }
.code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 11px; }
.bar:hover, .stall:hover { opacity: 0.8; }
.idle { fill: #ffebe9; } .busy { fill: #1a7f37; } .stage-range { fill: #ddf4ff; stroke: #54aeff; }
.stall-rest { fill: #eaeef2; }
.series { fill: none; stroke-width: 2; } .panel-title { font-size: 12px; font-weight: 600; fill: #24292f; }
.l0 { stroke: #cf222e; } .l1 { stroke: #0969da; } .l2 { stroke: #bf8700; } .l3 { stroke: #8250df; }
.l4 { stroke: #1a7f37; } .l5 { stroke: #e16f24; } .l6 { stroke: #57606a; } .l7 { stroke: #bf3989; }
.s0 { fill: #cf222e; } .s1 { fill: #0969da; } .s2 { fill: #bf8700; } .s3 { fill: #8250df; }
.s4 { fill: #1a7f37; } .s5 { fill: #e16f24; } .s6 { fill: #57606a; } .s7 { fill: #bf3989; }
.op-gemm { fill: #0969da; } .op-attention { fill: #8250df; } .op-norm { fill: #1a7f37; } .op-softmax { fill: #bf3989; }
.op-elementwise { fill: #e16f24; } .op-reduction { fill: #bf8700; } .op-copy { fill: #57606a; } .op-gather { fill: #0a7ea4; }
.op-scatter { fill: #6e7781; } .op-embedding { fill: #953800; } .op-sort { fill: #4d2d00; } .op-comm { fill: #cf222e; }
.op-memset { fill: #8c959f; } .op-other { fill: #afb8c1; }
.advice li { margin: 4px 0; } .verdict { font-weight: 600; } .rule { font-family: ui-monospace, Menlo, monospace; font-size: 12px; color: #57606a; }
#tip { position: fixed; display: none; pointer-events: none; background: #24292f; color: #fff; padding: 6px 8px; border-radius: 4px;
       font-size: 12px; white-space: pre-wrap; max-width: 560px; word-break: break-all; z-index: 10; }
footer { color: #57606a; font-size: 12px; margin-top: 32px; }
)css";

// Sorting on a click of a column header, and the hover text of the charts' marks.
constexpr std::string_view kScript = R"js(
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var dir = th.dataset.dir === 'desc' ? 1 : -1;
      th.dataset.dir = dir === 1 ? 'asc' : 'desc';
      var key = function (row) { var c = row.cells[col]; return c.dataset.v !== undefined ? parseFloat(c.dataset.v) : c.textContent; };
      var rows = Array.prototype.slice.call(table.tBodies[0].rows);
      rows.sort(function (a, b) { var x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * dir; });
      rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
    });
  });
});
var tip = document.getElementById('tip');
document.querySelectorAll('svg.chart title').forEach(function (title) {
  var mark = title.parentNode, text = title.textContent;
  mark.removeChild(title);
  mark.addEventListener('mousemove', function (e) {
    tip.textContent = text; tip.style.display = 'block';
    tip.style.left = (e.clientX + 14) + 'px'; tip.style.top = (e.clientY + 14) + 'px';
  });
  mark.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
});
)js";

std::string render_cell(const Cell& c, bool numeric) {
  std::string cls = c.code ? " class=\"code\"" : numeric ? " class=\"num\"" : "";
  std::string key = c.sort_key ? fmt::format(" data-v=\"{:.17g}\"", *c.sort_key) : "";
  std::string title = c.full.empty() ? "" : fmt::format(" title=\"{}\"", html_escape(c.full));
  return fmt::format("<td{}{}{}>{}</td>", cls, key, title, html_escape(c.text));
}

}  // namespace

std::string render_table(const Table& t, std::string_view css_class, bool show_header) {
  if (t.rows.empty()) return "";
  std::string out = fmt::format("<table id=\"{}\" class=\"{}\">\n", html_escape(t.id), css_class);
  if (show_header) {
    out += "<thead><tr>";
    for (std::size_t i = 0; i < t.headers.size(); ++i) {
      out += fmt::format("<th{}>{}</th>", t.numeric[i] ? " class=\"num\"" : "", html_escape(t.headers[i]));
    }
    out += "</tr></thead>\n";
  }
  out += "<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) out += render_cell(row[i], t.numeric[i]);
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  if (!t.note.empty()) out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(t.note));
  return out;
}

namespace {

std::string render_advice(const std::vector<KernelAdvice>& list) {
  if (list.empty()) return "<p class=\"note\">No advice: no kernel has deep metrics or ncu rule results.</p>\n";
  std::string out = "<ol class=\"advice\">\n";
  for (const auto& k : list) {
    out += fmt::format("<li><code>{}</code> ({} of kernel time): <span class=\"verdict\">{}</span>", html_escape(k.name),
                       html_escape(k.share), html_escape(k.bottleneck));
    if (!k.reason.empty()) out += fmt::format(" — {}", html_escape(k.reason));
    if (!k.advice.empty()) out += "\n<ul>\n";
    for (const auto& a : k.advice) {
      std::string speedup = a.est_speedup_pct ? fmt::format(" est. {:.0f}%", *a.est_speedup_pct) : "";
      out += fmt::format("<li><span class=\"rule\">[{}{}]</span> {}</li>\n", html_escape(a.rule), html_escape(speedup),
                         html_escape(a.text));
    }
    if (!k.advice.empty()) out += "</ul>";
    out += "</li>\n";
  }
  return out + "</ol>\n";
}

}  // namespace

std::string section(std::string_view id, std::string_view title, std::string_view intro, const std::string& body) {
  std::string out = fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", id, html_escape(title));
  if (!intro.empty()) out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(intro));
  return out + body + "</section>\n";
}

std::string html_page(std::string_view title, std::string_view subtitle, const std::string& body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n<h1>{}</h1>\n"
      "<p class=\"subtitle\">{}</p>\n{}"
      "<footer>Written by kernlens {}.</footer>\n</main>\n<div id=\"tip\"></div>\n<script>{}</script>\n</body>\n</html>\n",
      html_escape(title), kStyle, html_escape(title.substr(0, title.find(" — "))), html_escape(subtitle), body,
      KERNLENS_VERSION, kScript);
}

std::string analysis_html(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx) {
  std::string gpu = device_line(profile, analysis);
  std::string out;
  out += section("summary", "Summary", "", render_table(summary_table(profile, analysis, ctx), "summary", false));
  out += section("stage-table", "Stages", "NVTX ranges; MFU is the stage's FLOP/s over the GPU's peak.",
                 render_table(stage_table(analysis), "stages", true));
  out += section("timeline-section", "GPU timeline", "Green: kernels running (darker is busier); red: the GPU idle.",
                 timeline_chart(profile));
  out += section("roofline-section", "Roofline",
                 "Each dot is a kernel (area by its time; hover for its figures); the lines are the GPU's compute "
                 "and DRAM roofs.",
                 roofline_chart(profile, analysis));
  out += section("op-class-section", "Time by operation class", "", op_class_chart(analysis));
  out += section("top-kernels", "Top kernels", "Click a column header to sort.",
                 render_table(kernel_table(profile, analysis, ctx), "sortable", true));
  out += section("stall-section", "Warp stalls of the top kernels",
                 "Share of the cycles between two instructions issued that warps spent stalled, by reason.",
                 stall_chart(profile, analysis, ctx));
  out += section("advice-section", "Why the top kernels are slow, and advice", "ncu's rule results and kernlens's rules.",
                 render_advice(advice_list(profile, analysis, ctx)));
  return html_page(gpu.empty() ? "kernlens report" : "kernlens report — " + gpu,
                   gpu.empty() ? "Where the GPU time goes, kernel by kernel, and why." : gpu, out);
}

}  // namespace kernlens::report

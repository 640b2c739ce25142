#include "kernlens/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "kernlens/report/charts.h"
#include "kernlens/report/format.h"
#include "kernlens/report/headline.h"
#include "kernlens/report/missing.h"
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
.compute { fill: #0969da; } .comm-overlapped { fill: #d4a72c; } .comm-exposed { fill: #cf222e; } .rank-label { font-weight: 600; }
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
td[title], span[title] { cursor: help; } td.num[title] { text-decoration: underline dotted #8c959f; text-underline-offset: 3px; }
sup.how { color: #9a6700; font-size: 10px; margin-left: 1px; }
.footnote { color: #57606a; font-size: 12px; margin: 4px 0 0; }
tr.has-details { cursor: pointer; } tr.has-details td:first-child::before { content: "\25B8 "; color: #8c959f; }
tr.has-details.open td:first-child::before { content: "\25BE "; }
tr.details td { background: #f6f8fa; } tr.details dl { margin: 4px 0; display: grid; grid-template-columns: 110px 1fr; gap: 2px 12px; }
tr.details dt { color: #57606a; font-weight: 600; } tr.details dd { margin: 0; font-family: ui-monospace, Menlo, Consolas, monospace;
  font-size: 12px; word-break: break-all; }
ul.headline { list-style: none; padding: 0; margin: 0; font-size: 15px; }
ul.headline li { margin: 4px 0; display: grid; grid-template-columns: 110px 1fr; } ul.headline b { color: #57606a; }
ul.missing li { margin: 3px 0; color: #57606a; } ul.missing b { color: #1f2328; }
)css";

// Sorting on a click of a column header, and the hover text of the charts' marks.
constexpr std::string_view kScript = R"js(
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var dir = th.dataset.dir === 'desc' ? 1 : -1;
      th.dataset.dir = dir === 1 ? 'asc' : 'desc';
      var key = function (row) { var c = row.cells[col]; return c.dataset.v !== undefined ? parseFloat(c.dataset.v) : c.textContent; };
      var rows = Array.prototype.filter.call(table.tBodies[0].rows, function (r) { return !r.classList.contains('details'); });
      var details = rows.map(function (r) { var d = r.nextElementSibling; return d && d.classList.contains('details') ? d : null; });
      var order = rows.map(function (r, i) { return i; });
      order.sort(function (a, b) { var x = key(rows[a]), y = key(rows[b]); return (x < y ? -1 : x > y ? 1 : 0) * dir; });
      order.forEach(function (i) { table.tBodies[0].appendChild(rows[i]); if (details[i]) table.tBodies[0].appendChild(details[i]); });
    });
  });
});
document.querySelectorAll('tr.has-details').forEach(function (row) {
  row.addEventListener('click', function () {
    var d = row.nextElementSibling;
    d.hidden = !d.hidden;
    row.classList.toggle('open', !d.hidden);
  });
});
var tip = document.getElementById('tip');
document.querySelectorAll('svg.chart title').forEach(function (title) {
  var mark = title.parentNode, text = title.textContent;
  mark.removeChild(title);
  mark.setAttribute('aria-label', text);
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
  std::string hover = !c.full.empty() ? c.full : c.how ? c.how->text : "";
  std::string title = hover.empty() ? "" : fmt::format(" title=\"{}\"", html_escape(hover));
  std::string mark = c.how && !how_mark(c.how->how).empty() && c.text != "-"
                         ? fmt::format("<sup class=\"how\">{}</sup>", html_escape(how_mark(c.how->how)))
                         : "";
  return fmt::format("<td{}{}{}>{}{}</td>", cls, key, title, html_escape(c.brief.empty() ? c.text : c.brief), mark);
}

std::string render_details(const Details& details, std::size_t columns) {
  std::string out = fmt::format("<tr class=\"details\" hidden><td colspan=\"{}\"><dl>", columns);
  for (const auto& [label, text] : details) out += fmt::format("<dt>{}</dt><dd>{}</dd>", html_escape(label), html_escape(text));
  return out + "</dl></td></tr>\n";
}

// The footnote under a table: what its marks mean, for the kinds it shows.
std::string render_footnote(const Table& t) {
  std::vector<How> kinds;
  bool hover = false;
  for (const auto& row : t.rows) {
    for (const auto& c : row) {
      if (!c.how) continue;
      hover = true;
      if (c.text != "-" && std::find(kinds.begin(), kinds.end(), c.how->how) == kinds.end()) kinds.push_back(c.how->how);
    }
  }
  if (!hover) return "";
  std::sort(kinds.begin(), kinds.end());
  std::string out = "<p class=\"footnote\">Hover a figure to see how it was obtained";
  for (How how : kinds) {
    if (!how_mark(how).empty()) out += fmt::format("; <sup class=\"how\">{}</sup> {}", html_escape(how_mark(how)), html_escape(how_footnote(how)));
  }
  return out + ".</p>\n";
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
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const bool details = r < t.details.size() && !t.details[r].empty();
    out += details ? "<tr class=\"has-details\">" : "<tr>";
    for (std::size_t i = 0; i < t.rows[r].size(); ++i) out += render_cell(t.rows[r][i], t.numeric[i]);
    out += "</tr>\n";
    if (details) out += render_details(t.details[r], t.headers.size());
  }
  out += "</tbody></table>\n";
  out += render_footnote(t);
  if (!t.note.empty()) out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(t.note));
  return out;
}

namespace {

std::string render_advice(const std::vector<KernelAdvice>& list) {
  std::string out = "<ol class=\"advice\">\n";
  for (const auto& k : list) {
    out += fmt::format("<li><code title=\"{}\">{}</code> ({} of kernel time): <span class=\"verdict\">{}</span>",
                       html_escape(k.full_name), html_escape(k.base_name), html_escape(k.share), html_escape(k.bottleneck));
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

std::string render_headline(const std::vector<HeadlineLine>& lines) {
  std::string out = "<ul class=\"headline\">\n";
  for (const auto& l : lines) out += fmt::format("<li><b>{}</b> {}</li>\n", html_escape(l.label), html_escape(l.text));
  return out + "</ul>\n";
}

// One line per part the inputs cannot fill, saying which input would.
std::string render_missing(const std::vector<MissingPart>& missing) {
  std::string out = "<ul class=\"missing\">\n";
  for (const auto& m : missing) {
    out += fmt::format("<li id=\"missing-{}\"><b>{}</b>: needs {}.</li>\n", m.id, html_escape(m.what), html_escape(m.needs));
  }
  return out + "</ul>\n";
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

namespace {

struct Page {
  const model::Profile& profile;
  const analysis::Analysis& analysis;
  const ReportContext& ctx;
};

// The report's sections after the summary, in order. A section whose part is missing is left
// out; the "Not in this report" list says which input would fill it.
struct SectionSpec {
  std::string_view id, title, intro;
  std::optional<Part> part;
  std::string (*body)(const Page&);
  bool (*shown)(const Page&) = nullptr;  // null: always (unless its part is missing)
};

constexpr std::array<SectionSpec, 8> kSections = {{
    {"stage-table", "Stages", "NVTX ranges; MFU is the stage's FLOP/s over the GPU's peak.", Part::kStages,
     [](const Page& p) { return render_table(stage_table(p.analysis), "stages", true); }, nullptr},
    {"timeline-section", "GPU timeline", "Green: kernels running (darker is busier); red: the GPU idle.", Part::kTimeline,
     [](const Page& p) { return timeline_chart(p.profile); }, nullptr},
    {"ranks-section", "Ranks: computation and communication",
     "Per rank, and per top-level stage of it: compute kernels, then communication (NCCL, NVSHMEM, peer copies) split into "
     "the part that ran under compute kernels on the same GPU and the exposed rest. The straggler is the rank the "
     "others waited for in their collectives.",
     std::nullopt, [](const Page& p) { return rank_overlap_chart(p.analysis); },
     [](const Page& p) { return p.analysis.ranks.multi_rank(); }},
    {"roofline-section", "Roofline",
     "Each dot is a kernel (area by its time; hover for its figures); the lines are the GPU's compute and DRAM roofs.",
     Part::kRoofline, [](const Page& p) { return roofline_chart(p.profile, p.analysis); }, nullptr},
    {"op-class-section", "Time by operation class", "", Part::kOpClasses,
     [](const Page& p) { return op_class_chart(p.analysis); }, nullptr},
    {"top-kernels", "Top kernels",
     "Base names; hover a name for the whole one, click a row for its details, a column header to sort.", std::nullopt,
     [](const Page& p) { return render_table(kernel_table(p.profile, p.analysis, p.ctx), "sortable", true); }, nullptr},
    {"stall-section", "Warp stalls of the top kernels",
     "Share of the cycles between two instructions issued that warps spent stalled, by reason.", Part::kStalls,
     [](const Page& p) { return stall_chart(p.profile, p.analysis, p.ctx); }, nullptr},
    {"advice-section", "Why the top kernels are slow, and advice", "ncu's rule results and kernlens's rules.",
     Part::kAdvice, [](const Page& p) { return render_advice(advice_list(p.profile, p.analysis, p.ctx)); }, nullptr},
}};

}  // namespace

std::string analysis_html(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx) {
  std::string gpu = device_line(profile, analysis);
  std::string out = section("headline", "In short", "", render_headline(headline(profile, analysis)));
  out += section("summary", "Summary", "", render_table(summary_table(profile, analysis, ctx), "summary", false));
  const auto missing = missing_parts(profile, analysis, ctx.top);
  if (!missing.empty()) {
    out += section("missing", "Not in this report", "What these inputs cannot show, and the input that would.",
                   render_missing(missing));
  }
  const Page page{profile, analysis, ctx};
  for (const auto& spec : kSections) {
    if ((spec.part && is_missing(missing, *spec.part)) || (spec.shown && !spec.shown(page))) continue;
    out += section(spec.id, spec.title, spec.intro, spec.body(page));
  }
  return html_page(gpu.empty() ? "kernlens report" : "kernlens report — " + gpu,
                   gpu.empty() ? "Where the GPU time goes, kernel by kernel, and why." : gpu, out);
}

}  // namespace kernlens::report

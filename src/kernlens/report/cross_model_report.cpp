#include "kernlens/report/cross_model_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "kernlens/report/format.h"
#include "kernlens/report/html_report.h"
#include "kernlens/report/markdown_report.h"
#include "kernlens/report/svg.h"
#include "kernlens/report/tables.h"

namespace kernlens::report {
namespace {

constexpr std::size_t kPanels = 6;        // op classes drawn (those with the most time), 3 a row
constexpr std::size_t kPanelRows = 4;     // op classes drawn when token counts make columns
constexpr std::size_t kTokenColumns = 5;  // token counts drawn, spread from the least to the most
constexpr std::size_t kColors = 8;        // series colors (.l0-.l7, .s0-.s7) before they repeat
constexpr std::size_t kColumns = 3;
constexpr double kWidth = 1100, kPanelH = 190, kLegendRowH = 20, kLegendItemW = 270;
constexpr double kCharW = 7;  // about one character of the 12 px labels
constexpr double kLeft = 46, kRight = 12, kTop = 26, kBottom = 34;

using model::ScalingCell;

std::string value_text(const std::optional<std::int64_t>& v) {
  return v ? std::to_string(*v) : std::string("-");
}

// Which figure the x axis shows: batch when it varies, else tokens. When both vary, each
// token count gets a column of panels.
struct Dimensions {
  bool x_is_batch = true;
  bool tokens_vary = false, gpus_vary = false, dtypes_vary = false;
};

Dimensions dimensions(const std::vector<ScalingCell>& cells) {
  std::set<std::string> batch, tokens, gpus, dtypes;
  for (const auto& c : cells) {
    batch.insert(value_text(c.batch));
    tokens.insert(value_text(c.tokens));
    gpus.insert(c.gpu);
    dtypes.insert(c.dtype);
  }
  Dimensions d;
  d.x_is_batch = batch.size() > 1 || tokens.size() <= 1;
  d.tokens_vary = d.x_is_batch && tokens.size() > 1;
  d.gpus_vary = gpus.size() > 1;
  d.dtypes_vary = dtypes.size() > 1;
  return d;
}

std::optional<std::int64_t> x_of(const ScalingCell& c, const Dimensions& d) {
  return d.x_is_batch ? c.batch : c.tokens;
}

// "llama", or "llama · H100 · bf16" where those vary.
std::string series_of(const ScalingCell& c, const Dimensions& d) {
  std::string s = c.model.empty() ? "(no model)" : c.model;
  if (d.gpus_vary) s += " · " + c.gpu;
  if (d.dtypes_vary) s += " · " + c.dtype;
  return s;
}

std::optional<double> figure_of(const ScalingCell& c, ScalingFigure f) {
  if (f == ScalingFigure::kShare) return c.share_of_time;
  return c.sol_pct;
}

std::string point_title(const ScalingCell& c, const std::string& series, const Dimensions& d) {
  auto pct = [](std::optional<double> v) { return v ? fmt::format("{:.1f}%", *v) : std::string("not measured"); };
  std::string where = d.x_is_batch ? fmt::format("batch {}", value_text(c.batch)) : fmt::format("{} tokens", value_text(c.tokens));
  if (d.tokens_vary) where += fmt::format(" · {} tokens", value_text(c.tokens));
  return fmt::format("{} · {} · {}\nSOL {} (SM {}, memory {}), {} measured\n{} of the kernel time, {} per run",
                     series, where, c.op_class, pct(c.sol_pct),
                     pct(c.sm_pct), pct(c.memory_pct), c.measured_share ? human_percent(*c.measured_share) : "none",
                     c.share_of_time ? human_percent(*c.share_of_time) : "-",
                     c.time_ns_per_run ? human_duration_ns(*c.time_ns_per_run) : "-");
}

// The op classes with the most kernel time over every point, largest first, at most `n`.
std::vector<std::string> top_classes(const std::vector<ScalingCell>& cells, std::size_t n) {
  std::map<std::string, double> time;
  for (const auto& c : cells) time[c.op_class] += c.time_ns_per_run.value_or(0) * static_cast<double>(c.runs);
  std::vector<std::pair<std::string, double>> order(time.begin(), time.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < order.size() && i < n; ++i) out.push_back(order[i].first);
  return out;
}

// One panel: an op class, at one token count when those make columns.
struct Facet {
  std::string op_class;
  std::optional<std::int64_t> tokens;
  bool holds(const ScalingCell& c) const { return c.op_class == op_class && (!tokens || c.tokens == tokens); }
  std::string title() const {
    return tokens ? fmt::format("{} · {} tokens", op_class, *tokens) : op_class;
  }
};

// At most `n` of `values`, evenly spread from the first to the last.
std::vector<std::int64_t> spread(const std::vector<std::int64_t>& values, std::size_t n) {
  if (values.size() <= n) return values;
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(values[i * (values.size() - 1) / (n - 1)]);
  return out;
}

struct PanelLayout {
  std::vector<Facet> facets;        // the panels, row by row
  std::size_t columns = kColumns;   // panels per row
  std::vector<std::string> series;  // lines (legend order)
  std::vector<std::int64_t> xs;     // the x axis's values, in order
  std::size_t token_counts = 0;     // distinct token counts, when they make columns
  double y_max = 100;
};

void add_facets(PanelLayout& l, const std::vector<ScalingCell>& cells, const Dimensions& d) {
  std::set<std::int64_t> tokens;
  for (const auto& c : cells) {
    if (c.tokens) tokens.insert(*c.tokens);
  }
  if (!d.tokens_vary) {
    for (auto& op : top_classes(cells, kPanels)) l.facets.push_back({op, std::nullopt});
    return;
  }
  l.token_counts = tokens.size();
  auto columns = spread(std::vector<std::int64_t>(tokens.begin(), tokens.end()), kTokenColumns);
  l.columns = columns.size();
  for (auto& op : top_classes(cells, kPanelRows)) {
    for (auto t : columns) l.facets.push_back({op, t});
  }
}

PanelLayout layout(const model::CrossModel& across, ScalingFigure figure, const Dimensions& d) {
  PanelLayout l;
  add_facets(l, across.op_classes, d);
  std::set<std::string> series;
  std::set<std::int64_t> xs;
  double top = 0;
  for (const auto& c : across.op_classes) {
    if (std::none_of(l.facets.begin(), l.facets.end(), [&](const Facet& f) { return f.holds(c); })) continue;
    series.insert(series_of(c, d));
    if (auto x = x_of(c, d)) xs.insert(*x);
    top = std::max(top, figure_of(c, figure).value_or(0));
  }
  l.series.assign(series.begin(), series.end());
  l.xs.assign(xs.begin(), xs.end());
  // Shares: the next tenth above the largest; SOL: always 0-100%.
  if (figure == ScalingFigure::kShare) l.y_max = std::min(1.0, std::max(0.1, std::ceil(top * 10 + 1e-9) / 10));
  return l;
}

constexpr std::size_t kLegendColumns = 4;

void draw_legend(Svg& svg, const PanelLayout& l) {
  for (std::size_t i = 0; i < l.series.size(); ++i) {
    double x = 10 + static_cast<double>(i % kLegendColumns) * kLegendItemW;
    double y = 14 + static_cast<double>(i / kLegendColumns) * kLegendRowH;
    svg.line(x, y - 4, x + 22, y - 4, fmt::format("series l{}", i % kColors));
    svg.text(x + 28, y, ellipsize(l.series[i], 30), "legend");
  }
}

struct Panel {
  double left, top;  // the panel's corner
  LinearAxis x, y;
};

Panel panel_at(std::size_t i, double legend_h, const PanelLayout& l) {
  const double panel_w = kWidth / static_cast<double>(l.columns);
  double left = static_cast<double>(i % l.columns) * panel_w;
  double top = legend_h + static_cast<double>(i / l.columns) * kPanelH;
  double n = static_cast<double>(std::max<std::size_t>(l.xs.size(), 1));
  // The x values are categories, evenly spaced: batch sizes come in powers of two.
  LinearAxis x{-0.5, n - 0.5, left + kLeft, left + panel_w - kRight};
  LinearAxis y{0, l.y_max, top + kPanelH - kBottom, top + kTop};
  return {left, top, x, y};
}

void draw_frame(Svg& svg, const Panel& p, const PanelLayout& l, std::string_view title, ScalingFigure figure, bool batch) {
  const auto fits = static_cast<std::size_t>((p.x.px_hi - p.left) / kCharW);
  svg.text(p.left + kLeft, p.top + 16, ellipsize(title, fits), "panel-title");
  for (int k = 0; k <= 4; ++k) {
    double v = l.y_max * k / 4;
    svg.line(p.x.px_lo, p.y.map(v), p.x.px_hi, p.y.map(v), "grid");
    svg.text(p.x.px_lo - 5, p.y.map(v) + 4,
             fmt::format("{:.3g}%", figure == ScalingFigure::kSol ? v : v * 100), "tick", "end");
  }
  // Every k-th label, so that they do not overlap.
  std::size_t widest = 1;
  for (auto x : l.xs) widest = std::max(widest, std::to_string(x).size());
  const double slot = (p.x.px_hi - p.x.px_lo) / static_cast<double>(std::max<std::size_t>(l.xs.size(), 1));
  const auto every = static_cast<std::size_t>(std::ceil((static_cast<double>(widest) + 1) * kCharW / slot));
  for (std::size_t i = 0; i < l.xs.size(); ++i) {
    if (i % every != 0) continue;
    svg.text(p.x.map(static_cast<double>(i)), p.y.px_lo + 14, std::to_string(l.xs[i]), "tick", "middle");
  }
  svg.rect(p.x.px_lo, p.y.px_hi, p.x.px_hi - p.x.px_lo, p.y.px_lo - p.y.px_hi, "frame");
  svg.text((p.x.px_lo + p.x.px_hi) / 2, p.y.px_lo + 28, batch ? "batch" : "tokens", "tick", "middle");
}

void draw_series(Svg& svg, const Panel& p, const PanelLayout& l, const model::CrossModel& across, const Facet& facet,
                 ScalingFigure figure, const Dimensions& d) {
  std::size_t drawn = 0;
  for (std::size_t s = 0; s < l.series.size(); ++s) {
    std::map<std::size_t, const ScalingCell*> at;  // x index -> cell
    for (const auto& c : across.op_classes) {
      auto x = x_of(c, d);
      if (!facet.holds(c) || !x || series_of(c, d) != l.series[s] || !figure_of(c, figure)) continue;
      at[static_cast<std::size_t>(std::lower_bound(l.xs.begin(), l.xs.end(), *x) - l.xs.begin())] = &c;
    }
    auto y_of = [&](const ScalingCell* c) { return p.y.map(std::min(*figure_of(*c, figure), l.y_max)); };
    const std::pair<const std::size_t, const ScalingCell*>* previous = nullptr;
    for (const auto& entry : at) {
      if (previous && previous->first + 1 == entry.first) {  // a gap in x leaves the line open
        svg.line(p.x.map(static_cast<double>(previous->first)), y_of(previous->second),
                 p.x.map(static_cast<double>(entry.first)), y_of(entry.second), fmt::format("series l{}", s % kColors));
      }
      previous = &entry;
    }
    for (const auto& [i, c] : at) {
      svg.circle(p.x.map(static_cast<double>(i)), y_of(c), 3.5, fmt::format("dot s{}", s % kColors),
                 point_title(*c, l.series[s], d));
    }
    drawn += at.size();
  }
  if (drawn == 0) svg.text((p.x.px_lo + p.x.px_hi) / 2, (p.y.px_lo + p.y.px_hi) / 2, "not measured", "tick", "middle");
}

std::string subtitle(const model::CrossModel& across) {
  return fmt::format("{} run{}, {} model{} ({}){}", across.runs, across.runs == 1 ? "" : "s", across.models.size(),
                     across.models.size() == 1 ? "" : "s", fmt::join(across.models, ", "),
                     across.gpus.empty() ? "" : fmt::format(", on {}", fmt::join(across.gpus, ", ")));
}

}  // namespace

std::string scaling_chart(const model::CrossModel& across, ScalingFigure figure) {
  const char* id = figure == ScalingFigure::kSol ? "scaling-sol" : "scaling-share";
  const Dimensions d = dimensions(across.op_classes);
  const PanelLayout l = layout(across, figure, d);
  if (l.facets.empty() || l.xs.empty()) {
    return fmt::format("<p class=\"note\" id=\"{}\">No runs with a batch size or a token count in the database: "
                       "tag them (sweep files do; db ingest --tag batch=N --tag tokens=N).</p>\n", id);
  }
  const double legend_h = 10 + std::ceil(static_cast<double>(l.series.size()) / kLegendColumns) * kLegendRowH;
  const double rows = std::ceil(static_cast<double>(l.facets.size()) / static_cast<double>(l.columns));
  Svg svg(id, "chart", kWidth, legend_h + rows * kPanelH,
          figure == ScalingFigure::kSol ? "SOL by op class against batch, one line per model"
                                        : "Share of kernel time by op class against batch, one line per model");
  draw_legend(svg, l);
  for (std::size_t i = 0; i < l.facets.size(); ++i) {
    Panel p = panel_at(i, legend_h, l);
    draw_frame(svg, p, l, l.facets[i].title(), figure, d.x_is_batch);
    draw_series(svg, p, l, across, l.facets[i], figure, d);
  }
  std::string out = svg.finish();
  if (l.token_counts > l.columns) {
    out += fmt::format("<p class=\"note\">{} of the {} token counts drawn; the tables have them all.</p>\n", l.columns,
                       l.token_counts);
  }
  return out;
}

std::string cross_model_html(const model::CrossModel& across, const std::string& db_name) {
  std::string body = section("sol-section", "Speed of light by operation class",
                  "SOL: the larger of the SM and the memory throughput, in % of the GPU's peak, weighted by the time of "
                  "the kernels ncu measured. One panel per op class (those with the most time), one line per model; "
                  "hover a point for its figures.",
                  scaling_chart(across, ScalingFigure::kSol));
  body += section("share-section", "Share of kernel time by operation class",
                  "The op class's share of each point's kernel time.", scaling_chart(across, ScalingFigure::kShare));
  body += section("op-class-table-section", "Operation classes at every point", "Click a column header to sort.",
                  render_table(scaling_table(across.op_classes, false, "op-class-scaling", db_name), "sortable", true));
  body += section("family-table-section", "The kernel families with the most time",
                  "The same figures per kernel family.",
                  render_table(scaling_table(across.families, true, "family-scaling", db_name), "sortable", true));
  return html_page("kernlens: across models", fmt::format("{}: {}", db_name, subtitle(across)), body);
}

std::string cross_model_markdown(const model::CrossModel& across, const std::string& db_name) {
  std::string out = fmt::format("# kernlens: across models\n\n`{}`: {}.\n\n## Operation classes at every point\n\n",
                                db_name, subtitle(across));
  append_table(out, scaling_table(across.op_classes, false, "op-class-scaling", db_name));
  out += "\n## The kernel families with the most time\n\n";
  append_table(out, scaling_table(across.families, true, "family-scaling", db_name));
  return out;
}

}  // namespace kernlens::report

#include "kernlens/report/charts.h"

#include "kernlens/analysis/ranks.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "kernlens/report/format.h"
#include "kernlens/report/svg.h"

namespace kernlens::report {
namespace {

// 1e12 -> "1T", 3e-2 -> "0.03": tick labels, short enough for an axis.
std::string tick_label(double v) {
  static constexpr std::pair<double, const char*> kPrefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [factor, prefix] : kPrefixes) {
    if (v >= factor) return fmt::format("{:g}{}", v / factor, prefix);
  }
  return fmt::format("{:g}", v);
}

// ---- roofline ----

struct RoofDot {
  std::size_t kernel;  // index into the analysis' kernels
  double intensity;    // FLOP per DRAM byte
  double flops_per_s;
  double time_ns;
};

struct Roof {
  std::string label;  // "tensor_bf16"
  double flops_per_s;
};

std::vector<RoofDot> roofline_dots(const analysis::Analysis& analysis) {
  std::vector<RoofDot> dots;
  for (std::size_t i = 0; i < analysis.kernels.size(); ++i) {
    const auto& m = analysis.kernels[i].metrics;
    auto ai = m.arithmetic_intensity();
    auto perf = m.achieved_flops_per_s();
    if (!ai || !perf || *ai <= 0 || *perf <= 0) continue;
    dots.push_back({i, *ai, *perf, analysis.agg.kernels[i].total_ns.value_or(m.time_ns)});
  }
  return dots;
}

// The compute roof of each precision the dots ran mostly on: the GPU table's peak, else the
// highest peak the kernels' own ncu metrics give.
std::vector<Roof> compute_roofs(const analysis::Analysis& analysis, const std::vector<RoofDot>& dots) {
  std::map<analysis::FlopPath, double> peak_by_path;
  for (const auto& d : dots) {
    const auto& m = analysis.kernels[d.kernel].metrics;
    if (!m.dominant_path) continue;
    std::optional<double> peak = analysis.peaks ? analysis.peaks->flops(*m.dominant_path) : std::nullopt;
    if (!peak && m.peak_flops_per_s) peak = m.peak_flops_per_s->value;
    if (peak) peak_by_path[*m.dominant_path] = std::max(peak_by_path[*m.dominant_path], *peak);
  }
  std::vector<Roof> roofs;
  for (const auto& [path, peak] : peak_by_path) roofs.push_back({std::string(analysis::path_name(path)), peak});
  std::sort(roofs.begin(), roofs.end(), [](const Roof& a, const Roof& b) { return a.flops_per_s > b.flops_per_s; });
  return roofs;
}

std::optional<double> dram_roof(const analysis::Analysis& analysis, const std::vector<RoofDot>& dots) {
  if (analysis.peaks && analysis.peaks->dram_bytes_per_s) return analysis.peaks->dram_bytes_per_s;
  std::optional<double> best;
  for (const auto& d : dots) {
    const auto& peak = analysis.kernels[d.kernel].metrics.peak_dram_bytes_per_s;
    if (peak) best = std::max(best.value_or(0), peak->value);
  }
  return best;
}

struct RoofFrame {
  LogAxis x, y;
  double top, bottom, left, right;
};

void draw_log_grid(Svg& svg, const RoofFrame& f) {
  for (double v : f.x.decades()) {
    svg.line(f.x.map(v), f.top, f.x.map(v), f.bottom, "grid");
    svg.text(f.x.map(v), f.bottom + 16, tick_label(v), "tick", "middle");
  }
  for (double v : f.y.decades()) {
    svg.line(f.left, f.y.map(v), f.right, f.y.map(v), "grid");
    svg.text(f.left - 6, f.y.map(v) + 4, tick_label(v), "tick", "end");
  }
  svg.rect(f.left, f.top, f.right - f.left, f.bottom - f.top, "frame");
  svg.text((f.left + f.right) / 2, f.bottom + 36, "Arithmetic intensity (FLOP per DRAM byte, log)", "axis-title", "middle");
  svg.text(16, (f.top + f.bottom) / 2, "Achieved FLOP/s (log)", "axis-title y-title", "middle");
}

void draw_roofs(Svg& svg, const RoofFrame& f, const std::vector<Roof>& roofs, std::optional<double> dram_bytes_per_s) {
  for (const auto& roof : roofs) {
    double ridge = dram_bytes_per_s ? roof.flops_per_s / *dram_bytes_per_s : f.x.lo;
    double x0 = f.x.map(std::max(ridge, f.x.lo));
    svg.line(x0, f.y.map(roof.flops_per_s), f.right, f.y.map(roof.flops_per_s), "roof compute-roof");
    svg.text(f.right - 4, f.y.map(roof.flops_per_s) - 6,
             fmt::format("{} {}", human_si(roof.flops_per_s, "FLOP/s"), roof.label), "roof-label", "end");
  }
  if (!dram_bytes_per_s || roofs.empty()) return;
  const double bw = *dram_bytes_per_s;
  double x_start = std::max(f.x.lo, f.y.lo / bw);
  double x_ridge = roofs.front().flops_per_s / bw;
  svg.line(f.x.map(x_start), f.y.map(bw * x_start), f.x.map(x_ridge), f.y.map(bw * x_ridge), "roof memory-roof");
  double x_label = x_start * 1.6;
  svg.text(f.x.map(x_label) + 6, f.y.map(bw * x_label) - 8, fmt::format("DRAM {}", human_si(bw, "B/s")),
           "roof-label", "start");
}

std::string dot_title(const model::Profile& profile, const analysis::Analysis& analysis, const RoofDot& d) {
  const auto& row = analysis.agg.kernels[d.kernel];
  const auto& insight = analysis.kernels[d.kernel];
  std::string title = fmt::format("{}\n{} ({} of kernel time), {} launches\n{:.3g} FLOP/byte, {}",
                                  analysis::shown_name(profile, row), human_duration_ns(d.time_ns),
                                  row.share ? human_percent(*row.share) : "-", row.launches, d.intensity,
                                  human_si(d.flops_per_s, "FLOP/s"));
  if (insight.metrics.peak_flops_per_s) {
    title += fmt::format(" ({} of peak)", human_percent(d.flops_per_s / insight.metrics.peak_flops_per_s->value));
  }
  title += fmt::format("\nbottleneck: {}", analysis::bottleneck_name(insight.verdict.kind));
  return title;
}

void draw_op_legend(Svg& svg, const std::vector<std::string>& op_classes, double x, double y) {
  svg.text(x, y, "op class", "legend-title");
  for (std::size_t i = 0; i < op_classes.size(); ++i) {
    double row_y = y + 18 * static_cast<double>(i + 1);
    svg.circle(x + 6, row_y - 4, 5, "dot op-" + op_classes[i], op_classes[i]);
    svg.text(x + 16, row_y, op_classes[i], "legend");
  }
}

// ---- stage timeline ----

struct Busy {
  std::int64_t start_ns, end_ns;
};

std::vector<Busy> kernel_intervals(const model::Profile& profile) {
  std::vector<Busy> out;
  for (const auto& l : profile.launches) {
    if (l.kind != model::LaunchKind::kKernel || !l.start_ns || !l.duration_ns || l.count != 1) continue;
    out.push_back({*l.start_ns, *l.start_ns + static_cast<std::int64_t>(std::llround(*l.duration_ns))});
  }
  return out;
}

// Share of each of `bins` equal slices of [t0, t1] that kernels kept busy (overlaps count once
// at most: the share is capped at 1).
std::vector<double> busy_per_bin(const std::vector<Busy>& intervals, std::int64_t t0, std::int64_t t1, std::size_t bins) {
  std::vector<double> busy(bins, 0.0);
  const double bin_ns = static_cast<double>(t1 - t0) / static_cast<double>(bins);
  for (const auto& iv : intervals) {
    double s = static_cast<double>(iv.start_ns - t0) / bin_ns, e = static_cast<double>(iv.end_ns - t0) / bin_ns;
    for (auto b = static_cast<std::size_t>(std::max(0.0, s)); b < bins && static_cast<double>(b) < e; ++b) {
      double overlap = std::min(e, static_cast<double>(b + 1)) - std::max(s, static_cast<double>(b));
      busy[b] += std::max(0.0, overlap);
    }
  }
  for (double& v : busy) v = std::min(v, 1.0);
  return busy;
}

std::string stage_label(const model::Profile& profile, model::StageId stage) {
  const auto& key = profile.stages[stage];
  std::string path = model::push_pop_path(key);
  if (path.empty() && !key.start_end.empty()) path = model::range_label(key.start_end.front());
  return path;
}

// ---- bars ----

constexpr std::size_t kStallColors = 8;  // CSS classes s0..s7

}  // namespace

bool roofline_drawable(const analysis::Analysis& analysis) {
  auto dots = roofline_dots(analysis);
  return !dots.empty() && !compute_roofs(analysis, dots).empty();
}

std::string roofline_chart(const model::Profile& profile, const analysis::Analysis& analysis) {
  auto dots = roofline_dots(analysis);
  auto roofs = compute_roofs(analysis, dots);
  if (dots.empty() || roofs.empty()) return "";
  auto dram = dram_roof(analysis, dots);
  double min_x = dots.front().intensity, max_x = min_x, min_y = dots.front().flops_per_s;
  for (const auto& d : dots) {
    min_x = std::min(min_x, d.intensity);
    max_x = std::max(max_x, d.intensity);
    min_y = std::min(min_y, d.flops_per_s);
  }
  if (dram) max_x = std::max(max_x, roofs.front().flops_per_s / *dram);
  constexpr double kWidth = 960, kHeight = 540, kLeft = 70, kRight = 820, kTop = 16, kBottom = 480;
  RoofFrame f{LogAxis::around(min_x / 2, max_x * 2, kLeft, kRight), LogAxis::around(min_y / 2, roofs.front().flops_per_s * 2, kBottom, kTop),
              kTop, kBottom, kLeft, kRight};
  Svg svg("roofline", "chart", kWidth, kHeight, "Roofline: achieved FLOP/s against arithmetic intensity, per kernel");
  draw_log_grid(svg, f);
  draw_roofs(svg, f, roofs, dram);
  double max_time = 0;
  for (const auto& d : dots) max_time = std::max(max_time, d.time_ns);
  std::stable_sort(dots.begin(), dots.end(), [](const RoofDot& a, const RoofDot& b) { return a.time_ns > b.time_ns; });
  std::vector<std::string> op_classes;
  for (const auto& d : dots) {
    std::string op(names::to_string(analysis.agg.families[analysis.agg.kernels[d.kernel].family].cls.op_class));
    if (std::find(op_classes.begin(), op_classes.end(), op) == op_classes.end()) op_classes.push_back(op);
    double r = 3 + 15 * std::sqrt(max_time > 0 ? d.time_ns / max_time : 0);  // area ~ time
    svg.circle(f.x.map(d.intensity), f.y.map(d.flops_per_s), r, "dot op-" + op, dot_title(profile, analysis, d));
  }
  draw_op_legend(svg, op_classes, kRight + 20, kTop + 14);
  return svg.finish();
}

std::string op_class_chart(const analysis::Analysis& analysis) {
  auto classes = time_by_op_class(analysis);
  if (classes.empty()) return "";
  constexpr double kWidth = 960, kRow = 26, kLabel = 110, kBarMax = 640;
  Svg svg("op-class-chart", "chart", kWidth, kRow * static_cast<double>(classes.size()) + 10, "Kernel time by operation class");
  double max_ns = classes.front().total_ns;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto& c = classes[i];
    double y = 5 + kRow * static_cast<double>(i);
    double w = max_ns > 0 ? kBarMax * c.total_ns / max_ns : 0;
    std::string figures = fmt::format("{} ({}), {} launches", human_duration_ns(c.total_ns), human_percent(c.share), c.launches);
    svg.text(kLabel - 8, y + 16, c.op_class, "bar-label", "end");
    svg.rect(kLabel, y + 3, std::max(w, 1.0), kRow - 8, "bar op-" + c.op_class, c.op_class + ": " + figures);
    svg.text(kLabel + std::max(w, 1.0) + 6, y + 16, figures, "bar-value");
  }
  return svg.finish();
}

namespace {

// One busy strip per GPU of each rank (analysis/ranks.h): "GPU busy" when there is one lane,
// "rank R GPU D" otherwise; timelines are never merged across GPUs.
struct GpuStrip {
  std::string label;
  std::vector<Busy> intervals;
};

std::vector<GpuStrip> gpu_strips(const model::Profile& profile) {
  const analysis::LaneMap map = analysis::map_rank_lanes(profile);
  const analysis::RankMap& ranks = map.ranks;
  const analysis::Lanes& lanes = map.lanes;
  std::vector<GpuStrip> strips(lanes.lanes.size());
  for (std::size_t k = 0; k < lanes.lanes.size(); ++k) {
    const auto& lane = lanes.lanes[k];
    strips[k].label = fmt::format("rank {} GPU {}", ranks.units[lane.unit].rank,
                                  lane.device >= 0 ? std::to_string(lane.device) : "?");
  }
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    const auto& l = profile.launches[i];
    if (l.kind != model::LaunchKind::kKernel || !l.start_ns || !l.duration_ns || l.count != 1) continue;
    strips[lanes.lane_of(i)].intervals.push_back(
        {*l.start_ns, *l.start_ns + static_cast<std::int64_t>(std::llround(*l.duration_ns))});
  }
  std::erase_if(strips, [](const GpuStrip& s) { return s.intervals.empty(); });
  if (strips.size() == 1) strips[0].label = "GPU busy";
  return strips;
}

}  // namespace

std::string timeline_chart(const model::Profile& profile) {
  auto intervals = kernel_intervals(profile);
  if (intervals.empty()) return "";
  const std::vector<GpuStrip> strips = gpu_strips(profile);
  std::int64_t t0 = intervals.front().start_ns, t1 = intervals.front().end_ns;
  for (const auto& iv : intervals) {
    t0 = std::min(t0, iv.start_ns);
    t1 = std::max(t1, iv.end_ns);
  }
  if (t1 <= t0) t1 = t0 + 1;
  std::vector<std::string> lanes;  // one per stage label, first seen first
  for (const auto& r : profile.stage_ranges) {
    std::string label = stage_label(profile, r.stage);
    if (std::find(lanes.begin(), lanes.end(), label) == lanes.end()) lanes.push_back(label);
  }
  constexpr std::size_t kMaxLanes = 8, kBins = 600;
  lanes.resize(std::min(lanes.size(), kMaxLanes));
  // Lane labels are never cut: the label column grows to the longest line (up to kLabelChars
  // characters), and a longer label keeps its leaf range whole over several lines.
  constexpr std::size_t kLabelChars = 44;
  constexpr double kCharPx = 7.2, kLinePx = 14, kWidth = 1100, kRight = 1080, kStrip = 34;
  std::vector<std::vector<std::string>> labels;
  std::size_t widest = std::string_view("GPU busy").size();
  for (const auto& strip : strips) widest = std::max(widest, strip.label.size());
  for (const auto& lane : lanes) {
    labels.push_back(lane_label_lines(lane, kLabelChars));
    for (const auto& line : labels.back()) widest = std::max(widest, display_width(line));
  }
  const double left = 16 + kCharPx * static_cast<double>(widest);
  std::vector<double> lane_y;  // each lane's top
  double y = 8;
  for (const auto& lines : labels) {
    lane_y.push_back(y);
    y += std::max(20.0, kLinePx * static_cast<double>(lines.size()) + 6);
  }
  const double strip_y = y;
  const double strips_end = strip_y + (kStrip + 6) * static_cast<double>(strips.size()) - 6;
  Svg svg("timeline", "chart", kWidth, strips_end + 34, "GPU busy and idle over the run, with the stages");
  LinearAxis x{static_cast<double>(t0), static_cast<double>(t1), left, kRight};
  for (const auto& r : profile.stage_ranges) {
    auto lane = static_cast<std::size_t>(std::find(lanes.begin(), lanes.end(), stage_label(profile, r.stage)) - lanes.begin());
    if (lane >= lanes.size()) continue;
    svg.rect(x.map(static_cast<double>(r.start_ns)), lane_y[lane], x.map(static_cast<double>(r.end_ns)) - x.map(static_cast<double>(r.start_ns)),
             16, "stage-range", fmt::format("{}: {}", lanes[lane], human_duration_ns(static_cast<double>(r.end_ns - r.start_ns))));
  }
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    svg.text_lines(left - 8, lane_y[i] + 12, labels[i], kLinePx, "lane-label", "end", lanes[i]);
  }
  const double bin_px = (kRight - left) / static_cast<double>(kBins);
  for (std::size_t k = 0; k < strips.size(); ++k) {
    const double top = strip_y + (kStrip + 6) * static_cast<double>(k);
    svg.rect(left, top, kRight - left, kStrip, "idle", strips.size() == 1 ? "GPU idle" : strips[k].label + " idle");
    auto busy = busy_per_bin(strips[k].intervals, t0, t1, kBins);
    for (std::size_t b = 0; b < kBins; ++b) {
      if (busy[b] <= 0) continue;
      svg.rect(left + bin_px * static_cast<double>(b), top, bin_px + 0.2, kStrip, "busy", "",
               fmt::format("opacity:{:.2f}", 0.15 + 0.85 * busy[b]));
    }
    svg.text(left - 8, top + 21, strips[k].label, "lane-label", "end");
  }
  for (int tick = 0; tick <= 4; ++tick) {
    double t = static_cast<double>(t0) + (static_cast<double>(t1 - t0) * tick) / 4;
    svg.text(x.map(t), strips_end + 16, human_duration_ns(t - static_cast<double>(t0)), "tick",
             tick == 0 ? "start" : tick == 4 ? "end" : "middle");
  }
  return svg.finish();
}

std::string stall_chart(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx) {
  std::vector<std::size_t> rows;
  std::vector<std::string> reasons;  // legend order: first seen
  for (std::size_t i = 0; i < analysis.kernels.size() && rows.size() < std::min<std::size_t>(ctx.top, 12); ++i) {
    const auto& stalls = analysis.kernels[i].metrics.top_stalls;
    if (stalls.empty()) continue;
    rows.push_back(i);
    for (const auto& s : stalls) {
      if (std::find(reasons.begin(), reasons.end(), s.reason) == reasons.end()) reasons.push_back(s.reason);
    }
  }
  if (rows.empty()) return "";
  // Base names are never cut: a long one wraps over lines of kLabelChars characters.
  constexpr std::size_t kLabelChars = 50;
  constexpr double kWidth = 960, kRow = 24, kLinePx = 13, kLabel = 360, kBar = 560;
  std::vector<std::vector<std::string>> labels;
  std::vector<double> row_y;
  double y = 8;
  for (std::size_t r : rows) {
    labels.push_back(lane_label_lines(analysis.agg.families[analysis.agg.kernels[r].family].cls.base_name, kLabelChars));
    row_y.push_back(y);
    y += std::max(kRow, kLinePx * static_cast<double>(labels.back().size()) + 11);
  }
  const double legend_y = y + 14;
  Svg svg("stall-chart", "chart", kWidth, legend_y + 18 * std::ceil(static_cast<double>(reasons.size()) / 4.0) + 8,
          "Top warp stall reasons of the top kernels");
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = analysis.agg.kernels[rows[r]];
    const double top = row_y[r];
    std::string name = analysis::shown_name(profile, row);
    svg.text_lines(kLabel - 8, top + 15, labels[r], kLinePx, "bar-label code", "end", name);
    svg.rect(kLabel, top + 3, kBar, kRow - 7, "stall-rest", "other reasons and issuing");
    double x = kLabel;
    for (const auto& s : analysis.kernels[rows[r]].metrics.top_stalls) {
      auto color = static_cast<std::size_t>(std::find(reasons.begin(), reasons.end(), s.reason) - reasons.begin()) % kStallColors;
      double w = kBar * std::clamp(s.share, 0.0, 1.0);
      svg.rect(x, top + 3, w, kRow - 7, fmt::format("stall s{}", color),
               fmt::format("{}\n{}: {} of the cycles between issues ({:.2f} warps per issue)", name, s.reason,
                           human_percent(s.share), s.warps_per_issue));
      x += w;
    }
  }
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    double lx = kLabel + 150 * static_cast<double>(i % 4), ly = legend_y + 18 * static_cast<double>(i / 4);
    svg.rect(lx, ly - 10, 12, 12, fmt::format("stall s{}", i % kStallColors));
    svg.text(lx + 16, ly, reasons[i], "legend");
  }
  return svg.finish();
}

}  // namespace kernlens::report

// The overlap chart of the HTML report's ranks section (charts.h).
#include <algorithm>
#include <array>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "kernlens/report/charts.h"
#include "kernlens/report/format.h"
#include "kernlens/report/svg.h"

namespace kernlens::report {
namespace {

// One bar: a rank's (or one stage of it) compute time, then its communication split into
// the part overlapped by computation on the same GPU and the exposed rest.
struct OverlapBar {
  std::string label;  // "rank 0 (waiting)", "rank 0 · prefill"
  bool stage = false;
  double compute_ns = 0, overlapped_ns = 0, exposed_ns = 0;
  double total_ns() const { return compute_ns + overlapped_ns + exposed_ns; }
};

constexpr std::size_t kStagesPerRank = 8;  // top-level stage rows drawn under each rank, first seen first

OverlapBar bar_of(std::string label, bool stage, double kernel_time_ns, const analysis::CommFigures& c) {
  return OverlapBar{std::move(label), stage, std::max(0.0, c.compute_ns(kernel_time_ns)), c.overlapped_ns,
                    c.exposed_ns()};
}

// Top-level stages only: a nested stage's time is inside its parent's bar already.
std::vector<OverlapBar> overlap_bars(const analysis::Analysis& analysis, std::size_t& stages_left_out) {
  std::set<std::string_view> top_level;
  for (const auto& s : analysis.agg.stages) {
    if (s.depth == 0) top_level.insert(s.name);
  }
  const analysis::RankAnalysis& ranks = analysis.ranks;
  std::vector<OverlapBar> bars;
  for (const auto& r : ranks.ranks) {
    std::string role(analysis::role_name(r.role));
    bars.push_back(bar_of(fmt::format("rank {}{}", r.rank, role == "-" ? "" : " (" + role + ")"), false,
                          r.kernel_time_ns, r.comm));
    std::size_t shown = 0;
    for (const auto& s : r.stages) {
      if ((s.kernel_time_ns <= 0 && s.comm.comm_ns <= 0) || !top_level.contains(s.name)) continue;
      if (shown == kStagesPerRank) {
        ++stages_left_out;
        continue;
      }
      ++shown;
      bars.push_back(bar_of(fmt::format("rank {} · {}", r.rank, s.name), true, s.kernel_time_ns, s.comm));
    }
  }
  return bars;
}

std::string bar_figures(const OverlapBar& b) {
  const double comm = b.overlapped_ns + b.exposed_ns;
  return fmt::format("compute {}, comm {} ({} exposed)", human_duration_ns(b.compute_ns), human_duration_ns(comm),
                     comm > 0 ? human_percent(b.exposed_ns / comm) : "-");
}

}  // namespace

std::string rank_overlap_chart(const analysis::Analysis& analysis) {
  if (!analysis.ranks.multi_rank()) return "";
  std::size_t left_out = 0;
  const std::vector<OverlapBar> bars = overlap_bars(analysis, left_out);
  // Labels are never cut: a long stage path wraps over lines of kLabelChars characters.
  constexpr std::size_t kLabelChars = 40;
  constexpr double kWidth = 1100, kRow = 24, kLinePx = 13, kCharPx = 7.2, kValuePx = 330;
  std::vector<std::vector<std::string>> labels;
  std::size_t widest = 0;
  for (const auto& b : bars) {
    labels.push_back(lane_label_lines(b.label, kLabelChars));
    for (const auto& line : labels.back()) widest = std::max(widest, display_width(line));
  }
  const double left = 16 + kCharPx * static_cast<double>(widest);
  const double bar_max = std::max(100.0, kWidth - left - kValuePx);
  double max_ns = 0;
  for (const auto& b : bars) max_ns = std::max(max_ns, b.total_ns());
  std::vector<double> row_y;
  double y = 26;  // below the legend
  for (const auto& lines : labels) {
    row_y.push_back(y);
    y += std::max(kRow, kLinePx * static_cast<double>(lines.size()) + 11);
  }
  Svg svg("rank-overlap", "chart", left + bar_max + kValuePx, y + (left_out ? 22 : 6),
          "Per rank: compute time, and communication overlapped by computation or exposed");
  constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kLegend = {
      {{"compute", "compute kernels"}, {"comm-overlapped", "communication under compute"}, {"comm-exposed", "communication exposed"}}};
  for (std::size_t i = 0; i < kLegend.size(); ++i) {
    const double lx = left + 230 * static_cast<double>(i);
    svg.rect(lx, 6, 12, 12, kLegend[i].first);
    svg.text(lx + 16, 16, kLegend[i].second, "legend");
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const double top = row_y[i];
    svg.text_lines(left - 8, top + 15, labels[i], kLinePx, b.stage ? "bar-label" : "bar-label rank-label", "end", b.label);
    double x = left;
    const std::array<std::tuple<double, std::string_view, std::string_view>, 3> parts = {
        {{b.compute_ns, "compute", "compute"}, {b.overlapped_ns, "comm-overlapped", "communication under compute"},
         {b.exposed_ns, "comm-exposed", "communication exposed"}}};
    for (const auto& [ns, css, what] : parts) {
      if (ns <= 0 || max_ns <= 0) continue;
      const double w = bar_max * ns / max_ns;
      svg.rect(x, top + 3, w, kRow - 8, css, fmt::format("{}\n{}: {}", b.label, what, human_duration_ns(ns)));
      x += w;
    }
    svg.text(x + 6, top + 15, bar_figures(b), "bar-value");
  }
  if (left_out) {
    svg.text(left, y + 14, fmt::format("{} more top-level stages not drawn (the first {} of each rank are)", left_out,
                                       kStagesPerRank), "tick");
  }
  return svg.finish();
}

}  // namespace kernlens::report

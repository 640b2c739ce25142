#include "kernlens/analysis/timeline.h"

#include "kernlens/analysis/ranks.h"
#include "kernlens/common/parallel_chunks.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace kernlens::analysis {

void merge_intervals(std::vector<Interval>& intervals) {
  auto by_begin = [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; };
  // A lane's kernels mostly come in start order already; the union is the same in any order.
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_begin)) std::sort(intervals.begin(), intervals.end(), by_begin);
  std::size_t out = 0;
  for (const Interval& iv : intervals) {
    if (out > 0 && iv.begin_ns <= intervals[out - 1].end_ns) {
      intervals[out - 1].end_ns = std::max(intervals[out - 1].end_ns, iv.end_ns);
    } else {
      intervals[out++] = iv;
    }
  }
  intervals.resize(out);
}

Coverage coverage(const std::vector<Interval>& busy, const std::vector<Interval>& extents) {
  Coverage c;
  std::size_t k = 0;  // first busy interval that may overlap the current extent
  for (const Interval& e : extents) {
    c.wall_ns += static_cast<double>(e.end_ns - e.begin_ns);
    while (k < busy.size() && busy[k].end_ns <= e.begin_ns) ++k;
    std::int64_t cursor = e.begin_ns;  // covered up to here
    for (std::size_t j = k; j < busy.size() && busy[j].begin_ns < e.end_ns; ++j) {
      const std::int64_t b = std::max(busy[j].begin_ns, e.begin_ns);
      const std::int64_t end = std::min(busy[j].end_ns, e.end_ns);
      if (b > cursor) {
        const auto gap = static_cast<double>(b - cursor);
        ++c.gaps.count;
        c.gaps.total_ns += gap;
        c.gaps.largest_ns = std::max(c.gaps.largest_ns, gap);
      }
      c.busy_ns += static_cast<double>(end - b);
      cursor = std::max(cursor, end);
    }
    if (cursor < e.end_ns) {
      const auto gap = static_cast<double>(e.end_ns - cursor);
      ++c.gaps.count;
      c.gaps.total_ns += gap;
      c.gaps.largest_ns = std::max(c.gaps.largest_ns, gap);
    }
  }
  return c;
}

namespace {

// The one row a range instance is: its full push/pop path, or its start/end range.
std::string instance_row(const model::StageKey& key) {
  if (!key.push_pop.empty()) return model::push_pop_path(key);
  return key.start_end.empty() ? std::string() : model::range_label(key.start_end.front());
}

std::optional<Interval> kernel_interval(const model::Launch& l) {
  if (l.kind != model::LaunchKind::kKernel || !l.start_ns || !l.duration_ns) return std::nullopt;
  return Interval{*l.start_ns, *l.start_ns + std::llround(*l.duration_ns)};
}

}  // namespace

namespace {

void add_coverage(StageRow& row, const Coverage& c) {
  row.wall_ns = row.wall_ns.value_or(0) + c.wall_ns;
  row.busy_ns = row.busy_ns.value_or(0) + c.busy_ns;
  GapStats g = row.gaps.value_or(GapStats{});
  g.count += c.gaps.count;
  g.total_ns += c.gaps.total_ns;
  g.largest_ns = std::max(g.largest_ns, c.gaps.largest_ns);
  row.gaps = g;
}

// One lane's figures for a row: its kernels inside the extents (or their own span).
Coverage lane_coverage(std::vector<Interval> kernels, std::vector<Interval> spans) {
  merge_intervals(kernels);
  if (spans.empty() && !kernels.empty()) spans.push_back(Interval{kernels.front().begin_ns, kernels.back().end_ns});
  merge_intervals(spans);
  return coverage(kernels, spans);
}

using RowIntervals = std::unordered_map<std::string, std::vector<Interval>>;

}  // namespace

// Each lane (one GPU of one rank, ranks.h) is its own timeline: a row's figures are the sums
// of its lanes' figures, so two GPUs busy half the time each are busy half the time, not all
// of it. A lane takes the stage extents of its input.
void add_timeline_figures(const model::Profile& profile, Aggregate& agg, const LaneMap* given) {
  std::optional<LaneMap> own;
  const LaneMap& mapped = given_or_mapped(profile, given, own);
  const RankMap& ranks = mapped.ranks;
  const Lanes& lanes = mapped.lanes;
  const StageStrings stage_rows = intern_stage_strings(profile, stage_row_names);
  // Each lane's kernels as launch indices (4 bytes, not a 16-byte interval: a launch is in
  // a row per enclosing range), all of them and by row id; intervals one row at a time.
  std::vector<std::unordered_map<std::uint32_t, std::vector<std::uint32_t>>> busy(lanes.lanes.size());
  std::vector<std::vector<std::uint32_t>> all(lanes.lanes.size());
  bool any = false;
  // Launches come in runs of one lane and stage: the rows' lists are looked up once a run
  // (references to an unordered_map's values stay valid as it grows).
  std::size_t run_lane = SIZE_MAX;
  model::StageId run_stage = 0;
  std::vector<std::vector<std::uint32_t>*> run_rows;
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    if (!kernel_interval(profile.launches[i])) continue;
    any = true;
    const auto lane = static_cast<std::size_t>(lanes.lane_of_launch[i]);
    const auto index = static_cast<std::uint32_t>(i);
    all[lane].push_back(index);
    const model::StageId stage = profile.launches[i].stage;
    if (lane != run_lane || stage != run_stage) {
      run_lane = lane;
      run_stage = stage;
      run_rows.clear();
      for (std::uint32_t row : stage_rows.of_stage[stage]) run_rows.push_back(&busy[lane][row]);
    }
    for (auto* row : run_rows) row->push_back(index);
  }
  auto intervals = [&](const std::vector<std::uint32_t>* launches) {
    std::vector<Interval> out;
    if (!launches) return out;
    out.reserve(launches->size());
    for (std::uint32_t i : *launches) out.push_back(*kernel_interval(profile.launches[i]));
    return out;
  };
  if (!any) return;
  std::unordered_map<std::uint32_t, RowIntervals> extents;  // by input
  for (const auto& r : profile.stage_ranges) {
    if (r.stage < profile.stages.size() && r.end_ns >= r.start_ns) {
      extents[r.input][instance_row(profile.stages[r.stage])].push_back(Interval{r.start_ns, r.end_ns});
    }
  }
  // The first lane of each input takes the input's extents of a row no lane of it ran in.
  std::unordered_map<std::uint32_t, std::size_t> first_lane;
  for (std::size_t k = 0; k < lanes.lanes.size(); ++k) first_lane.try_emplace(ranks.units[lanes.lanes[k].unit].input, k);

  auto add_row_figures = [&](StageRow& row) {
    for (const auto& [input, rows] : extents) {
      if (auto e = rows.find(row.name); e != rows.end()) row.instances = row.instances.value_or(0) + e->second.size();
    }
    const auto id = stage_rows.ids.find(row.name);
    for (std::size_t k = 0; k < lanes.lanes.size(); ++k) {
      const std::uint32_t input = ranks.units[lanes.lanes[k].unit].input;
      const std::vector<std::uint32_t>* kernels = nullptr;
      if (id != stage_rows.ids.end()) {
        if (auto b = busy[k].find(id->second); b != busy[k].end()) kernels = &b->second;
      }
      const std::vector<Interval>* spans = nullptr;
      if (auto in = extents.find(input); in != extents.end()) {
        if (auto e = in->second.find(row.name); e != in->second.end()) spans = &e->second;
      }
      if (!kernels && !(spans && first_lane.at(input) == k)) continue;
      add_coverage(row, lane_coverage(intervals(kernels), spans ? *spans : std::vector<Interval>{}));
    }
  };
  StageRow whole;
  whole.name = whole.label = std::string(kWholeRunStage);
  for (const auto& l : profile.launches) {
    if (l.kind == model::LaunchKind::kKernel) whole.launches += l.count;
  }
  if (agg.totals.kernel_time_ns) {
    whole.kernel_time_ns = *agg.totals.kernel_time_ns;
    whole.has_kernel_time = true;
  }
  auto add_whole_figures = [&] {
    for (auto& lane : all) {
      if (!lane.empty()) add_coverage(whole, lane_coverage(intervals(&lane), {}));
    }
  };
  // Rows are independent: each is worked out whole by one thread, as threads come free (a row
  // of a million-kernel export unions hundreds of thousands of intervals), so the figures are
  // the same on any number of threads. A thread is worth starting for a few thousand kernels.
  std::size_t kernels = 0;
  for (const auto& lane : all) kernels += lane.size();
  const std::size_t rows = agg.stages.size() + 1;  // and the whole run
  const std::size_t threads = std::min<std::size_t>({default_threads(), rows, 1 + kernels / 4096});
  std::atomic<std::size_t> next{0};
  run_parallel(std::max<std::size_t>(threads, 1), [&](std::size_t) {
    for (std::size_t r; (r = next.fetch_add(1)) < rows;) {
      if (r < agg.stages.size()) add_row_figures(agg.stages[r]);
      else add_whole_figures();
    }
  });
  agg.stages.insert(agg.stages.begin(), std::move(whole));
}

}  // namespace kernlens::analysis

#include "kernlens/analysis/timeline.h"

#include "kernlens/analysis/ranks.h"
#include "kernlens/common/parallel_chunks.h"

#include <algorithm>
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

void CoverageSweep::gap(std::int64_t ns) {
  const auto g = static_cast<double>(ns);
  ++c_.gaps.count;
  c_.gaps.total_ns += g;
  c_.gaps.largest_ns = std::max(c_.gaps.largest_ns, g);
}

CoverageSweep::CoverageSweep(const std::vector<Interval>* extents) : extents_(extents) {
  if (extents_ && !extents_->empty()) cursor_ = extents_->front().begin_ns;
}

// Each busy interval credits the extents it overlaps (begin before the extent's end, end after
// its begin), clipped to them; an extent is done once an interval reaches its end.
void CoverageSweep::add(const Interval& b) {
  if (!extents_) {  // the intervals' own span: from the first begin to the last end
    if (!any_) first_begin_ = b.begin_ns;
    else gap(b.begin_ns - last_end_);
    any_ = true;
    c_.busy_ns += static_cast<double>(b.end_ns - b.begin_ns);
    last_end_ = b.end_ns;
    return;
  }
  const std::vector<Interval>& e = *extents_;
  while (k_ < e.size() && e[k_].end_ns <= b.begin_ns) close_extent();
  while (k_ < e.size() && e[k_].begin_ns < b.end_ns) {
    const std::int64_t begin = std::max(b.begin_ns, e[k_].begin_ns);
    const std::int64_t end = std::min(b.end_ns, e[k_].end_ns);
    if (begin > cursor_) gap(begin - cursor_);
    c_.busy_ns += static_cast<double>(end - begin);
    cursor_ = std::max(cursor_, end);
    if (b.end_ns < e[k_].end_ns) break;
    close_extent();
  }
}

void CoverageSweep::close_extent() {
  const Interval& e = (*extents_)[k_];
  c_.wall_ns += static_cast<double>(e.end_ns - e.begin_ns);
  if (cursor_ < e.end_ns) gap(e.end_ns - cursor_);
  if (++k_ < extents_->size()) cursor_ = (*extents_)[k_].begin_ns;
}

Coverage CoverageSweep::finish() {
  if (!extents_) {
    if (any_) c_.wall_ns = static_cast<double>(last_end_ - first_begin_);
    return c_;
  }
  while (k_ < extents_->size()) close_extent();
  return c_;
}

void BusyUnion::add(const Interval& iv) {
  if (open_ && iv.begin_ns <= current_.end_ns) {
    current_.end_ns = std::max(current_.end_ns, iv.end_ns);
    return;
  }
  if (open_) sweep_.add(current_);
  current_ = iv;
  open_ = true;
}

Coverage BusyUnion::finish() {
  if (open_) sweep_.add(current_);
  open_ = false;
  return sweep_.finish();
}

Coverage coverage(const std::vector<Interval>& busy, const std::vector<Interval>& extents) {
  CoverageSweep sweep(&extents);
  for (const Interval& b : busy) sweep.add(b);
  return sweep.finish();
}

std::optional<Interval> launch_interval(const model::Launch& l) {
  if (!l.start_ns || !l.duration_ns) return std::nullopt;
  return Interval{*l.start_ns, *l.start_ns + std::llround(*l.duration_ns)};
}

namespace {

// The one row a range instance is: its full push/pop path, or its start/end range.
std::string instance_row(const model::StageKey& key) {
  if (!key.push_pop.empty()) return model::push_pop_path(key);
  return key.start_end.empty() ? std::string() : model::range_label(key.start_end.front());
}

std::optional<Interval> kernel_interval(const model::Launch& l) {
  if (l.kind != model::LaunchKind::kKernel) return std::nullopt;
  return launch_interval(l);
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

// The kernel launches with a time in an order that has each lane's kernels by start: nullopt
// when the launches' own order already does (a timeline's usual order: no list), else the
// launches' indices sorted by start.
std::optional<std::vector<std::uint32_t>> kernels_by_start(const model::Profile& profile, const Lanes& lanes) {
  std::vector<std::int64_t> last(lanes.lanes.size(), INT64_MIN);
  bool in_order = true;
  for (std::size_t i = 0; i < profile.launches.size() && in_order; ++i) {
    auto iv = kernel_interval(profile.launches[i]);
    if (!iv) continue;
    std::int64_t& lane_last = last[static_cast<std::size_t>(lanes.lane_of_launch[i])];
    in_order = iv->begin_ns >= lane_last;
    lane_last = iv->begin_ns;
  }
  if (in_order) return std::nullopt;
  std::vector<std::uint32_t> order;
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    if (kernel_interval(profile.launches[i])) order.push_back(static_cast<std::uint32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return *profile.launches[a].start_ns < *profile.launches[b].start_ns;
  });
  return order;
}

// Calls visit(i, interval) for each kernel launch with a time, in `order` (kernels_by_start).
template <class Visit>
void for_each_kernel_in(const model::Profile& profile, const std::optional<std::vector<std::uint32_t>>& order,
                        Visit visit) {
  if (!order) {
    for (std::size_t i = 0; i < profile.launches.size(); ++i) {
      if (auto iv = kernel_interval(profile.launches[i])) visit(i, *iv);
    }
    return;
  }
  for (std::uint32_t i : *order) visit(i, *kernel_interval(profile.launches[i]));
}

std::vector<std::optional<Coverage>> finish_lanes(std::vector<BusyUnion>& unions, const std::vector<char>& any) {
  std::vector<std::optional<Coverage>> out(unions.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (any[k]) out[k] = unions[k].finish();
  }
  return out;
}

}  // namespace

StageExtents stage_extents(const model::Profile& profile) {
  StageExtents extents;
  for (const auto& r : profile.stage_ranges) {
    if (r.stage < profile.stages.size() && r.end_ns >= r.start_ns) {
      RowExtents& row = extents[r.input][instance_row(profile.stages[r.stage])];
      ++row.instances;
      row.merged.push_back(Interval{r.start_ns, r.end_ns});
    }
  }
  for (auto& [input, rows] : extents) {
    for (auto& [name, row] : rows) merge_intervals(row.merged);
  }
  return extents;
}

std::vector<std::optional<Coverage>> lane_coverages(const model::Profile& profile, const Lanes& lanes,
                                                    const Aggregate& agg) {
  if (agg.lane_coverages.size() == lanes.lanes.size()) return agg.lane_coverages;
  std::vector<BusyUnion> unions(lanes.lanes.size(), BusyUnion(nullptr));
  std::vector<char> any(lanes.lanes.size(), 0);
  for_each_kernel_in(profile, kernels_by_start(profile, lanes), [&](std::size_t i, const Interval& iv) {
    const auto lane = static_cast<std::size_t>(lanes.lane_of_launch[i]);
    any[lane] = 1;
    unions[lane].add(iv);
  });
  return finish_lanes(unions, any);
}

// Each lane (one GPU of one rank, ranks.h) is its own timeline: a row's figures are the sums
// of its lanes' figures, so two GPUs busy half the time each are busy half the time, not all
// of it. A lane takes the stage extents of its input. A pass over the kernels feeds the union
// of every (lane, row) and of every lane as a whole, kernel by kernel: no list of intervals,
// whose million kernels would be 16 bytes each in every row they are in. The rows are cut
// into parts (row id modulo the parts), each swept on a thread of its own over every kernel in
// the same order, so each union sees what one pass would show it: the same figures on any
// number of threads.
struct TimelineSweep::State {
  // A row's union in a lane: inside the row's extents in the lane's input, else the own span.
  using RowsOfLane = std::vector<std::unordered_map<std::uint32_t, BusyUnion>>;

  std::optional<LaneMap> own;
  const LaneMap& mapped;
  const StageStrings stage_rows;
  const StageExtents extents;
  std::vector<RowsOfLane> parts;       // part p holds the rows whose id is p modulo the parts
  std::vector<BusyUnion> whole_lanes;  // each lane as a whole (the rank analysis reads them), by part 0
  std::vector<char> lane_any;
  bool any = false;

  State(const model::Profile& profile, const LaneMap* given)
      : mapped(given_or_mapped(profile, given, own)),
        stage_rows(intern_stage_strings(profile, stage_row_names)),
        extents(stage_extents(profile)),
        whole_lanes(mapped.lanes.lanes.size(), BusyUnion(nullptr)),
        lane_any(mapped.lanes.lanes.size(), 0) {}

  std::uint32_t input_of_lane(std::size_t k) const {
    return mapped.ranks.units[mapped.lanes.lanes[k].unit].input;
  }
  const RowExtents* extents_of(std::size_t lane, const std::string& row) const {
    auto in = extents.find(input_of_lane(lane));
    if (in == extents.end()) return nullptr;
    auto e = in->second.find(row);
    return e == in->second.end() ? nullptr : &e->second;
  }
  BusyUnion* row_union(std::size_t lane, std::uint32_t row) {
    auto& unions = parts[row % parts.size()][lane];
    auto it = unions.find(row);
    return it == unions.end() ? nullptr : &it->second;
  }

  // A part for every 8,192 kernels, up to 8 parts: each part reads every kernel (a pass over a
  // million is a few milliseconds), so more parts than rows' work to share only cost passes.
  static constexpr std::size_t kKernelsPerPart = 8192, kMostParts = 8;

  void sweep(const model::Profile& profile) {
    const auto order = kernels_by_start(profile, mapped.lanes);
    const std::size_t kernels = order ? order->size() : profile.launches.size();
    const std::size_t n = std::clamp<std::size_t>(std::min({std::size_t{default_threads()}, kMostParts, 1 + kernels / kKernelsPerPart}),
                                                  1, std::max<std::size_t>(1, stage_rows.names.size()));
    parts.assign(n, RowsOfLane(mapped.lanes.lanes.size()));
    run_parallel(n, [&](std::size_t p) { sweep_part(profile, order, p); });
  }

  // Part p's rows over every kernel in order; part 0 also each lane as a whole.
  void sweep_part(const model::Profile& profile, const std::optional<std::vector<std::uint32_t>>& order, std::size_t p) {
    const Lanes& lanes = mapped.lanes;
    RowsOfLane& rows_of_lane = parts[p];
    // Launches come in runs of one lane and stage: the rows' unions are looked up once a run
    // (references to an unordered_map's values stay valid as it grows).
    std::size_t run_lane = SIZE_MAX;
    model::StageId run_stage = 0;
    std::vector<BusyUnion*> run_rows;
    for_each_kernel_in(profile, order, [&](std::size_t i, const Interval& iv) {
      const auto lane = static_cast<std::size_t>(lanes.lane_of_launch[i]);
      if (p == 0) {
        any = true;
        lane_any[lane] = 1;
        whole_lanes[lane].add(iv);
      }
      const model::StageId stage = profile.launches[i].stage;
      if (lane != run_lane || stage != run_stage) {
        run_lane = lane;
        run_stage = stage;
        run_rows.clear();
        for (std::uint32_t row : stage_rows.of_stage[stage]) {
          if (row % parts.size() != p) continue;
          auto it = rows_of_lane[lane].find(row);
          if (it == rows_of_lane[lane].end()) {
            const RowExtents* e = extents_of(lane, stage_rows.names[row]);
            it = rows_of_lane[lane].emplace(row, BusyUnion(e ? &e->merged : nullptr)).first;
          }
          run_rows.push_back(&it->second);
        }
      }
      for (BusyUnion* row : run_rows) row->add(iv);
    });
  }

  void add_figures(const model::Profile& profile, Aggregate& agg) {
    const Lanes& lanes = mapped.lanes;
    agg.lane_coverages = finish_lanes(whole_lanes, lane_any);
    if (!any) return;
    // The first lane of each input takes the input's extents of a row no lane of it ran in.
    std::unordered_map<std::uint32_t, std::size_t> first_lane;
    for (std::size_t k = 0; k < lanes.lanes.size(); ++k) first_lane.try_emplace(input_of_lane(k), k);
    for (StageRow& row : agg.stages) {
      for (const auto& [input, rows] : extents) {
        if (auto e = rows.find(row.name); e != rows.end()) row.instances = row.instances.value_or(0) + e->second.instances;
      }
      const auto id = stage_rows.ids.find(row.name);
      for (std::size_t k = 0; k < lanes.lanes.size(); ++k) {
        if (id != stage_rows.ids.end()) {
          if (BusyUnion* u = row_union(k, id->second)) {
            add_coverage(row, u->finish());
            continue;
          }
        }
        const RowExtents* e = extents_of(k, row.name);
        if (e && first_lane.at(input_of_lane(k)) == k) add_coverage(row, coverage({}, e->merged));
      }
    }
    StageRow whole;
    whole.name = whole.label = std::string(kWholeRunStage);
    for (const auto& l : profile.launches) {
      if (l.kind == model::LaunchKind::kKernel) whole.launches += l.count;
    }
    if (agg.totals.kernel_time_ns) {
      whole.kernel_time_ns = *agg.totals.kernel_time_ns;
      whole.has_kernel_time = true;
    }
    for (const auto& lane : agg.lane_coverages) {
      if (lane) add_coverage(whole, *lane);
    }
    agg.stages.insert(agg.stages.begin(), std::move(whole));
  }
};

TimelineSweep::TimelineSweep(const model::Profile& profile, const LaneMap* lanes)
    : profile_(profile), state_(std::make_unique<State>(profile, lanes)) {
  state_->sweep(profile);
}

TimelineSweep::~TimelineSweep() = default;

void TimelineSweep::add_figures(Aggregate& agg) { state_->add_figures(profile_, agg); }

std::size_t TimelineSweep::parts() const { return state_->parts.size(); }

}  // namespace kernlens::analysis

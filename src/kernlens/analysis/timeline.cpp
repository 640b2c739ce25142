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

void add_gaps(GapStats& into, const GapStats& g) {
  into.count += g.count;
  into.total_ns += g.total_ns;
  into.largest_ns = std::max(into.largest_ns, g.largest_ns);
}

void add_coverage(Coverage& into, const Coverage& c) {
  into.busy_ns += c.busy_ns;
  into.wall_ns += c.wall_ns;
  add_gaps(into.gaps, c.gaps);
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

CoverageSweep::CoverageSweep(const std::vector<Interval>* extents, std::int64_t first_begin, std::int64_t last_end)
    : extents_(extents), any_(true), first_begin_(first_begin), last_end_(last_end) {
  if (!extents_) return;
  // add() closes every extent that ends by the interval's end and leaves the cursor at that
  // end, or at the next extent's begin when it lies after it.
  // The extents are merged (sorted, apart), so their ends rise: a binary search, not a walk
  // from the first (a stretch a thread at 16 threads walked 7 M extents in all, 8 M kernels).
  const std::vector<Interval>& e = *extents_;
  k_ = static_cast<std::size_t>(
      std::partition_point(e.begin(), e.end(), [&](const Interval& x) { return x.end_ns <= last_end; }) - e.begin());
  if (k_ < e.size()) cursor_ = std::max(last_end, e[k_].begin_ns);
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
  add_gaps(g, c.gaps);
  row.gaps = g;
}

// The kernel launches with a time in an order that has each lane's kernels by start: nullopt
// when the launches' own order already does (a timeline's usual order: no list), else the
// launches' indices sorted by start.
// Whether each lane's kernels come by start, checked in chunks on every thread (a serial pass
// over a million launches before the sweep): each chunk in order within itself, and each
// lane's first start in a chunk no earlier than its last start in the chunks before.
bool kernels_come_by_start(const model::Profile& profile, const Lanes& lanes) {
  const std::size_t n = profile.launches.size(), chunks = std::clamp<std::size_t>(n / 65536, 1, default_threads());
  struct alignas(kThreadStateAlign) Chunk {  // in_order is written at every launch
    bool in_order = true;
    std::vector<std::int64_t> first, last;  // by lane: its first and last start in the chunk
    std::vector<char> any;                  // by lane: whether the chunk has a kernel of it
  };
  std::vector<Chunk> seen(chunks);
  run_in_chunks(n, chunks, [&](std::size_t c, std::size_t begin, std::size_t end) {
    Chunk& chunk = seen[c];
    chunk.first.assign(lanes.lanes.size(), INT64_MAX);
    chunk.last.assign(lanes.lanes.size(), INT64_MIN);
    chunk.any.assign(lanes.lanes.size(), 0);
    for (std::size_t i = begin; i < end && chunk.in_order; ++i) {
      auto iv = kernel_interval(profile.launches[i]);
      if (!iv) continue;
      const auto lane = lanes.lane_of(i);
      chunk.in_order = iv->begin_ns >= chunk.last[lane];
      chunk.last[lane] = iv->begin_ns;
      if (!chunk.any[lane]) chunk.first[lane] = iv->begin_ns;
      chunk.any[lane] = 1;
    }
  });
  std::vector<std::int64_t> last(lanes.lanes.size(), INT64_MIN);
  for (const Chunk& chunk : seen) {
    if (!chunk.in_order) return false;
    for (std::size_t lane = 0; lane < last.size(); ++lane) {
      if (!chunk.any[lane]) continue;
      if (chunk.first[lane] < last[lane]) return false;
      last[lane] = chunk.last[lane];
    }
  }
  return true;
}

// The indices of the kernel launches with a time, sorted by start.
std::vector<std::uint32_t> sorted_by_start(const model::Profile& profile) {
  std::vector<std::uint32_t> order;
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    if (kernel_interval(profile.launches[i])) order.push_back(static_cast<std::uint32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return *profile.launches[a].start_ns < *profile.launches[b].start_ns;
  });
  return order;
}

std::optional<std::vector<std::uint32_t>> kernels_by_start(const model::Profile& profile, const Lanes& lanes) {
  if (kernels_come_by_start(profile, lanes)) return std::nullopt;
  return sorted_by_start(profile);
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
  // Each (input, stage)'s row, named and looked up once: ranges are many (28,000 in a million
  // kernels' export) and stages few, and naming a row for each range took 2 ms of a serial step.
  std::unordered_map<std::uint64_t, RowExtents*> row_of;
  for (const auto& r : profile.stage_ranges) {
    if (r.stage < profile.stages.size() && r.end_ns >= r.start_ns) {
      auto [it, added] = row_of.try_emplace((std::uint64_t{r.input} << 32) | r.stage, nullptr);
      if (added) it->second = &extents[r.input][instance_row(profile.stages[r.stage])];  // values stay put
      RowExtents& row = *it->second;
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
    const auto lane = lanes.lane_of(i);
    any[lane] = 1;
    unions[lane].add(iv);
  });
  return finish_lanes(unions, any);
}

// Each lane (one GPU of one rank, ranks.h) is its own timeline: a row's figures are the sums
// of its lanes' figures, so two GPUs busy half the time each are busy half the time, not all
// of it. A lane takes the stage extents of its input. A pass over the kernels feeds the union
// of every (lane, row) and of every lane as a whole, kernel by kernel: no list of intervals,
// whose million kernels would be 16 bytes each in every row they are in.
//
// The kernels, in the sweep's order, are cut into stretches swept on a thread each, twice.
// The first pass finds each union's largest end in each stretch: the end of the interval still
// open when the next stretch begins (its kernels come by begin); run in the launches' own
// order, it also finds whether that order has each lane's kernels by start, and where it does
// not, the kernels are sorted and the pass run again. The second merges each
// stretch's intervals into a sweep of its own, the kernels that overlap the interval open
// before it only extending that one, and holds back its last interval, which later stretches
// may extend too. Then each union's held-back intervals go, with their whole ends, into the
// sweeps that held them back: every interval reaches one sweep, in order, and each sweep
// begins in the state the one before it ends in (CoverageSweep's resuming constructor). Its
// figures are sums of whole nanoseconds, exact in any grouping below 2^53, so they are the
// figures of one pass, on any number of threads; where the timeline spans 2^52 ns or more,
// one stretch is swept.
struct TimelineSweep::State {
  static constexpr std::uint32_t kWholeLane = UINT32_MAX;  // the row of a lane's own union
  static std::uint64_t key_of(std::size_t lane, std::uint32_t row) { return (std::uint64_t{lane} << 32) | row; }

  // What one stretch of the kernels holds of one union.
  struct Stretch {
    const std::vector<Interval>* extents = nullptr;  // the row's extents in the lane's input, or own span
    bool seen = false;                 // pass 1: a kernel of the union is in the stretch
    std::int64_t first_begin = 0, largest_end = 0;
    // A lane's own union: whether the lane's kernels in the stretch come by start, and the
    // last one's start (pass_one_saw_kernels_by_start).
    bool by_start = true;
    std::int64_t last_begin = INT64_MIN;
    std::optional<std::int64_t> open_end;  // pass 2: the end of the interval open before the stretch
    std::int64_t union_first_begin = 0;    // the union's first begin, in any stretch
    bool own = false;                      // an interval begins in the stretch
    Interval held{0, 0};                   // its last one, not yet in its sweep
    std::optional<CoverageSweep> sweep;
  };
  using Stretches = std::unordered_map<std::uint64_t, Stretch>;

  std::optional<LaneMap> own;
  const LaneMap& mapped;
  const StageStrings stage_rows;
  const StageExtents extents;
  std::vector<Stretches> stretches;
  std::unordered_map<std::uint64_t, Coverage> coverages;  // by union, once swept
  bool any = false;

  State(const model::Profile& profile, const LaneMap* given)
      : mapped(given_or_mapped(profile, given, own)),
        stage_rows(intern_stage_strings(profile, stage_row_names)),
        extents(stage_extents(profile)) {}

  std::uint32_t input_of_lane(std::size_t k) const {
    return mapped.ranks.units[mapped.lanes.lanes[k].unit].input;
  }
  const RowExtents* extents_of(std::size_t lane, const std::string& row) const {
    auto in = extents.find(input_of_lane(lane));
    if (in == extents.end()) return nullptr;
    auto e = in->second.find(row);
    return e == in->second.end() ? nullptr : &e->second;
  }
  const Coverage* coverage_of(std::size_t lane, std::uint32_t row) const {
    auto it = coverages.find(key_of(lane, row));
    return it == coverages.end() ? nullptr : &it->second;
  }

  // A stretch for every 4,096 kernels at least, taken by the threads as they come free
  // (stretches_for_threads): the sweep runs beside the rows' pass, and with one stretch a
  // thread its last stretches ended on a few CPUs after the rows' pass had ended.
  static constexpr std::size_t kLeastKernelsPerStretch = 4096;
  static constexpr std::int64_t kExactSpanNs = std::int64_t{1} << 52;

  static std::size_t stretches_for(std::size_t items) {
    return stretches_for_threads(items, kLeastKernelsPerStretch, default_threads());
  }
  template <class Work>
  void in_stretches(std::size_t items, const Work& work) {
    run_in_chunks_on(items, stretches.size(), default_threads(), work);
  }

  void sweep(const model::Profile& profile) {
    std::optional<std::vector<std::uint32_t>> order;
    std::size_t items = profile.launches.size(), n = stretches_for(items);
    stretches.assign(n, Stretches());
    if (n > 1) {
      // Pass 1 in the launches' own order checks that order too (a timeline's usual one: each
      // lane's kernels by start); a separate check was a third pass over a million launches.
      find_largest_ends(profile, order, items);
      if (!pass_one_saw_kernels_by_start()) {
        order = sorted_by_start(profile);
        stretches.assign(n = stretches_for(items = order->size()), Stretches());
        if (n > 1) find_largest_ends(profile, order, items);
      }
    } else {
      order = kernels_by_start(profile, mapped.lanes);
      if (order) items = order->size();
    }
    if (n > 1) {  // one stretch has nothing open before it
      if (span_ns() < kExactSpanNs) {
        hand_on_open_ends();
      } else {
        stretches.assign(n = 1, Stretches());
      }
    }
    in_stretches(items, [&](std::size_t c, std::size_t begin, std::size_t end) {
      for_each_kernel_of_stretch(profile, order, begin, end, c, merge_into_stretch);
    });
    finish_unions();
  }

  // Pass 1, in each stretch.
  void find_largest_ends(const model::Profile& profile, const std::optional<std::vector<std::uint32_t>>& order,
                         std::size_t items) {
    in_stretches(items, [&](std::size_t c, std::size_t begin, std::size_t end) {
      for_each_kernel_of_stretch(profile, order, begin, end, c, [](Stretch& s, const Interval& iv) {
        if (!s.seen) {
          s.seen = true;
          s.first_begin = iv.begin_ns;
          s.largest_end = iv.end_ns;
        }
        s.largest_end = std::max(s.largest_end, iv.end_ns);
      });
    });
  }

  // The unions' span, first begin to last end, with the stages' extents.
  std::int64_t span_ns() const {
    std::int64_t first = INT64_MAX, last = INT64_MIN;
    for (const Stretches& unions : stretches) {
      for (const auto& [key, s] : unions) {
        first = std::min(first, s.first_begin);
        last = std::max(last, s.largest_end);
      }
    }
    for (const auto& [input, rows] : extents) {
      for (const auto& [name, row] : rows) {
        if (row.merged.empty()) continue;
        first = std::min(first, row.merged.front().begin_ns);
        last = std::max(last, row.merged.back().end_ns);
      }
    }
    if (last <= first) return 0;
    return static_cast<std::int64_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(last) - static_cast<std::uint64_t>(first), INT64_MAX));
  }

  // Calls visit(stretch, interval) for each union of the kernels of items [begin, end) of the
  // order, in order: the kernel's lane as a whole and each stage row of its lane. A run of
  // kernels of one lane and stage that overlap or touch goes to its unions as one interval,
  // merged once for all of them (each union merges by the same rule, BusyUnion's).
  template <class Visit>
  void for_each_kernel_of_stretch(const model::Profile& profile, const std::optional<std::vector<std::uint32_t>>& order,
                                  std::size_t begin, std::size_t end, std::size_t c, Visit visit) {
    Stretches& unions = stretches[c];
    // Launches come in runs of one lane and stage: the unions are looked up once a run
    // (references to an unordered_map's values stay valid as it grows).
    std::size_t run_lane = SIZE_MAX;
    model::StageId run_stage = 0;
    std::vector<Stretch*> run_unions;
    Interval merged{0, 0};  // the run's kernels so far that overlap or touch, not yet visited
    bool open = false;
    auto flush = [&] {
      if (open) {
        for (Stretch* s : run_unions) visit(*s, merged);
      }
      open = false;
    };
    auto stretch_of = [&](std::size_t lane, std::uint32_t row) -> Stretch* {
      auto [it, added] = unions.try_emplace(key_of(lane, row));
      if (added && row != kWholeLane) {
        const RowExtents* e = extents_of(lane, stage_rows.names[row]);
        it->second.extents = e ? &e->merged : nullptr;
      }
      return &it->second;
    };
    auto kernel = [&](std::size_t i, const Interval& iv) {
      const auto lane = mapped.lanes.lane_of(i);
      const model::StageId stage = profile.launches[i].stage;
      if (lane != run_lane || stage != run_stage) {
        flush();
        run_lane = lane;
        run_stage = stage;
        run_unions.assign(1, stretch_of(lane, kWholeLane));
        for (std::uint32_t row : stage_rows.of_stage[stage]) run_unions.push_back(stretch_of(lane, row));
      }
      Stretch& whole = *run_unions.front();
      whole.by_start = whole.by_start && iv.begin_ns >= whole.last_begin;
      whole.last_begin = iv.begin_ns;
      if (open && iv.begin_ns <= merged.end_ns) {
        merged.end_ns = std::max(merged.end_ns, iv.end_ns);
        return;
      }
      flush();
      merged = iv;
      open = true;
    };
    if (order) {
      for (std::size_t k = begin; k < end; ++k) kernel((*order)[k], *kernel_interval(profile.launches[(*order)[k]]));
    } else {
      for (std::size_t i = begin; i < end; ++i) {
        if (auto iv = kernel_interval(profile.launches[i])) kernel(i, *iv);
      }
    }
    flush();
  }

  // After pass 1: whether each lane's kernels came by start, within each stretch and from one
  // stretch to the next.
  bool pass_one_saw_kernels_by_start() const {
    std::unordered_map<std::uint64_t, std::int64_t> last_begin;  // by lane: in the stretches so far
    for (const Stretches& unions : stretches) {
      for (const auto& [key, s] : unions) {
        if (static_cast<std::uint32_t>(key) != kWholeLane) continue;
        if (!s.by_start) return false;
        auto [last, first] = last_begin.try_emplace(key, s.last_begin);
        if (!first && s.first_begin < last->second) return false;
        last->second = s.last_begin;
      }
    }
    return true;
  }

  // Each union's largest end before each stretch, and its first begin, handed to the stretch.
  void hand_on_open_ends() {
    std::unordered_map<std::uint64_t, Stretch> before;  // seen, first_begin, largest_end so far
    for (Stretches& unions : stretches) {
      for (auto& [key, s] : unions) {
        auto [prior, first] = before.try_emplace(key, s);
        if (!first) {
          s.open_end = prior->second.largest_end;
          prior->second.largest_end = std::max(prior->second.largest_end, s.largest_end);
        }
      }
    }
    for (Stretches& unions : stretches) {
      for (auto& [key, s] : unions) s.union_first_begin = before.at(key).first_begin;
    }
  }

  // Pass 2 for one kernel of one union: extend the interval open before the stretch, or
  // merge into the stretch's own intervals (BusyUnion's rule: overlapping or touching).
  static void merge_into_stretch(Stretch& s, const Interval& iv) {
    if (!s.own) {
      if (s.open_end && iv.begin_ns <= *s.open_end) {
        *s.open_end = std::max(*s.open_end, iv.end_ns);
        return;
      }
      s.own = true;
      if (s.open_end) s.sweep.emplace(s.extents, s.union_first_begin, *s.open_end);
      else s.sweep.emplace(s.extents);
      s.held = iv;
    } else if (iv.begin_ns <= s.held.end_ns) {
      s.held.end_ns = std::max(s.held.end_ns, iv.end_ns);
    } else {
      s.sweep->add(s.held);
      s.held = iv;
    }
  }

  // Each union's held-back intervals into their sweeps, with the ends later stretches gave
  // them; the sweeps' figures summed.
  void finish_unions() {
    std::unordered_map<std::uint64_t, std::vector<Stretch*>> by_union;
    for (Stretches& unions : stretches) {
      for (auto& [key, s] : unions) by_union[key].push_back(&s);
    }
    for (auto& [key, list] : by_union) {
      Stretch* owner = nullptr;
      Interval held{0, 0};
      for (Stretch* s : list) {
        if (owner && s->open_end) held.end_ns = std::max(held.end_ns, *s->open_end);
        if (!s->own) continue;
        if (owner) owner->sweep->add(held);
        owner = s;
        held = s->held;
      }
      owner->sweep->add(held);
      Coverage c;
      for (Stretch* s : list) {
        if (s->own && s != owner) add_coverage(c, s->sweep->so_far());
      }
      add_coverage(c, owner->sweep->finish());
      coverages.emplace(key, c);
      any = true;
    }
  }

  // agg's rows first: the whole run's launches are theirs.
  void add_figures(Aggregate& agg) {
    const Lanes& lanes = mapped.lanes;
    agg.lane_coverages.assign(lanes.lanes.size(), std::nullopt);
    for (std::size_t k = 0; k < lanes.lanes.size(); ++k) {
      if (const Coverage* c = coverage_of(k, kWholeLane)) agg.lane_coverages[k] = *c;
    }
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
          if (const Coverage* c = coverage_of(k, id->second)) {
            add_coverage(row, *c);
            continue;
          }
        }
        const RowExtents* e = extents_of(k, row.name);
        if (e && first_lane.at(input_of_lane(k)) == k) add_coverage(row, coverage({}, e->merged));
      }
    }
    StageRow whole;
    whole.name = whole.label = std::string(kWholeRunStage);
    whole.launches = agg.totals.launches;  // the rows' count of kernel launches (a serial pass here took 6 ms a million)
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
    : state_(std::make_unique<State>(profile, lanes)) {
  state_->sweep(profile);
}

TimelineSweep::~TimelineSweep() = default;

void TimelineSweep::add_figures(Aggregate& agg) { state_->add_figures(agg); }

std::size_t TimelineSweep::parts() const { return state_->stretches.size(); }

}  // namespace kernlens::analysis

#include "kernlens/ingest/pytorch/stages.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_set>

namespace kernlens::ingest {

std::uint32_t TraceRecords::track(TraceTrack t) {
  auto [it, added] = track_index_.try_emplace(t, static_cast<std::uint32_t>(tracks.size()));
  if (added) tracks.push_back(t);
  return it->second;
}

std::optional<std::uint32_t> TraceRecords::find_track(TraceTrack t) const {
  auto it = track_index_.find(t);
  if (it == track_index_.end()) return std::nullopt;
  return it->second;
}

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// What placing launches among the range instances found, per instance (indexed like
// TraceRecords::ranges).
struct Instance {
  model::StageId stage = 0;  // 0 until a launch reached it
  std::size_t parent = kNone;
  std::uint64_t launches = 0;  // its own and its nested ranges'
  std::int64_t first_ns = std::numeric_limits<std::int64_t>::max();  // its kernels' GPU span
  std::int64_t last_ns = std::numeric_limits<std::int64_t>::min();
};

// A launch to place on a track at a time: its CUDA call's (CPU side) or its own (GPU side).
struct Point {
  std::int64_t ts_ns;
  std::size_t launch;
};

class Placer {
 public:
  Placer(const TraceRecords& records, model::Profile& profile)
      : records_(records), profile_(profile), instances_(records.ranges.size()) {}

  // Places `points` (one track's) among `ranges` (the same track's): each point gets the
  // innermost range open at its time. Returns that range per point (kNone: none open).
  std::vector<std::size_t> place(std::vector<std::size_t> ranges, std::vector<Point>& points) {
    const auto& all = records_.ranges;
    std::stable_sort(ranges.begin(), ranges.end(), [&](std::size_t a, std::size_t b) {
      return all[a].start_ns != all[b].start_ns ? all[a].start_ns < all[b].start_ns : all[a].end_ns > all[b].end_ns;
    });
    std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.ts_ns < b.ts_ns; });
    std::vector<std::size_t> open, innermost;
    innermost.reserve(points.size());
    auto close_before = [&](std::int64_t t) {  // ranges are half-open: [start, end)
      while (!open.empty() && all[open.back()].end_ns <= t) open.pop_back();
    };
    std::size_t next = 0;
    for (const Point& p : points) {
      for (; next < ranges.size() && all[ranges[next]].start_ns <= p.ts_ns; ++next) {
        close_before(all[ranges[next]].start_ns);
        enter(ranges[next], open.empty() ? kNone : open.back());
        open.push_back(ranges[next]);
      }
      close_before(p.ts_ns);
      innermost.push_back(open.empty() ? kNone : open.back());
    }
    return innermost;
  }

  // Gives a launch the stage of `range` and counts it in that range and the ones around it.
  void assign(model::Launch& launch, std::size_t range) {
    launch.stage = instances_[range].stage;
    const bool kernel = launch.kind == model::LaunchKind::kKernel && launch.start_ns && launch.duration_ns;
    const std::int64_t end = kernel ? *launch.start_ns + static_cast<std::int64_t>(*launch.duration_ns) : 0;
    for (std::size_t r = range; r != kNone; r = instances_[r].parent) {
      Instance& in = instances_[r];
      ++in.launches;
      if (!kernel) continue;
      in.first_ns = std::min(in.first_ns, *launch.start_ns);
      in.last_ns = std::max(in.last_ns, end);
    }
  }

  const Instance& instance(std::size_t range) const { return instances_[range]; }

 private:
  void enter(std::size_t range, std::size_t parent) {
    Instance& in = instances_[range];
    in.parent = parent;
    model::StageKey key = profile_.stages[parent == kNone ? 0 : instances_[parent].stage];
    key.push_pop.push_back(model::NvtxRange{"", records_.ranges[range].name, model::RangeKind::kPushPop});
    in.stage = profile_.intern_stage(std::move(key));
  }

  const TraceRecords& records_;
  model::Profile& profile_;
  std::vector<Instance> instances_;
};

// The call of each correlation id: a call over a flow, then the first in the trace's order.
// CUPTI numbers API calls one after another, so the ids of a trace's calls are dense: a table
// indexed by id, filled in one pass, where they are (sorting the calls by id was half of
// linking, serial after the parallel read); sorted and searched where they are not.
class CallsByCorrelation {
 public:
  explicit CallsByCorrelation(const std::vector<CudaCall>& calls) : calls_(calls) {
    if (calls.empty()) return;
    const auto [lo, hi] = std::minmax_element(calls.begin(), calls.end(), [](const CudaCall& a, const CudaCall& b) {
      return a.correlation < b.correlation;
    });
    min_ = lo->correlation;
    const auto span = static_cast<std::uint64_t>(hi->correlation) - static_cast<std::uint64_t>(min_);
    if (span < 4 * static_cast<std::uint64_t>(calls.size()) + 1024) {
      table_.assign(span + 1, kNone);
      for (std::size_t i = 0; i < calls.size(); ++i) {
        std::size_t& slot = table_[static_cast<std::uint64_t>(calls[i].correlation) - static_cast<std::uint64_t>(min_)];
        if (slot == kNone || (calls[slot].from_flow && !calls[i].from_flow)) slot = i;
      }
      return;
    }
    order_.resize(calls.size());
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
      return calls[a].correlation != calls[b].correlation ? calls[a].correlation < calls[b].correlation
                                                          : calls[a].from_flow < calls[b].from_flow;
    });
  }

  std::size_t find(std::int64_t id) const {
    if (!table_.empty()) {
      const std::uint64_t at = static_cast<std::uint64_t>(id) - static_cast<std::uint64_t>(min_);
      return at < table_.size() ? table_[at] : kNone;
    }
    auto it = std::lower_bound(order_.begin(), order_.end(), id,
                               [&](std::size_t c, std::int64_t v) { return calls_[c].correlation < v; });
    return it != order_.end() && calls_[*it].correlation == id ? *it : kNone;
  }

 private:
  const std::vector<CudaCall>& calls_;
  std::int64_t min_ = 0;
  std::vector<std::size_t> table_;  // by id - min_: the call, or kNone
  std::vector<std::size_t> order_;  // else: the calls by (id, flow last, trace order)
};

// The call that launched each launch, or kNone.
std::vector<std::size_t> calls_of_launches(const TraceRecords& records, const model::Profile& profile) {
  const CallsByCorrelation calls(records.calls);
  std::vector<std::size_t> found(profile.launches.size() - records.first_launch, kNone);
  for (std::size_t i = 0; i < found.size(); ++i) {
    const std::int64_t id = profile.launches[records.first_launch + i].id;
    if (id != model::kUnknown) found[i] = calls.find(id);
  }
  return found;
}

// Each launch's CPU thread and process, from its call.
void set_threads(const TraceRecords& records, const std::vector<std::size_t>& call_of, model::Profile& profile) {
  std::unordered_map<std::int64_t, std::uint32_t> process_of_pid;
  for (std::size_t i = 0; i < call_of.size(); ++i) {
    if (call_of[i] == kNone) continue;
    const TraceTrack& t = records.tracks[records.calls[call_of[i]].track];
    model::Launch& l = profile.launches[records.first_launch + i];
    l.thread_id = t.tid;
    auto [it, added] = process_of_pid.try_emplace(t.pid, 0);
    if (added) {
      auto name = records.process_names.find(t.pid);
      it->second = profile.intern_process(
          model::ProcessInfo{"", t.pid, name == records.process_names.end() ? "" : name->second});
    }
    l.process = it->second;
  }
}

// Range indices grouped by track, for one side (CPU or GPU).
std::unordered_map<std::uint32_t, std::vector<std::size_t>> ranges_by_track(
    const TraceRecords& records, bool gpu, const std::unordered_set<std::int64_t>& skip_ids, bool skip_unknown) {
  std::unordered_map<std::uint32_t, std::vector<std::size_t>> by_track;
  for (std::size_t r = 0; r < records.ranges.size(); ++r) {
    const TraceRange& range = records.ranges[r];
    if (range.gpu != gpu) continue;
    if (range.external_id == model::kUnknown ? skip_unknown : skip_ids.count(range.external_id) > 0) continue;
    by_track[range.track].push_back(r);
  }
  return by_track;
}

// Places points track by track and assigns each launch the innermost range around it.
void place_all(Placer& placer, std::unordered_map<std::uint32_t, std::vector<std::size_t>>& ranges,
               std::unordered_map<std::uint32_t, std::vector<Point>>& points, model::Profile& profile) {
  for (auto& [track, track_points] : points) {
    auto it = ranges.find(track);
    if (it == ranges.end()) continue;
    std::vector<std::size_t> innermost = placer.place(std::move(it->second), track_points);
    for (std::size_t i = 0; i < track_points.size(); ++i) {
      if (innermost[i] != kNone) placer.assign(profile.launches[track_points[i].launch], innermost[i]);
    }
  }
}

}  // namespace

void link_launches(const TraceRecords& records, ReadContext& ctx) {
  model::Profile& profile = ctx.profile;
  const std::vector<std::size_t> call_of = calls_of_launches(records, profile);
  set_threads(records, call_of, profile);
  Placer placer(records, profile);

  // CPU side: each launch at its call's time on its call's thread.
  auto cpu_ranges = ranges_by_track(records, false, {}, false);
  std::unordered_map<std::uint32_t, std::vector<Point>> cpu_points;
  for (std::size_t i = 0; i < call_of.size(); ++i) {
    if (call_of[i] == kNone) continue;
    const CudaCall& call = records.calls[call_of[i]];
    cpu_points[call.track].push_back(Point{call.ts_ns, records.first_launch + i});
  }
  place_all(placer, cpu_ranges, cpu_points, profile);

  // GPU side, for the ranges whose CPU side placed nothing.
  std::unordered_set<std::int64_t> placed_ids;
  for (std::size_t r = 0; r < records.ranges.size(); ++r) {
    if (!records.ranges[r].gpu && placer.instance(r).launches > 0) placed_ids.insert(records.ranges[r].external_id);
  }
  auto gpu_ranges = ranges_by_track(records, true, placed_ids, !placed_ids.empty());
  std::unordered_map<std::uint32_t, std::vector<Point>> gpu_points;
  for (std::size_t i = records.first_launch; i < profile.launches.size(); ++i) {
    const model::Launch& l = profile.launches[i];
    if (l.stage != 0 || !l.start_ns) continue;
    if (auto track = records.find_track(TraceTrack{l.device_ordinal, l.stream_id})) {
      gpu_points[*track].push_back(Point{*l.start_ns, i});
    }
  }
  place_all(placer, gpu_ranges, gpu_points, profile);

  for (std::size_t r = 0; r < records.ranges.size(); ++r) {
    const Instance& in = placer.instance(r);
    if (in.launches == 0) continue;
    const TraceRange& range = records.ranges[r];
    if (range.laid_out) continue;
    if (range.gpu) {
      profile.stage_ranges.push_back(model::StageRange{in.stage, range.start_ns, range.end_ns, 0});
    } else if (in.first_ns <= in.last_ns) {
      profile.stage_ranges.push_back(model::StageRange{in.stage, in.first_ns, in.last_ns, 0});
    }
  }
}

}  // namespace kernlens::ingest

#include "kernlens/ingest/pytorch/stages.h"

#include <algorithm>
#include <compare>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "kernlens/common/memory.h"
#include "kernlens/common/parallel_chunks.h"

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

// A trace lists a track's calls and ranges in time order: a merge sort would still copy them
// log n times.
template <class T, class Less>
void stable_sort_unless_sorted(std::vector<T>& v, const Less& less) {
  if (!std::is_sorted(v.begin(), v.end(), less)) std::stable_sort(v.begin(), v.end(), less);
}

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
    stable_sort_unless_sorted(ranges, [&](std::size_t a, std::size_t b) {
      return all[a].start_ns != all[b].start_ns ? all[a].start_ns < all[b].start_ns : all[a].end_ns > all[b].end_ns;
    });
    stable_sort_unless_sorted(points, [](const Point& a, const Point& b) { return a.ts_ns < b.ts_ns; });
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
// Kineto writes the calls (and the flows standing in for them) in id order, as CUPTI numbered
// them: every trace we have does. They are then searched in place; only a trace that lists
// them out of order has them sorted (serial after the parallel read, sorting them was most of
// linking). The ids are not dense (a trace keeps a tenth of the calls CUPTI numbered), so no
// table by id pays.
class CallsByCorrelation {
 public:
  CallsByCorrelation(const std::vector<CudaCall>& calls, unsigned threads) : calls_(calls) {
    if (is_sorted_in_parallel(calls, by_id, threads)) return;
    sorted_.reserve(calls.size());
    for (std::size_t i = 0; i < calls.size(); ++i) sorted_.push_back({calls[i].correlation, calls[i].from_flow, i});
    // The index last, as a stable sort would order them: a total order, so the same on any
    // number of threads. (Every trace we have lists its calls in order: this sort is for one
    // that does not, which would otherwise hold the link on one thread.)
    sort_in_parallel(sorted_, std::less<>(), threads);
  }

  // Launches come in about their calls' order: the search gallops on from where the last one
  // with the same cursor ended (a cursor a thread: the searches may run on several).
  using Cursor = std::size_t;
  std::size_t find(std::int64_t id, Cursor& hint) const {
    if (sorted_.empty()) {
      std::size_t flow = kNone;
      for (std::size_t at = lower_bound_from_hint(calls_, id, hint, [](const CudaCall& c) { return c.correlation; });
           at < calls_.size() && calls_[at].correlation == id; ++at) {
        if (!calls_[at].from_flow) return at;
        if (flow == kNone) flow = at;
      }
      return flow;
    }
    const std::size_t at = lower_bound_from_hint(sorted_, id, hint, [](const Key& k) { return k.correlation; });
    return at < sorted_.size() && sorted_[at].correlation == id ? sorted_[at].call : kNone;
  }

 private:
  struct Key {
    std::int64_t correlation;
    bool from_flow;
    std::size_t call;
    auto operator<=>(const Key&) const = default;
  };
  static bool by_id(const CudaCall& a, const CudaCall& b) { return a.correlation < b.correlation; }

  // The first of `v` (sorted by `id_of`) whose id is not below `id`: galloping from the last
  // answer where `id` is not below its id, else a search of the whole.
  template <class T, class IdOf>
  static std::size_t lower_bound_from_hint(const std::vector<T>& v, std::int64_t id, Cursor& hint, const IdOf& id_of) {
    std::size_t lo = 0, hi = v.size();
    if (hint < v.size() && id_of(v[hint]) <= id) {
      lo = hint;
      std::size_t step = 1;
      while (lo + step < v.size() && id_of(v[lo + step]) < id) {
        lo += step;
        step *= 2;
      }
      hi = std::min(v.size(), lo + step + 1);
    }
    auto it = std::partition_point(v.begin() + static_cast<std::ptrdiff_t>(lo), v.begin() + static_cast<std::ptrdiff_t>(hi),
                                   [&](const T& x) { return id_of(x) < id; });
    hint = static_cast<std::size_t>(it - v.begin());
    return hint;
  }

  const std::vector<CudaCall>& calls_;
  std::vector<Key> sorted_;  // where the calls are not in id order: by (id, flow last, trace order)
};

// By track: indexed like TraceRecords::tracks.
template <class T>
using ByTrack = std::vector<std::vector<T>>;

// The chunks of the per-launch passes of linking: one a thread, 16,384 launches at least.
std::size_t link_chunks(std::size_t launches, unsigned threads) {
  return std::clamp<std::size_t>(launches / 16384, 1, threads);
}

// The call that launched each launch, or kNone, and the tracks of those calls in the order
// their first launch comes: looked up in chunks of the launches on every thread, a cursor each
// (one launch after another, ~160 ns each, this was most of linking).
struct CallsOfLaunches {
  std::vector<std::size_t> call_of;
  std::vector<std::uint32_t> tracks;  // first seen first
};

CallsOfLaunches calls_of_launches(const TraceRecords& records, const model::Profile& profile, unsigned threads) {
  const CallsByCorrelation calls(records.calls, threads);
  CallsOfLaunches out;
  resize_prefaulted(out.call_of, profile.launches.size() - records.first_launch, threads);
  const std::size_t chunks = link_chunks(out.call_of.size(), threads);
  std::vector<std::vector<std::uint32_t>> first_seen(chunks);  // per chunk
  run_in_chunks(out.call_of.size(), chunks, [&](std::size_t c, std::size_t begin, std::size_t end) {
    CallsByCorrelation::Cursor cursor = 0;
    std::vector<char> seen(records.tracks.size(), 0);
    for (std::size_t i = begin; i < end; ++i) {
      const std::int64_t id = profile.launches[records.first_launch + i].id;
      const std::size_t call = id == model::kUnknown ? kNone : calls.find(id, cursor);
      out.call_of[i] = call;
      if (call == kNone) continue;
      const std::uint32_t track = records.calls[call].track;
      if (!seen[track]) first_seen[c].push_back(track);
      seen[track] = 1;
    }
  });
  std::vector<char> seen(records.tracks.size(), 0);
  for (const auto& tracks : first_seen) {
    for (std::uint32_t track : tracks) {
      if (!seen[track]) out.tracks.push_back(track);
      seen[track] = 1;
    }
  }
  return out;
}

// Each launch's CPU thread and process, from its call; and where its track has CPU ranges
// (`cpu_ranges`), the launch at its call's time on that track, in launch order. In chunks on
// every thread: the processes numbered first, in the order one pass over the launches meets
// their tracks.
ByTrack<Point> set_threads_and_cpu_points(const TraceRecords& records, const CallsOfLaunches& found,
                                          const ByTrack<std::size_t>& cpu_ranges, unsigned threads, model::Profile& profile) {
  std::unordered_map<std::int64_t, std::uint32_t> process_of_pid;
  std::vector<std::uint32_t> process_of_track(records.tracks.size(), 0);
  for (std::uint32_t track : found.tracks) {
    const TraceTrack& t = records.tracks[track];
    auto [it, added] = process_of_pid.try_emplace(t.pid, 0);
    if (added) {
      auto name = records.process_names.find(t.pid);
      it->second = profile.intern_process(model::ProcessInfo{"", t.pid, name == records.process_names.end() ? "" : name->second});
    }
    process_of_track[track] = it->second;
  }
  const bool any_cpu_ranges = std::any_of(cpu_ranges.begin(), cpu_ranges.end(), [](const auto& r) { return !r.empty(); });
  const std::size_t chunks = link_chunks(found.call_of.size(), threads);
  std::vector<ByTrack<Point>> points(chunks);  // per chunk
  run_in_chunks(found.call_of.size(), chunks, [&](std::size_t c, std::size_t begin, std::size_t end) {
    if (any_cpu_ranges) points[c].resize(records.tracks.size());
    for (std::size_t i = begin; i < end; ++i) {
      if (found.call_of[i] == kNone) continue;
      const CudaCall& call = records.calls[found.call_of[i]];
      model::Launch& l = profile.launches[records.first_launch + i];
      l.thread_id = records.tracks[call.track].tid;
      l.process = process_of_track[call.track];
      if (any_cpu_ranges && !cpu_ranges[call.track].empty()) points[c][call.track].push_back(Point{call.ts_ns, records.first_launch + i});
    }
  });
  ByTrack<Point> cpu_points(records.tracks.size());
  for (std::size_t c = 0; any_cpu_ranges && c < chunks; ++c) {
    for (std::size_t track = 0; track < cpu_points.size(); ++track) {
      cpu_points[track].insert(cpu_points[track].end(), points[c][track].begin(), points[c][track].end());
    }
  }
  return cpu_points;
}

// Range indices grouped by track, for one side (CPU or GPU).
ByTrack<std::size_t> ranges_by_track(const TraceRecords& records, bool gpu,
                                     const std::unordered_set<std::int64_t>& skip_ids, bool skip_unknown) {
  ByTrack<std::size_t> by_track(records.tracks.size());
  for (std::size_t r = 0; r < records.ranges.size(); ++r) {
    const TraceRange& range = records.ranges[r];
    if (range.gpu != gpu) continue;
    if (range.external_id == model::kUnknown ? skip_unknown : skip_ids.count(range.external_id) > 0) continue;
    by_track[range.track].push_back(r);
  }
  return by_track;
}

// Places points track by track and assigns each launch the innermost range around it.
void place_all(Placer& placer, ByTrack<std::size_t>& ranges, ByTrack<Point>& points, model::Profile& profile) {
  for (std::size_t track = 0; track < points.size(); ++track) {
    if (ranges[track].empty() || points[track].empty()) continue;
    std::vector<std::size_t> innermost = placer.place(std::move(ranges[track]), points[track]);
    for (std::size_t i = 0; i < points[track].size(); ++i) {
      if (innermost[i] != kNone) placer.assign(profile.launches[points[track][i].launch], innermost[i]);
    }
  }
}

}  // namespace

void link_launches(const TraceRecords& records, ReadContext& ctx) {
  model::Profile& profile = ctx.profile;
  const unsigned threads = ctx.threads();  // as the read
  // CPU side: each launch at its call's time on its call's thread.
  auto cpu_ranges = ranges_by_track(records, false, {}, false);
  ByTrack<Point> cpu_points = set_threads_and_cpu_points(records, calls_of_launches(records, profile, threads), cpu_ranges, threads, profile);
  Placer placer(records, profile);
  place_all(placer, cpu_ranges, cpu_points, profile);

  // GPU side, for the ranges whose CPU side placed nothing.
  std::unordered_set<std::int64_t> placed_ids;
  for (std::size_t r = 0; r < records.ranges.size(); ++r) {
    if (!records.ranges[r].gpu && placer.instance(r).launches > 0) placed_ids.insert(records.ranges[r].external_id);
  }
  auto gpu_ranges = ranges_by_track(records, true, placed_ids, !placed_ids.empty());
  ByTrack<Point> gpu_points(records.tracks.size());
  const bool any_gpu_ranges = std::any_of(gpu_ranges.begin(), gpu_ranges.end(), [](const auto& r) { return !r.empty(); });
  std::optional<TraceTrack> last_stream;  // a stream's launches come in runs: looked up once a run
  std::optional<std::uint32_t> last_track;
  for (std::size_t i = records.first_launch; any_gpu_ranges && i < profile.launches.size(); ++i) {
    const model::Launch& l = profile.launches[i];
    if (l.stage != 0 || !l.start_ns) continue;
    const TraceTrack stream{l.device_ordinal, l.stream_id};
    if (!last_stream || !(*last_stream == stream)) {
      last_stream = stream;
      last_track = records.find_track(stream);
    }
    if (last_track && !gpu_ranges[*last_track].empty()) gpu_points[*last_track].push_back(Point{*l.start_ns, i});
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

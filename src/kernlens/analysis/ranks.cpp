#include "kernlens/analysis/ranks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "kernlens/analysis/timeline.h"
#include "kernlens/common/memory.h"
#include "kernlens/common/parallel_chunks.h"

namespace kernlens::analysis {
namespace {

using model::Launch;
using model::LaunchKind;

// Which collective a communication kernel is: the first pattern found in its name wins (so
// "AllReduce" before "Reduce"). NCCL names its kernels ncclKernel_<Collective>_... (older) and
// ncclDevKernel_<Collective>_... (2.19+).
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kCollectives = {{
    {"allreduce", "all-reduce"}, {"allgather", "all-gather"}, {"reducescatter", "reduce-scatter"},
    {"alltoall", "all-to-all"}, {"sendrecv", "send/recv"}, {"send", "send/recv"}, {"recv", "send/recv"},
    {"broadcast", "broadcast"}, {"reduce", "reduce"}, {"nvshmem", "nvshmem"},
}};
// Peer copies: CUPTI's kind PTOP as the readers spell it (memcpy_kinds.h, PyTorch's "PtoP").
constexpr std::array<std::string_view, 2> kPeerCopyMarks = {"ptop", "peer"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Length of `iv` covered by `merged` (sorted, disjoint).
double covered_ns(const Interval& iv, const std::vector<Interval>& merged) {
  auto it = std::upper_bound(merged.begin(), merged.end(), iv.begin_ns,
                             [](std::int64_t t, const Interval& m) { return t < m.end_ns; });
  double ns = 0;
  for (; it != merged.end() && it->begin_ns < iv.end_ns; ++it) {
    ns += static_cast<double>(std::min(it->end_ns, iv.end_ns) - std::max(it->begin_ns, iv.begin_ns));
  }
  return ns;
}

void add_collective(std::vector<CollectiveRow>& rows, const std::string& kind, const Launch& l, double ns) {
  auto it = std::find_if(rows.begin(), rows.end(), [&](const CollectiveRow& r) { return r.kind == kind; });
  if (it == rows.end()) {
    rows.push_back(CollectiveRow{kind, 0, 0, 0});
    it = rows.end() - 1;
  }
  it->count += l.count;
  it->time_ns += ns;
  if (it->bytes && l.bytes >= 0) *it->bytes += l.bytes * static_cast<std::int64_t>(l.count);
  else it->bytes.reset();
}

// The index of `name` in `names`, added when new. Collectives are a handful of names.
std::uint8_t collective_index(std::vector<std::string>& names, std::string name) {
  static_assert(kCollectives.size() + 3 <= 256, "each collective, \"peer copy\", \"other\" and none");
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) it = names.insert(names.end(), std::move(name));
  return static_cast<std::uint8_t>(it - names.begin());
}

// The index of a rank's row for a stage in rank.stages, first seen first; `index` maps (rank,
// stage name) to it.
std::size_t stage_of(RankRow& rank, std::size_t unit, const std::string& name,
                     std::map<std::pair<std::size_t, std::string>, std::size_t>& index) {
  auto [it, added] = index.try_emplace({unit, name}, rank.stages.size());
  if (added) rank.stages.push_back(RankStageRow{name, 0, std::nullopt, {}});
  return it->second;
}

// Kernel time per (name, rank index) for the skew table.
using TimeByRank = std::map<std::string, std::map<std::size_t, double>>;

void add_skew(const TimeByRank& times, std::string_view what, const std::vector<RankRow>& ranks,
              std::vector<SkewRow>& out) {
  for (const auto& [name, by_rank] : times) {
    if (by_rank.size() < 2) continue;
    auto [lo, hi] = std::minmax_element(by_rank.begin(), by_rank.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
    out.push_back(SkewRow{std::string(what), name, ranks[hi->first].rank, ranks[lo->first].rank, hi->second, lo->second});
  }
}

// The straggler by one figure per rank (nullopt: that rank is not judged): the rank whose
// figure is far below the largest, the one the others sat in their collectives waiting for.
// False, naming no one, when no rank stands out.
bool name_roles_by(std::vector<RankRow>& ranks, const std::vector<std::optional<double>>& figure) {
  std::optional<std::size_t> lo, hi;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (!figure[i]) continue;
    if (!lo || *figure[i] < *figure[*lo]) lo = i;
    if (!hi || *figure[i] > *figure[*hi]) hi = i;
  }
  if (!hi || *lo == *hi || *figure[*hi] <= 0 || *figure[*lo] >= kStragglerCommShare * *figure[*hi]) return false;
  ranks[*lo].role = RankRow::Role::kStraggler;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i != *lo && figure[i] && *figure[i] >= *figure[*lo] / kStragglerCommShare) ranks[i].role = RankRow::Role::kWaiting;
  }
  return true;
}

double median(std::vector<double> v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

// By communication time; when that names no one, by each rank's median collective kernel
// (kernel durations per rank, in `collective_kernel_ns`): a one-off wait, such as a barrier at
// the profiler's start, can weigh as much in a rank's total as its waits for the straggler
// at every layer, while each rank's typical collective still shows who arrived last.
void name_roles(std::vector<RankRow>& ranks, const std::vector<std::vector<double>>& collective_kernel_ns) {
  if (ranks.size() < 2) return;
  std::vector<std::optional<double>> figure(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) figure[i] = ranks[i].comm.comm_ns;
  if (name_roles_by(ranks, figure)) return;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (collective_kernel_ns[i].size() < kStragglerMedianMinCollectives) return;  // too few to have a typical one
    figure[i] = median(collective_kernel_ns[i]);
  }
  name_roles_by(ranks, figure);
}

// The input's "distributedInfo", when the input is known and says it.
const model::DistributedInfo* distributed_of(const model::Profile& profile, std::uint32_t input) {
  if (input >= profile.inputs.size() || !profile.inputs[input].distributed) return nullptr;
  return &*profile.inputs[input].distributed;
}

}  // namespace

std::string_view role_name(RankRow::Role role) {
  switch (role) {
    case RankRow::Role::kStraggler: return "straggler";
    case RankRow::Role::kWaiting: return "waiting";
    case RankRow::Role::kNone: break;
  }
  return "-";
}

std::string collective_of(std::string_view name, LaunchKind kind, bool comm_class) {
  const std::string low = lower(name);
  if (kind == LaunchKind::kMemcpy) {
    for (auto mark : kPeerCopyMarks) {
      if (low.find(mark) != std::string::npos) return "peer copy";
    }
    return {};
  }
  if (kind != LaunchKind::kKernel || !comm_class) return {};
  for (const auto& [pattern, collective] : kCollectives) {
    if (low.find(pattern) != std::string::npos) return std::string(collective);
  }
  return "other";
}

namespace {

// A run of consecutive launches of one input, process and device: launches come in such runs,
// so the maps below are worked out once a run, not once a launch (a pass over a million
// 88-byte launches is most of their cost).
struct LaunchRun {
  std::size_t first = 0;  // launches [first, next run's first)
  std::uint32_t input = 0, process = 0;
  std::int32_t device = -1;
};

bool same_run(const LaunchRun& a, const LaunchRun& b) {
  return a.input == b.input && a.process == b.process && a.device == b.device;
}

// Appends `run` unless it goes on with the last run.
void append_run(std::vector<LaunchRun>& runs, const LaunchRun& run) {
  if (runs.empty() || !same_run(runs.back(), run)) runs.push_back(run);
}

// Found in stretches of 4,096 launches at least, one a thread, then joined where a run goes
// on from one stretch into the next.
std::vector<LaunchRun> launch_runs(const model::Profile& profile) {
  const std::size_t launches = profile.launches.size();
  const std::size_t chunks = std::clamp<std::size_t>(launches / 4096, 1, default_threads());
  std::vector<std::vector<LaunchRun>> parts(chunks);
  run_in_chunks(launches, chunks, [&](std::size_t c, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const Launch& l = profile.launches[i];
      append_run(parts[c], LaunchRun{i, l.input, l.process, l.device_ordinal});
    }
  });
  std::vector<LaunchRun> runs = std::move(parts[0]);
  for (std::size_t c = 1; c < chunks; ++c) {
    for (const LaunchRun& run : parts[c]) append_run(runs, run);
  }
  return runs;
}

// Launches [first, end) of run r.
std::size_t run_end(const std::vector<LaunchRun>& runs, std::size_t r, std::size_t launches) {
  return r + 1 < runs.size() ? runs[r + 1].first : launches;
}

RankMap map_ranks(const model::Profile& profile, const std::vector<LaunchRun>& runs) {
  RankMap map;
  // The one pid of an input whose launches all name the same process (launches without one
  // belong to it too); kUnknown when none or several.
  std::vector<std::set<std::int64_t>> pids(profile.inputs.size());
  for (const LaunchRun& run : runs) {
    if (run.process != 0 && run.input < pids.size()) pids[run.input].insert(profile.processes[run.process].pid);
  }
  auto pid_of = [&](const LaunchRun& run) {
    if (run.process != 0) return profile.processes[run.process].pid;
    return run.input < pids.size() && pids[run.input].size() == 1 ? *pids[run.input].begin() : model::kUnknown;
  };
  std::map<std::pair<std::uint32_t, std::int64_t>, std::uint32_t> unit_index;
  for (const LaunchRun& run : runs) unit_index.try_emplace({run.input, pid_of(run)}, 0);
  std::map<std::uint32_t, std::size_t> units_per_input;
  for (const auto& [key, _] : unit_index) ++units_per_input[key.first];

  bool explicit_ranks = !unit_index.empty();
  std::set<std::int64_t> seen;
  for (const auto& [key, _] : unit_index) {
    const model::DistributedInfo* d = distributed_of(profile, key.first);
    if (!d || units_per_input[key.first] != 1) {
      explicit_ranks = false;
    } else if (!seen.insert(d->rank).second) {
      map.warnings.push_back("two inputs say they are rank " + std::to_string(d->rank) +
                             ": ranks are numbered in input order instead");
      explicit_ranks = false;
    }
  }
  std::int64_t next = 0;
  for (auto& [key, index] : unit_index) {
    RankMap::Unit u{key.first, key.second, next++, explicit_ranks};
    if (explicit_ranks) u.rank = distributed_of(profile, key.first)->rank;
    index = static_cast<std::uint32_t>(map.units.size());
    map.units.push_back(u);
  }
  // By rank: renumber the indexes.
  std::vector<std::uint32_t> order(map.units.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return map.units[a].rank < map.units[b].rank; });
  std::vector<std::uint32_t> new_index(order.size());
  std::vector<RankMap::Unit> sorted;
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = i;
    sorted.push_back(map.units[order[i]]);
  }
  map.units = std::move(sorted);
  if (map.units.size() <= 1) return map;  // unit_of gives 0
  resize_prefaulted(map.unit_of_launch, profile.launches.size(), default_threads());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const std::uint32_t unit = new_index[unit_index.at({runs[r].input, pid_of(runs[r])})];
    std::fill(map.unit_of_launch.begin() + static_cast<std::ptrdiff_t>(runs[r].first),
              map.unit_of_launch.begin() + static_cast<std::ptrdiff_t>(run_end(runs, r, profile.launches.size())), unit);
  }
  return map;
}

Lanes map_lanes(const model::Profile& profile, const RankMap& ranks, const std::vector<LaunchRun>& runs) {
  Lanes out;
  std::map<std::pair<std::uint32_t, std::int32_t>, std::uint32_t> index;
  std::vector<std::uint32_t> lane_of_run(runs.size());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    // A run is one input and process, so one unit; the units split no run.
    const std::uint32_t unit = ranks.unit_of(runs[r].first);
    auto [it, added] = index.try_emplace({unit, runs[r].device}, static_cast<std::uint32_t>(out.lanes.size()));
    if (added) out.lanes.push_back(Lanes::Lane{unit, runs[r].device});
    lane_of_run[r] = it->second;
  }
  if (out.lanes.size() <= 1) return out;  // lane_of gives 0
  resize_prefaulted(out.lane_of_launch, profile.launches.size(), default_threads());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    std::fill(out.lane_of_launch.begin() + static_cast<std::ptrdiff_t>(runs[r].first),
              out.lane_of_launch.begin() + static_cast<std::ptrdiff_t>(run_end(runs, r, profile.launches.size())),
              lane_of_run[r]);
  }
  return out;
}

}  // namespace

RankMap map_ranks(const model::Profile& profile) { return map_ranks(profile, launch_runs(profile)); }

const LaneMap& given_or_mapped(const model::Profile& profile, const LaneMap* given, std::optional<LaneMap>& own) {
  if (given) return *given;
  own = map_rank_lanes(profile);
  return *own;
}

LaneMap map_rank_lanes(const model::Profile& profile) {
  const std::vector<LaunchRun> runs = launch_runs(profile);
  LaneMap out;
  out.ranks = map_ranks(profile, runs);
  out.lanes = map_lanes(profile, out.ranks, runs);
  return out;
}

namespace {

// Busy, wall and gaps of each lane, and the overlap of each communication launch with the
// compute kernels of its lane.
struct LaneTimeline {
  std::vector<Interval> compute;
  bool has_comm = false;  // compute is filled only then: otherwise it would be every kernel
};

void fill_lane_figures(LaneRow& row, const std::optional<Coverage>& c) {
  if (!c) return;
  row.busy_ns = c->busy_ns;
  row.wall_ns = c->wall_ns;
  row.gaps = c->gaps;
}

// Each rank's stage walls: the union of the stage's extents in the rank's input; also kept
// per stage for the skew table (a late rank shows in wall time, not in kernel time).
void add_stage_walls(const model::Profile& profile, const RankMap& map, std::vector<RankRow>& ranks,
                     TimeByRank& walls) {
  const StageExtents extents = stage_extents(profile);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    auto input = extents.find(map.units[i].input);
    if (input == extents.end()) continue;
    for (auto& s : ranks[i].stages) {
      auto row = input->second.find(s.name);
      if (row == input->second.end()) continue;
      double wall = 0;
      for (const auto& iv : row->second.merged) wall += static_cast<double>(iv.end_ns - iv.begin_ns);
      s.wall_ns = wall;
      walls[s.name][i] = wall;
    }
  }
}

}  // namespace

RankAnalysis analyze_ranks(const model::Profile& profile, const Aggregate& agg, const LaneMap* given) {
  RankAnalysis out;
  std::optional<LaneMap> own;
  const LaneMap& mapped = given_or_mapped(profile, given, own);
  const RankMap& map = mapped.ranks;
  const Lanes& lanes = mapped.lanes;
  out.warnings = map.warnings;
  for (const auto& u : map.units) {
    RankRow r;
    r.rank = u.rank;
    r.rank_from_input = u.rank_from_input;
    if (const auto* d = distributed_of(profile, u.input)) r.distributed = *d;
    if (u.input < profile.inputs.size()) r.input = profile.inputs[u.input].path;
    r.pid = u.pid;
    out.ranks.push_back(std::move(r));
  }
  // One rank's figures are the whole profile's (the aggregate's), and nothing shows a rank's
  // own but for several (multi_rank): the passes over every launch below were a serial tenth of
  // a large single-GPU analysis, for figures no one read.
  if (!out.multi_rank()) return out;
  std::vector<LaneTimeline> timelines(lanes.lanes.size());
  std::vector<LaneRow> lane_rows(lanes.lanes.size());
  // The collective of each launch, classified once per (name, kind); a kernel is communication
  // when the rules class its family "comm".
  std::set<model::NameId> comm_kernels;
  for (const auto& k : agg.kernels) {
    if (agg.families[k.family].cls.op_class == names::OpClass::kComm) comm_kernels.insert(k.name);
  }
  // Per launch an index into `collectives` (a byte, not a pointer: a million launches).
  std::vector<std::string> collectives;
  // By (name, kind), classified on first use: an array, not a hash, as it is asked per launch.
  constexpr std::size_t kKinds = 3;  // LaunchKind's values
  static_assert(static_cast<std::size_t>(LaunchKind::kMemset) + 1 == kKinds);
  constexpr std::uint8_t kUnclassified = 0xff;
  std::vector<std::uint8_t> collective_of_name(profile.names.size() * kKinds, kUnclassified);
  std::vector<std::uint8_t> collective(profile.launches.size());
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    const Launch& l = profile.launches[i];
    std::uint8_t& known = collective_of_name[std::size_t{l.name} * kKinds + static_cast<std::size_t>(l.kind)];
    if (known == kUnclassified) {
      known = collective_index(collectives, collective_of(profile.names[l.name], l.kind, comm_kernels.contains(l.name)));
    }
    collective[i] = known;
    auto& t = timelines[lanes.lane_of(i)];
    t.has_comm = t.has_comm || !collectives[collective[i]].empty();
    if (l.kind == LaunchKind::kKernel) {
      LaneRow& lane = lane_rows[lanes.lane_of(i)];
      lane.launches += l.count;
      lane.kernel_time_ns += l.total_duration_ns().value_or(0);
    }
  }
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {  // lanes with communication only
    auto& t = timelines[lanes.lane_of(i)];
    const Launch& l = profile.launches[i];
    if (!t.has_comm || l.kind != LaunchKind::kKernel || !collectives[collective[i]].empty()) continue;
    if (auto iv = launch_interval(l)) t.compute.push_back(*iv);
  }
  for (auto& t : timelines) merge_intervals(t.compute);

  // Resolved once per kernel name, stage and (rank, stage) rather than at every launch.
  TimeByRank stage_times, family_times;
  std::vector<std::map<std::size_t, double>*> family_time_of_name(profile.names.size(), nullptr);
  for (const auto& k : agg.kernels) {
    if (k.name < family_time_of_name.size()) family_time_of_name[k.name] = &family_times[agg.families[k.family].cls.base_name];
  }
  const StageStrings rows_of = intern_stage_strings(profile, stage_row_names);
  std::vector<std::map<std::size_t, double>*> stage_time_of_row;  // by row id
  for (const auto& row : rows_of.names) stage_time_of_row.push_back(&stage_times[row]);
  std::map<std::pair<std::size_t, std::string>, std::size_t> stage_index;
  std::vector<std::vector<double>> collective_kernel_ns(out.ranks.size());  // per rank, for its roles
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> rank_stage_rows;  // (unit, stage) -> rows in rank.stages
  const std::vector<std::size_t>* run_rows = nullptr;  // rank_stage_rows of the last launch's
  std::size_t run_unit = 0;
  model::StageId run_stage = 0;
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    const Launch& l = profile.launches[i];
    const std::size_t unit = map.unit_of(i);
    RankRow& rank = out.ranks[unit];
    const auto time = l.total_duration_ns();
    if (l.kind == LaunchKind::kKernel) {
      rank.launches += l.count;
      if (time) {
        rank.kernel_time_ns += *time;
        auto* family = l.name < family_time_of_name.size() ? family_time_of_name[l.name] : nullptr;
        (family ? *family : family_times[std::string()])[unit] += *time;
      }
    }
    const std::string& collective_name = collectives[collective[i]];
    if (!time || (l.kind != LaunchKind::kKernel && collective_name.empty())) continue;
    CommFigures comm;
    if (!collective_name.empty()) {
      comm.comm_ns = *time;
      if (l.kind != LaunchKind::kKernel) comm.copy_ns = *time;
      if (auto iv = launch_interval(l)) {
        comm.overlapped_ns = covered_ns(*iv, timelines[lanes.lane_of(i)].compute);
      }
      rank.comm += comm;
      add_collective(rank.collectives, collective_name, l, *time);
      if (l.kind == LaunchKind::kKernel) collective_kernel_ns[unit].push_back(*l.duration_ns);
    }
    if (!run_rows || unit != run_unit || l.stage != run_stage) {  // launches come in runs of one stage
      auto [rows, first] = rank_stage_rows.try_emplace((std::uint64_t{unit} << 32) | l.stage);
      if (first) {
        for (std::uint32_t row : rows_of.of_stage[l.stage]) rows->second.push_back(stage_of(rank, unit, rows_of.names[row], stage_index));
      }
      run_rows = &rows->second;  // an unordered_map's values stay where they are
      run_unit = unit;
      run_stage = l.stage;
    }
    for (std::size_t r = 0; r < run_rows->size(); ++r) {
      RankStageRow& s = rank.stages[(*run_rows)[r]];
      if (l.kind == LaunchKind::kKernel) {
        s.kernel_time_ns += *time;
        (*stage_time_of_row[rows_of.of_stage[l.stage][r]])[unit] += *time;
      }
      s.comm += comm;
    }
  }
  timelines = {};
  const std::vector<std::optional<Coverage>> lane_figures = lane_coverages(profile, lanes, agg);
  for (std::size_t k = 0; k < lanes.lanes.size(); ++k) {
    RankRow& rank = out.ranks[lanes.lanes[k].unit];
    LaneRow& lane = lane_rows[k];
    lane.device = lanes.lanes[k].device;
    fill_lane_figures(lane, lane_figures[k]);
    if (lane.busy_ns) {
      rank.busy_ns = rank.busy_ns.value_or(0) + *lane.busy_ns;
      rank.wall_ns = rank.wall_ns.value_or(0) + *lane.wall_ns;
      add_gaps(rank.gaps, lane.gaps);
    }
    rank.lanes.push_back(lane);
  }
  TimeByRank stage_walls;
  add_stage_walls(profile, map, out.ranks, stage_walls);
  add_skew(stage_walls, "stage wall", out.ranks, out.skew);
  add_skew(stage_times, "stage", out.ranks, out.skew);
  add_skew(family_times, "family", out.ranks, out.skew);
  std::stable_sort(out.skew.begin(), out.skew.end(),
                   [](const SkewRow& a, const SkewRow& b) { return a.spread_ns() > b.spread_ns(); });
  name_roles(out.ranks, collective_kernel_ns);
  return out;
}

}  // namespace kernlens::analysis

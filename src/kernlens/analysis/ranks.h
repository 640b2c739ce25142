// Many GPUs, many ranks: which rank each launch belongs to, and per rank (and per GPU lane of
// it) kernel time, busy time and idle gaps, communication and the part of it hidden under
// computation, collectives, and the skew between ranks.
//
// A rank is one process of one input: a PyTorch trace or a .kltrace is one process, an nsys
// export may hold several (globalPid). Its number is the one the input's "distributedInfo"
// gives; when any input lacks it (or two say the same rank) the ranks are numbered in input
// order, then by process id. A lane is one GPU of one rank: timelines are never merged across
// lanes, the combined figures sum them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/model/profile.h"

namespace kernlens::analysis {

struct RankMap {
  struct Unit {
    std::uint32_t input = 0;
    std::int64_t pid = model::kUnknown;
    std::int64_t rank = 0;
    bool rank_from_input = false;  // "distributedInfo" gave it
  };
  std::vector<Unit> units;                  // by rank
  // Index into units, one per Profile::launches; empty where there is one unit (most
  // profiles: a million launches would be 4 MB written for nothing).
  std::vector<std::uint32_t> unit_of_launch;
  std::vector<std::string> warnings;
  std::uint32_t unit_of(std::size_t launch) const { return unit_of_launch.empty() ? 0 : unit_of_launch[launch]; }
};

RankMap map_ranks(const model::Profile& profile);

// The lane of each launch: one per (rank, GPU), the launches without a device in a lane of
// their own (device -1).
struct Lanes {
  struct Lane {
    std::uint32_t unit = 0;
    std::int32_t device = -1;
  };
  std::vector<Lane> lanes;
  std::vector<std::uint32_t> lane_of_launch;  // index into lanes; empty where there is one lane
  std::size_t lane_of(std::size_t launch) const { return lane_of_launch.empty() ? 0 : lane_of_launch[launch]; }
};

// Both, worked out once per analysis for the timeline figures and the rank analysis (each a
// pass or more over every launch).
struct LaneMap {
  RankMap ranks;
  Lanes lanes;
};
LaneMap map_rank_lanes(const model::Profile& profile);
// `given` when there is one, else the profile's map, worked out into `own`.
const LaneMap& given_or_mapped(const model::Profile& profile, const LaneMap* given, std::optional<LaneMap>& own);

// Communication: the kernels the kernel rules class "comm" (data/kernel_rules.txt: NCCL,
// NVSHMEM, c10d, custom all-reduce; `comm_class`, the deep pass leaves the same ones out) and
// peer-to-peer copies. The collective it is ("all-reduce", "send/recv", ..., "other" for a comm
// kernel its name does not tell), or empty when the launch is not communication.
std::string collective_of(std::string_view name, model::LaunchKind kind, bool comm_class);

struct CollectiveRow {
  std::string kind;
  std::uint64_t count = 0;
  double time_ns = 0;
  std::optional<std::int64_t> bytes;  // absent when any of them has no known size
};

struct CommFigures {
  double comm_ns = 0;        // communication kernels and copies, summed
  double overlapped_ns = 0;  // the part of it during which compute kernels ran on the same GPU
  double copy_ns = 0;        // the peer copies among comm_ns (not kernel time)
  double exposed_ns() const { return comm_ns - overlapped_ns; }
  // Kernel time that is not communication, out of `kernel_time_ns` that holds these figures.
  double compute_ns(double kernel_time_ns) const { return kernel_time_ns - (comm_ns - copy_ns); }
  CommFigures& operator+=(const CommFigures& o) {
    comm_ns += o.comm_ns;
    overlapped_ns += o.overlapped_ns;
    copy_ns += o.copy_ns;
    return *this;
  }
};

struct RankStageRow {
  std::string name;  // the stage row's name (aggregate.h)
  double kernel_time_ns = 0;
  std::optional<double> wall_ns;  // union of the stage's extents in this rank's input
  CommFigures comm;
};

struct LaneRow {
  std::int32_t device = -1;
  std::uint64_t launches = 0;
  double kernel_time_ns = 0;
  std::optional<double> busy_ns, wall_ns;
  GapStats gaps;
};

struct RankRow {
  std::int64_t rank = 0;
  bool rank_from_input = false;
  model::DistributedInfo distributed;  // as the input says (rank, world_size, backend)
  std::string input;                   // the input's path
  std::int64_t pid = model::kUnknown;
  std::uint64_t launches = 0;
  double kernel_time_ns = 0;  // sum of its kernels' durations
  std::optional<double> busy_ns, wall_ns;  // summed over its lanes
  GapStats gaps;
  CommFigures comm;
  std::vector<LaneRow> lanes;
  std::vector<RankStageRow> stages;
  std::vector<CollectiveRow> collectives;
  enum class Role : std::uint8_t { kNone, kStraggler, kWaiting } role = Role::kNone;

  std::optional<double> busy_fraction() const {
    if (!busy_ns || !wall_ns || *wall_ns <= 0) return std::nullopt;
    return *busy_ns / *wall_ns;
  }
};

// "straggler", "waiting" or "-".
std::string_view role_name(RankRow::Role role);

// Per stage or kernel family: the rank with the most and the least kernel time ("stage",
// "family"), or per stage the most and least wall time ("stage wall").
struct SkewRow {
  std::string what;  // "stage", "stage wall" or "family"
  std::string name;
  std::int64_t slowest_rank = 0, fastest_rank = 0;
  double slowest_ns = 0, fastest_ns = 0;
  double spread_ns() const { return slowest_ns - fastest_ns; }
};

struct RankAnalysis {
  std::vector<RankRow> ranks;
  std::vector<SkewRow> skew;  // by spread, descending
  std::vector<std::string> warnings;
  bool multi_rank() const { return ranks.size() > 1; }
};

// A rank whose communication time is less than this share of the largest rank's is the one
// the others waited for (its collectives started last and so ended quickly). When no rank's
// total stands out, the same test on each rank's median collective kernel, where every rank
// has at least kStragglerMedianMinCollectives of them.
inline constexpr double kStragglerCommShare = 0.5;
inline constexpr std::size_t kStragglerMedianMinCollectives = 3;

// With `lanes` the profile's map_rank_lanes, else it is worked out here. With one rank, that
// rank's identity only (rank, input, pid, warnings): its figures are the profile's own, and
// every report shows ranks only where there are several.
RankAnalysis analyze_ranks(const model::Profile& profile, const Aggregate& agg, const LaneMap* lanes = nullptr);

}  // namespace kernlens::analysis

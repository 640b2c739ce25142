// Stage figures of a timeline: wall time on the GPU, busy time (overlapping kernels counted
// once), busy fraction and idle gaps, for every stage row and for the whole run.
#pragma once

#include "kernlens/analysis/aggregate.h"
#include "kernlens/model/profile.h"

namespace kernlens::analysis {

struct LaneMap;

// Fills wall_ns, busy_ns and gaps of `agg.stages` from the launches' start times and the
// profile's stage ranges, and adds a kWholeRunStage row first. Does nothing when no kernel
// has a start time (Nsight Compute inputs).
// With `lanes` the profile's map_rank_lanes (ranks.h), else it is worked out here.
void add_timeline_figures(const model::Profile& profile, Aggregate& agg, const LaneMap* lanes = nullptr);

struct Interval {
  std::int64_t begin_ns;
  std::int64_t end_ns;
};

// Sorts and merges overlapping or touching intervals in place.
void merge_intervals(std::vector<Interval>& intervals);

// Busy time and idle gaps of `busy` (merged) inside `extents` (merged).
struct Coverage {
  double busy_ns = 0;
  double wall_ns = 0;
  GapStats gaps;
};
Coverage coverage(const std::vector<Interval>& busy, const std::vector<Interval>& extents);

}  // namespace kernlens::analysis

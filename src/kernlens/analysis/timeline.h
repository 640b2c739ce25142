// Stage figures of a timeline: wall time on the GPU, busy time (overlapping kernels counted
// once), busy fraction and idle gaps, for every stage row and for the whole run.
#pragma once

#include "kernlens/analysis/aggregate.h"
#include "kernlens/model/profile.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kernlens::analysis {

struct LaneMap;
struct Lanes;

// The timeline figures of the stage rows, in two steps: the pass over the kernels, which needs
// only the profile (so it runs beside the aggregate's own pass, aggregate.cpp), then
// add_figures, which fills wall_ns, busy_ns and gaps of `agg.stages` from it and the profile's
// stage ranges, adds a kWholeRunStage row first and sets agg.lane_coverages. Adds no figures
// when no kernel has a start time (Nsight Compute inputs).
class TimelineSweep {
 public:
  // With `lanes` the profile's map_rank_lanes (ranks.h), else it is worked out here; both
  // must outlive the sweep.
  TimelineSweep(const model::Profile& profile, const LaneMap* lanes);
  ~TimelineSweep();
  TimelineSweep(const TimelineSweep&) = delete;
  TimelineSweep& operator=(const TimelineSweep&) = delete;

  void add_figures(Aggregate& agg);
  // The stretches of the kernels the timeline was swept in, each on a thread of its own.
  std::size_t parts() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct Interval {
  std::int64_t begin_ns;
  std::int64_t end_ns;
};

// Sorts and merges overlapping or touching intervals in place.
void merge_intervals(std::vector<Interval>& intervals);

// A launch's span, from its start to start + duration (rounded to the ns); nullopt without both.
std::optional<Interval> launch_interval(const model::Launch& l);

// Busy time and idle gaps of `busy` (merged) inside `extents` (merged).
Coverage coverage(const std::vector<Interval>& busy, const std::vector<Interval>& extents);

// Each input's stage range instances by row (a push/pop path, or a start/end range alone): how
// many, and merged (the spans a row's wall time and gaps are taken inside).
struct RowExtents {
  std::size_t instances = 0;
  std::vector<Interval> merged;
};
using StageExtents = std::unordered_map<std::uint32_t, std::unordered_map<std::string, RowExtents>>;  // input -> row ->
StageExtents stage_extents(const model::Profile& profile);

// Each lane's kernels (those with a start time) as one timeline: busy time, wall and gaps
// inside their own span, from the first start to the last end; nullopt for a lane without one.
// Aggregate::lane_coverages when the aggregate has them for these lanes, else worked out.
std::vector<std::optional<Coverage>> lane_coverages(const model::Profile& profile, const Lanes& lanes,
                                                    const Aggregate& agg);

// coverage() as the busy intervals come (merged, in begin order), so that a million kernels
// need no list of intervals: against `extents` (merged; must outlive the sweep), or without
// them (nullptr) inside the intervals' own span, from the first begin to the last end.
// Adds `g`'s gaps to `into`'s: counts and totals summed, the largest kept.
void add_gaps(GapStats& into, const GapStats& g);
// Adds `c`'s figures to `into`'s (busy, wall, gaps): the figures of two timelines side by side,
// or of two stretches of one.
void add_coverage(Coverage& into, const Coverage& c);

class CoverageSweep {
 public:
  explicit CoverageSweep(const std::vector<Interval>* extents);
  // The state a sweep is in once busy intervals up to one that ends at `last_end` were added,
  // the first of them beginning at `first_begin`, but with nothing counted yet: for a sweep
  // of later intervals whose figures add to those of the sweep before.
  CoverageSweep(const std::vector<Interval>* extents, std::int64_t first_begin, std::int64_t last_end);
  void add(const Interval& busy);
  // The figures so far, without the extents not yet done.
  const Coverage& so_far() const { return c_; }
  Coverage finish();

 private:
  void gap(std::int64_t ns);
  void close_extent();

  const std::vector<Interval>* extents_;
  std::size_t k_ = 0;        // the first extent not yet done
  std::int64_t cursor_ = 0;  // the current extent is covered up to here
  bool any_ = false;
  std::int64_t first_begin_ = 0, last_end_ = 0;
  Coverage c_;
};

// Merges intervals that come in begin order (overlapping or touching ones become one) into a
// CoverageSweep.
class BusyUnion {
 public:
  explicit BusyUnion(const std::vector<Interval>* extents) : sweep_(extents) {}
  void add(const Interval& interval);
  Coverage finish();

 private:
  CoverageSweep sweep_;
  Interval current_{0, 0};
  bool open_ = false;
};

}  // namespace kernlens::analysis

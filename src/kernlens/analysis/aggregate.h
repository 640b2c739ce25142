// Aggregation: launches -> one row per kernel (grouped by exact name), the kernels' families
// (grouped by base name, each classified by library and operation), totals, and the stage
// table (every NVTX push/pop path prefix, plus start/end ranges).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernlens/model/profile.h"
#include "kernlens/names/classify.h"

namespace kernlens {
class StepTimes;  // common/step_times.h
}  // namespace kernlens

namespace kernlens::analysis {

struct LaneMap;  // ranks.h

// The time of a group of launches: one kernel's, or one family's.
struct TimeStats {
  std::uint64_t launches = 0;
  std::uint64_t timed_launches = 0;  // launches with a known duration
  std::optional<double> total_ns;  // absent when no launch of it has a duration
  std::optional<double> mean_ns;
  std::optional<double> share;     // of all kernel time, 0..1
  // Time per stage the launches ran in: the full push/pop path and any start/end range.
  std::vector<std::pair<std::string, double>> stage_ns;
};

struct KernelRow : TimeStats {
  model::NameId name = 0;
  std::string demangled;     // the name demangled when the input spelled it mangled; else empty
  std::uint32_t family = 0;  // index into Aggregate::families
};

// The kernels of one base name. Classification depends on the base name alone, so it is the
// same for every kernel of the family.
struct FamilyRow : TimeStats {
  names::Classification cls;
  std::uint64_t kernels = 0;  // distinct kernel names in it
};

// Idle time on the GPU inside a stage's extents: the evidence that a stage is launch-bound.
struct GapStats {
  std::uint64_t count = 0;
  double total_ns = 0;
  double largest_ns = 0;
};

// Busy time (overlaps counted once) and idle gaps of a timeline inside its wall time.
struct Coverage {
  double busy_ns = 0;
  double wall_ns = 0;
  GapStats gaps;
};

struct StageRow {
  std::string name;   // push/pop path ("step/decode") or start/end range label
  std::string label;  // the last range of the path ("decode")
  int depth = 0;      // nesting level of a push/pop path; 0 for start/end ranges
  std::uint64_t launches = 0;
  double kernel_time_ns = 0;  // launches inside, nested stages included
  bool has_kernel_time = false;
  // Timeline inputs only (absent for ncu, which serialises kernels):
  std::optional<double> wall_ns;  // union of the stage's GPU extents
  std::optional<double> busy_ns;  // union of its kernels' run time: overlaps counted once
  std::optional<GapStats> gaps;   // idle time inside the extents
  std::optional<std::uint64_t> instances;  // how many times the range ran (its GPU extents)

  std::optional<double> busy_fraction() const {
    if (!wall_ns || !busy_ns || *wall_ns <= 0) return std::nullopt;
    return *busy_ns / *wall_ns;
  }
};

// Memory copies and sets on a timeline, grouped by name.
struct MemoryOpRow {
  model::NameId name = 0;
  model::LaunchKind kind = model::LaunchKind::kMemcpy;
  std::uint64_t count = 0;
  std::optional<double> total_ns;
  std::optional<std::int64_t> bytes;  // absent when any of them has no size
};

struct Totals {
  std::optional<double> kernel_time_ns;
  std::uint64_t launches = 0;
  std::uint64_t unique_kernels = 0;
};

struct Aggregate {
  Totals totals;
  std::optional<std::int32_t> device_ordinal;  // the GPU most launches ran on
  std::vector<KernelRow> kernels;       // by total time, descending; then by name
  std::vector<FamilyRow> families;      // by total time, descending; then by base name
  std::vector<StageRow> stages;         // tree order: a stage, then its nested stages
  std::vector<MemoryOpRow> memory_ops;  // by total time, descending
  // Each GPU lane's kernels as one timeline, inside their own span (by lane of map_rank_lanes;
  // nullopt for a lane without a timed kernel): worked out with the stage figures, read again
  // by the rank analysis.
  std::vector<std::optional<Coverage>> lane_coverages;
};

// The name of the stage row that covers a whole timeline (first kernel start to last end).
inline constexpr std::string_view kWholeRunStage = "(whole run)";

// Each distinct kernel name is classified once, with `classifier`, which must outlive the
// result (the families' rule ids point into it).
// With `lanes` the profile's map_rank_lanes (ranks.h) for the timeline figures, else they
// work it out.
// With `times`, the rows' pass and the timeline's, which run side by side, are recorded in it
// as steps (with the parts each was cut into).
Aggregate aggregate(const model::Profile& profile, const names::KernelClassifier& classifier,
                    const LaneMap* lanes = nullptr, StepTimes* times = nullptr);

// The name to show for a kernel: demangled when the input spelled it mangled.
const std::string& shown_name(const model::Profile& profile, const KernelRow& row);

// Helpers shared by the kernel and family tables.
// Adds `ns` to stage `label`'s time, keeping stages in first-seen order; `slots` maps a label
// to its index in stage_ns.
void add_stage_ns(TimeStats& stats, std::map<std::string, std::size_t>& slots,
                  const std::string& label, double ns);
// Sets mean_ns and share from total_ns and the totals.
void finish_time_stats(TimeStats& stats, const Totals& totals);
// -1 when `a` comes first in a table by time (more total time, unknown last; then more
// launches), 1 when `b` does, 0 when they tie.
int compare_by_time(const TimeStats& a, const TimeStats& b);

// The stage rows a launch with this key counts toward: every push/pop path prefix and each
// start/end range.
std::vector<std::string> stage_row_names(const model::StageKey& key);

// The stage labels a launch counts toward in KernelRow::stage_ns.
std::vector<std::string> launch_stage_labels(const model::StageKey& key);

// Each stage's strings (stage_row_names or launch_stage_labels of it) as ids into one list of
// the distinct strings: made once per stage, so that per-launch work indexes instead of
// building and hashing strings.
struct StageStrings {
  std::vector<std::string> names;                       // by id
  std::vector<std::vector<std::uint32_t>> of_stage;     // by StageId
  std::unordered_map<std::string, std::uint32_t> ids;   // name -> id
};
StageStrings intern_stage_strings(const model::Profile& profile,
                                  std::vector<std::string> (*strings_of)(const model::StageKey&));

}  // namespace kernlens::analysis

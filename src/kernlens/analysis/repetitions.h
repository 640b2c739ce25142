// The repetitions of a workload's measured region in one timeline (`kernlens profile
// --repeat N`): per repetition, each kernel's and stage's time, so that compare has samples.
//
// How repetitions are found: the workload runs its measured region N times in one process
// (kernlens sets KERNLENS_REPEAT=N in its environment; examples/workloads/llm_stages.py reads it
// as its --repeat), and each run of it opens the same top-level NVTX ranges. A top-level
// push/pop range that ran exactly N times (its GPU extents, model::StageRange) marks them: a
// launch inside the k-th instance of such a range (by time) belongs to repetition k. Ranges
// that ran another number of times (a "warmup" range run once) belong to none, and neither do
// launches outside every range. Needs a timeline (nsys or the tracer): ncu's timing pass has
// no extents. One process only: with several ranks each range runs N times per rank.
#pragma once

#include <string>
#include <vector>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/common/error.h"
#include "kernlens/model/profile.h"
#include "kernlens/model/run_record.h"

namespace kernlens::analysis {

// `aggregate` must come from `profile`. Empty for repeat < 2. An Error (for a warning: the run
// is then one sample) when no top-level range ran `repeat` times.
Result<std::vector<model::RunRepetition>> split_repetitions(const model::Profile& profile, const Aggregate& aggregate,
                                                            int repeat);

}  // namespace kernlens::analysis

// Groups of runs compared: several runs (or runs with repetitions) per side, medians, the
// ratio of the candidate's median to the base's with a bootstrap interval (compare_stats.h),
// and a verdict that calls a change a regression only when it is larger than the threshold
// AND significant at level alpha (its interval excludes no change).
//
// Samples: each repetition of a run made with `profile --repeat N` (analysis/repetitions.h), or
// each whole run without. A group mixing the two would compare unlike things (a whole run has
// its warm-up) and is refused. Kernels are matched as compare.h matches them, on the first run
// of each side; a kernel missing from one sample counts 0 ns there. Rows: the total kernel
// time, each kernel, each family (base name), each operation (op class) and each stage, on
// figures normalised as normalize.h says (per token when the shapes of work differ).
//
// Judged as compare.h judges a single pair: the total; kernels weighing at least min_share;
// families and operations whose kernels changed (new or vanished). Stages are shown, not judged.
//
// The noise floor: each side compared with its own halves (split_halves); the largest change
// inside that interval of the total. A threshold below it cannot tell a change from noise.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernlens/analysis/compare.h"
#include "kernlens/analysis/compare_stats.h"
#include "kernlens/analysis/normalize.h"
#include "kernlens/common/error.h"
#include "kernlens/model/run_record.h"

namespace kernlens::analysis {

struct GroupCompareOptions {
  CompareOptions compare;
  BootstrapOptions bootstrap;
  std::optional<Normalization> normalization;  // absent: per token when the work differs, else none
  TokenCounts base_tokens, candidate_tokens;   // --tokens, per side
};

struct GroupRow {
  std::string name;            // kernel (the base's spelling), family, op class, stage; "total"
  std::string candidate_name;  // a kernel matched under another name; else empty
  MatchKind match = MatchKind::kName;  // kernels only
  RatioEstimate estimate;      // medians of the normalised figures
  std::size_t base_samples = 0, candidate_samples = 0;  // samples that had a figure
  double weight = 0;           // share of its side's kernel time (the heavier side's), 0..1
  bool kernels_changed = false;  // families and operations: a kernel of it is new or vanished
  bool regressed = false;
  // Relative change of the medians in percent; absent without a ratio.
  std::optional<double> change_pct() const;
};

struct GroupComparison {
  std::vector<const model::RunRecord*> base, candidate;
  GroupCompareOptions options;
  Normalization normalization = Normalization::kNone;
  std::string normalization_reason;  // why that one, in words
  std::size_t base_samples = 0, candidate_samples = 0;
  bool repetitions = false;          // samples are repetitions (else whole runs)
  bool statistics = false;           // both sides have 2 samples or more: intervals exist
  std::optional<double> base_noise_floor_pct, candidate_noise_floor_pct;
  GroupRow total;
  std::vector<GroupRow> kernels, families, operations;  // by |change of the medians|, largest first
  std::vector<GroupRow> stages;                          // the first base run's order
  CompareVerdict verdict = CompareVerdict::kNoChange;
  std::vector<std::string> reasons;  // why the verdict
  std::vector<std::string> notes;    // what a reader should know about the samples

  std::optional<double> noise_floor_pct() const;  // the larger of the two sides'
};

// The normalisation to use: `requested`, or per token when the first runs' work differs
// (normalize.h work_difference), else none. `reason` says why, in words.
Normalization choose_normalization(const model::RunRecord& base, const model::RunRecord& candidate,
                                   std::optional<Normalization> requested, std::string& reason);

// The runs must outlive the result. Errors: an empty side, a group mixing runs with and
// without repetitions, a normalisation a run has no figures for.
Result<GroupComparison> compare_groups(const std::vector<const model::RunRecord*>& base,
                                       const std::vector<const model::RunRecord*>& candidate,
                                       const GroupCompareOptions& options);

// An error when the threshold is tighter than the noise floor (with statistics only).
Status check_noise_floor(const GroupComparison& c);

}  // namespace kernlens::analysis

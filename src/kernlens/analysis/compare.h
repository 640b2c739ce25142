// Before/after: two runs' kernels and stages side by side, what moved, and a verdict.
//
// Kernels are matched by exact name first; names left over by base name and launch shape
// (grid and block of the longest launch: a recompiled or re-templated kernel keeps both);
// then a base name with one kernel left on each side. The rest are new or vanished. Stages
// are matched by name. Operations (op classes: gemm, attention, ...) sum their kernels on
// each side, so that a library picking other kernels (cuBLAS changing GEMM tiles with the
// batch) still compares like with like.
//
// The verdict is a regression when the total kernel time grew by more than the threshold; or
// a matched kernel that weighs at least `min_share` of either run's time did; or an operation
// of that weight whose kernels changed (some new or vanished, which no kernel row can judge)
// did. An improvement when the total shrank by more than the threshold; otherwise no
// significant change.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernlens/analysis/delta.h"
#include "kernlens/analysis/rank_compare.h"
#include "kernlens/model/run_record.h"

namespace kernlens::analysis {

// The op class comparisons file kernels without one under.
inline const std::string kOtherOpClass = "other";

struct CompareOptions {
  double threshold_pct = 5;
  double min_share = 0.01;  // kernels lighter than this (0..1) in both runs are not judged alone
};

enum class MatchKind { kName, kShape, kBaseName, kNew, kVanished };
std::string_view match_kind_name(MatchKind kind);  // "name", "shape", "base_name", "new", "vanished"

struct KernelDelta : Delta {
  const model::RunKernel* base = nullptr;       // null for a new kernel
  const model::RunKernel* candidate = nullptr;  // null for a vanished kernel
  MatchKind match = MatchKind::kName;
  bool regressed = false;
  bool bottleneck_changed() const;
  const model::RunKernel& either() const { return base ? *base : *candidate; }
};

struct OperationDelta : Delta {
  std::string op_class;
  int base_kernels = 0, candidate_kernels = 0;
  bool kernels_changed = false;  // a kernel of this op class is new or vanished
  bool regressed = false;
};

struct StageDelta : Delta {
  std::string name;
  std::optional<double> base_wall_ns, candidate_wall_ns;
};

enum class CompareVerdict { kRegression, kImprovement, kNoChange };
std::string_view verdict_name(CompareVerdict v);  // "regression", "improvement", "no significant change"

struct Comparison {
  const model::RunRecord* base = nullptr;
  const model::RunRecord* candidate = nullptr;
  CompareOptions options;
  Delta total;
  std::vector<KernelDelta> kernels;  // by |delta_ns|, largest first
  std::vector<OperationDelta> operations;  // by |delta_ns|, largest first
  std::vector<StageDelta> stages;    // base's stage order, then the candidate's new stages
  RankComparison ranks;              // per rank, when the runs hold several (rank_compare.h)
  CompareVerdict verdict = CompareVerdict::kNoChange;
  std::vector<std::string> reasons;  // why the verdict, for people
  // What the figures are when the caller normalised the runs (normalize.h): "token", and why.
  std::string normalization = "none", normalization_reason;
};

// A single pair of runs has one sample per side: no interval, no significance (group_compare.h).
inline constexpr std::string_view kNoStatistics =
    "none possible (one sample per side: run `kernlens profile --repeat N`, or give several runs per side)";

// Both runs must outlive the result (it points into their kernels).
Comparison compare_runs(const model::RunRecord& base, const model::RunRecord& candidate,
                        const CompareOptions& options);

}  // namespace kernlens::analysis

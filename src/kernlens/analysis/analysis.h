// The whole analysis of one profile: the kernel, family and stage tables (aggregate.h), and
// for each kernel and family what it measured, its bottleneck and advice; for each stage its FLOPs and MFU; and
// how much of the kernel time the deep metrics cover.
//
//   auto a = analyze(profile, classifier, options);   // errors are bad user options
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernlens/analysis/advice.h"
#include "kernlens/analysis/aggregate.h"
#include "kernlens/analysis/bottleneck.h"
#include "kernlens/analysis/flops.h"
#include "kernlens/analysis/kernel_metrics.h"
#include "kernlens/analysis/mfu.h"
#include "kernlens/analysis/peaks.h"
#include "kernlens/analysis/ranks.h"
#include "kernlens/common/error.h"
#include "kernlens/model/profile.h"

namespace kernlens {
class StepTimes;
}

namespace kernlens::analysis {

struct AnalysisOptions {
  BottleneckThresholds thresholds;
  UserWork work;
  std::size_t top_stalls = 3;
  StepTimes* step_times = nullptr;  // where the time goes, step by step (--verbose); not owned
};

struct KernelInsight {
  KernelMetrics metrics;
  FlopsTotal flops;  // over all its launches: measured, carried over, or an interval (flops.h)
  Verdict verdict;
  std::vector<Advice> advice;  // kernlens's rules first, then ncu's by estimated speedup
};

// Which share of the kernel time has deep metrics (ncu throughput figures).
struct MetricCoverage {
  double kernel_time_ns = 0;
  double deep_time_ns = 0;
  std::uint64_t launches = 0;
  std::uint64_t deep_launches = 0;
  // Kernels with deep metrics on at least one launch, and their whole time: what a deep pass
  // on representative launches (kernlens profile) explains.
  std::uint64_t kernels = 0;
  std::uint64_t measured_kernels = 0;
  double measured_kernel_time_ns = 0;
  std::optional<double> measured_kernel_fraction() const {
    if (kernel_time_ns <= 0) return std::nullopt;
    return measured_kernel_time_ns / kernel_time_ns;
  }
  std::optional<double> fraction() const {
    if (kernel_time_ns <= 0) return std::nullopt;
    return deep_time_ns / kernel_time_ns;
  }
};

struct Analysis {
  Aggregate agg;
  std::vector<KernelInsight> kernels;   // one per agg.kernels row, same order
  std::vector<KernelInsight> families;  // one per agg.families row, same order
  std::vector<StageWork> stages;       // one per agg.stages row, same order
  StageWork whole;                     // every kernel of the profile
  bool flops_measured = false;         // some launch has FLOP counters
  std::optional<PeakRates> peaks;      // the GPU's peaks (MFU, and roofs the profile lacks)
  std::string no_peaks_reason;         // why peaks is absent
  MetricCoverage coverage;
  RankAnalysis ranks;  // per rank and GPU; shown when the inputs hold more than one rank
};

// `classifier` names and classifies the kernels; it must outlive the result.
Result<Analysis> analyze(const model::Profile& profile, const names::KernelClassifier& classifier,
                         const AnalysisOptions& options);

// The metric names the analysis reads: what a reader must keep (ingest::ReadOptions).
std::vector<std::string> analysis_metric_names();

}  // namespace kernlens::analysis

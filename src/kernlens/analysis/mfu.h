// Model FLOPs utilisation per stage: the FLOP/s a stage achieved over the peak of its
// dominant precision. FLOPs are measured, kernel by kernel (flops.h: each launch gets its own
// kernel's measured count or rate; kernels never measured add an interval, so the stage's
// FLOPs and MFU are an interval too), or given by the user (--model-flops, or --params N
// --tokens T with the 2*N*T rule of thumb). The time is the stage's wall time on a timeline,
// else its kernel time (ncu runs kernels one at a time).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/analysis/flops.h"
#include "kernlens/analysis/metrics.h"
#include "kernlens/analysis/model_flops.h"
#include "kernlens/analysis/peaks.h"
#include "kernlens/common/error.h"
#include "kernlens/model/profile.h"

namespace kernlens::analysis {

// The model and what the program ran, for analytic FLOPs (model_flops.h) of the stages named
// "prefill" and "decode".
struct AnalyticWork {
  ModelConfig config;
  std::string config_path;  // where it was read, for the source lines
  Workload workload;
  // How many times the program ran each stage (warm-up runs included); absent: the range's
  // instances on a timeline, else 1.
  std::optional<std::int64_t> runs;
};

// Measured / analytic FLOPs outside [kRatioLow, kRatioHigh] is flagged: the profile missed work
// or counted some twice (or the workload given is not what ran).
inline constexpr double kRatioLow = 0.8, kRatioHigh = 1.25;

// What the user says about the work. A stage of "" means the whole profile.
struct UserWork {
  std::optional<double> params;                             // --params N
  std::vector<std::pair<std::string, double>> tokens;       // --tokens [STAGE=]T
  std::vector<std::pair<std::string, double>> model_flops;  // --model-flops [STAGE=]F
  std::optional<FlopPath> precision;                        // --precision
  std::optional<AnalyticWork> analytic;                     // --model-config ...
};

struct StageWork {
  std::optional<double> flops;       // what is known; absent: nothing of the stage measured
  std::optional<double> flops_low;   // the interval: at least (the known part)
  std::optional<double> flops_high;  // at most; absent: no upper bound (or nothing measured)
  std::string flops_source;          // how flops was found, or why it is absent
  std::optional<FlopPath> precision;
  std::string precision_source;     // "measured", "--precision", "assumed"
  std::optional<double> mfu;        // 0..1: flops / (time x peak)
  std::optional<double> mfu_low;    // with mfu: flops_low / (time x peak)
  std::optional<double> mfu_high;   // with mfu: flops_high / (time x peak); absent: no upper bound
  std::optional<double> peak_flops_per_s;  // the precision's peak (its source: MfuInput::peaks)
  double time_ns = 0;               // the time it divides by
  std::string_view time_basis;      // "wall time" (a timeline) or "kernel time" (ncu)
  std::string mfu_missing;          // why mfu is absent
  std::optional<double> coverage;   // share of the stage's kernel time with deep metrics

  // Analytic FLOPs from the model's config, beside the measured ones (never in their place).
  std::optional<double> analytic_flops;
  std::string analytic_source;      // how they were counted, or why they are absent
  std::optional<double> analytic_mfu;
  std::optional<double> flops_ratio;       // flops / analytic_flops
  std::optional<double> flops_ratio_high;  // flops_high / analytic_flops
  std::string flops_ratio_flag;            // said when the ratio is far from 1
};

struct MfuInput {
  const model::Profile& profile;
  const MetricResolver& resolver;
  const FlopsEstimates& flops;       // every launch's FLOPs
  const PeakRates* peaks = nullptr;  // the GPU's peaks; null when unknown
  std::string no_peaks_reason;       // said when peaks is null
};

struct ProfileWork {
  std::vector<StageWork> stages;  // one per stage row, in order
  StageWork whole;                // every kernel of the profile (stage "" in UserWork)
};
// The work of each stage row and of the whole profile, from one pass over the launches. The
// whole profile's time is the kWholeRunStage row's wall time on a timeline, else its kernel
// time; its analytic FLOPs add up the outermost prefill and decode rows. Errors: a
// --tokens/--model-flops stage that names no stage row (the message lists them).
Result<ProfileWork> profile_work(const MfuInput& input, const std::vector<StageRow>& stages, const UserWork& user);

// Parses "STAGE=NUMBER" or "NUMBER" (--tokens, --model-flops); NUMBER may use e notation.
Result<std::pair<std::string, double>> parse_stage_value(std::string_view text);

}  // namespace kernlens::analysis

// FLOPs of every kernel launch, from each kernel's own measurements; then sums over a kernel,
// a family or a stage, with an interval for the kernels nobody measured.
//
// A profile run times every launch and measures (Nsight Compute's FLOP counters) one
// representative launch of each hot kernel. Each launch gets, by the first that applies:
//   measured    its own FLOP counters;
//   same shape  the count of a measured launch of the same kernel with the same grid, block,
//               registers and shared memory and a duration within kSameShapeDurationRatio of
//               it (same grid but another duration: another problem size, e.g. another K);
//   rate        the kernel's measured FLOP rate x its own duration (another shape);
//   no work     a kernel never measured whose op class does no floating-point work (copies,
//               memsets, sorts, embedding lookups): exactly 0;
//   unmeasured  any other kernel never measured: an interval, not a guess: at least 0, at most
//               its duration x what its op class can run at: for classes that run on CUDA
//               cores, the fastest measured kernel of the class (capped at the GPU's SIMT
//               peak; that peak when none was measured); for GEMM, attention and unknown
//               kernels, the GPU's peak on the fastest compute path that measured kernels of
//               these classes ran on (a larger GEMM runs faster than any measured one: their
//               rates are no bound), no upper bound when none was measured or the GPU's peaks
//               are unknown.
// One kernel's work is never scaled onto another: rates carry over only between launches of
// one kernel name.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernlens/analysis/metrics.h"
#include "kernlens/analysis/peaks.h"
#include "kernlens/model/profile.h"
#include "kernlens/names/rules.h"

namespace kernlens::analysis {

// A launch whose duration is within this factor of a measured launch of the same kernel and
// launch configuration did the same work.
inline constexpr double kSameShapeDurationRatio = 1.25;

enum class FlopsBasis : std::uint8_t { kMeasured, kSameShape, kRate, kNoWork, kUnmeasured, kCount };
inline constexpr std::size_t kFlopsBasisCount = static_cast<std::size_t>(FlopsBasis::kCount);
std::string_view basis_name(FlopsBasis basis);  // "measured", "same shape", "rate x duration", ...

// One launch record (all its `count` executions).
struct LaunchEstimate {
  std::optional<FlopsBasis> basis;  // absent: not a kernel, or nothing can be said (no duration)
  double flops = 0;                 // measured, same shape, rate; 0 otherwise
  // Unmeasured: at most this many FLOP per ns of the launch's duration; absent: no upper bound.
  std::optional<double> high_per_ns;
  std::array<double, kFlopPathCount> by_path{};  // `flops` by compute path
};

// Every launch's estimate. A launch measured or carried over from a measurement has one of its
// own; the others (most launches of a timeline, where nothing was measured) share one per
// basis and op class, so a million timeline launches cost 4 bytes each, not an estimate each.
struct FlopsEstimates {
  std::vector<std::uint32_t> of_launch;  // by index into Profile::launches: index into `estimates`
  std::vector<LaunchEstimate> estimates;
  bool any_measured = false;             // some launch of the profile has FLOP counters
  // When none has: what the launches that were profiled lack (empty: none was profiled).
  std::string why_not_measured;

  const LaunchEstimate& launch(std::size_t index) const { return estimates[of_launch[index]]; }
};

// `op_class_by_name[id]` is the op class of kernel name `id` (Profile::names). `peaks` (may be
// null) caps the SIMT classes.
FlopsEstimates estimate_flops(const model::Profile& profile, const MetricResolver& resolver,
                              std::span<const names::OpClass> op_class_by_name, const PeakRates* peaks);

// The FLOPs of a set of launches: a known part (measured and carried over within kernels) and
// what kernels never measured may add.
struct FlopsTotal {
  double flops = 0;                 // the known part: flops_low
  double unmeasured_high = 0;       // at most this much more, when bounded
  bool bounded = true;              // false: an unmeasured kernel has no upper bound
  std::array<double, kFlopPathCount> by_path{};
  std::array<double, kFlopsBasisCount> time_ns{};  // kernel time by basis
  double untimed_launches = 0;      // launches that could not be estimated (no duration)

  // `duration_ns`: the launch's total duration (Launch::total_duration_ns).
  void add(const LaunchEstimate& estimate, std::optional<double> duration_ns);
  // The sums of later launches added (see kSumStretchLaunches).
  void merge(const FlopsTotal& later);
  double low() const { return flops; }
  std::optional<double> high() const {
    return bounded ? std::optional<double>(flops + unmeasured_high) : std::nullopt;
  }
  // Whether anything is known: a launch measured, carried over, or of a class with no work.
  bool known() const;
  bool all_measured() const;
  std::optional<FlopPath> dominant_path() const;
  // How the FLOPs were found, e.g. "measured on 62.1% of the kernel time, same shape 30.4%,
  // rate x duration 5.0%; 2.5% in kernels never measured (at most +1.2 GFLOP)".
  std::string source() const;
};

}  // namespace kernlens::analysis

// What a group of launches (one kernel, or one family) measured, summed up for people:
// figures as duration-weighted means, work (FLOPs) and DRAM traffic as totals, the roofs the
// kernel ran under, the occupancy limiter and the top warp stalls. Every number keeps the
// metric (or derivation) it came from. Nothing measured stays absent: never a made-up 0.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernlens/analysis/metrics.h"
#include "kernlens/analysis/peaks.h"
#include "kernlens/model/profile.h"

namespace kernlens::analysis {

struct Figured {
  double value = 0;
  std::string source;  // metric name, or how it was derived
};

struct StallShare {
  std::string reason;   // ncu's name: "long_scoreboard", "barrier", ...
  double warps_per_issue = 0;  // warps stalled for it per issued instruction (ncu's ratio)
  double share = 0;     // of all cycles between two issues, 0..1
};

struct KernelMetrics {
  std::uint64_t launches = 0;        // kernel launches in the group
  std::uint64_t deep_launches = 0;   // of those, launches with throughput figures (SOL), timed or not
  double time_ns = 0;                // their total duration
  double deep_time_ns = 0;           // of launches with throughput figures (SOL)
  std::array<std::optional<Figured>, kFigureCount> figures;  // duration-weighted means

  // Work and traffic, summed over the launches that measured them, and those launches' time.
  std::optional<Figured> flops;
  std::array<std::optional<double>, kFlopPathCount> flops_by_path{};
  double flops_time_ns = 0;
  std::string flops_missing;         // why flops is absent (when it is)
  std::optional<Figured> dram_bytes;
  double dram_time_ns = 0;
  std::optional<FlopPath> dominant_path;  // the path that did most of the FLOPs
  // FLOPs and bytes of the launches that measured both: arithmetic intensity's terms.
  double intensity_flops = 0;
  double intensity_bytes = 0;

  // Roofs: the dominant path's peak and the DRAM peak, at the clocks the kernel ran at when
  // the profile has ncu's peak metrics (as ncu's roofline draws them), else the GPU table's.
  std::optional<Figured> peak_flops_per_s;
  std::optional<Figured> peak_dram_bytes_per_s;

  std::vector<std::string> occupancy_limiters;  // "registers", "shared_mem", "warps", ...
  std::vector<StallShare> top_stalls;           // largest first

  const std::optional<Figured>& figure(Figure f) const { return figures[static_cast<std::size_t>(f)]; }
  std::optional<double> value(Figure f) const {
    const auto& v = figure(f);
    return v ? std::optional<double>(v->value) : std::nullopt;
  }
  // FLOP per DRAM byte, over the launches that measured both.
  std::optional<double> arithmetic_intensity() const;
  std::optional<double> achieved_flops_per_s() const;
  std::optional<double> achieved_dram_bytes_per_s() const;
};

struct MetricsContext {
  const model::Profile& profile;
  const MetricResolver& resolver;
  const PeakRates* device_peaks = nullptr;  // the fallback roofs (GPU table), may be null
  std::size_t top_stalls = 3;
};

// Sums over many launches are taken in fixed stretches of this many launches in order, each
// summed from zero and the stretches' sums then added in order: the figures do not depend on
// how many threads sum the stretches (fractional sums grouped otherwise differ in their last
// bits), and a kernel of a million launches is summed on every thread. Up to one stretch, a
// sum is that of one pass.
inline constexpr std::size_t kSumStretchLaunches = 4096;

// f(begin, end) for each stretch of [0, count), in order.
template <class F>
void for_each_sum_stretch(std::size_t count, F&& f) {
  for (std::size_t begin = 0; begin < count; begin += kSumStretchLaunches) f(begin, std::min(count, begin + kSumStretchLaunches));
}

// A duration-weighted mean, and the source of its first value.
class WeightedMean {
 public:
  void add(double value, double weight, std::string_view source) {
    if (source_.empty()) source_ = source;
    sum_ += value * weight;
    weight_ += weight;
  }
  // The same, with a source that is only worked out for the first value.
  template <typename SourceFn>
  void add_lazy(double value, double weight, SourceFn&& source) {
    if (source_.empty()) source_ = source();
    sum_ += value * weight;
    weight_ += weight;
  }
  // The values of a later stretch added.
  void merge(const WeightedMean& later);
  std::optional<Figured> result() const {
    if (weight_ <= 0) return std::nullopt;
    return Figured{sum_ / weight_, source_};
  }

 private:
  double sum_ = 0;
  double weight_ = 0;
  std::string source_;  // of the first value: sources may be temporaries
};

// What a group of launches measured, summed over launches added in order: merge() adds a later
// stretch's sums (kSumStretchLaunches), then finish() makes the figures.
class LaunchSums {
 public:
  LaunchSums();
  void add(const MetricsContext& ctx, std::span<const model::LaunchIndex> launch_indices);
  void merge(LaunchSums&& later);
  KernelMetrics finish(const MetricsContext& ctx) &&;

 private:
  void add(const MetricResolver& r, const model::Launch& launch);

  KernelMetrics m_;  // its counts and sums so far
  std::array<WeightedMean, kFigureCount> means_;
  // Roofs of every path, as the dominant one is known only at the end: one pass over the
  // launches touches each launch's samples once (a second pass was a tenth of `analyze`).
  std::array<WeightedMean, kFlopPathCount> flops_peaks_;
  WeightedMean dram_peak_;
  std::vector<double> stall_sums_;
  std::vector<bool> stall_seen_;
  double stall_total_ = 0;
  double stall_weight_ = 0;
  const model::Launch* longest_with_limits_ = nullptr;
  std::string why_;                                   // scratch: why a launch has no FLOPs
  std::vector<std::pair<std::size_t, double>> stalls_;  // scratch: a launch's stalls
};

// The FLOPs of one launch, when its work was measured completely: tensor paths (or a tensor
// pipe that was idle) and the fp32 SIMT path at least. `why_not` says what is missing.
// `with_source`: spell out the counters summed (only the first launch's source is shown, and
// formatting it for each of a million launches was a tenth of `analyze` on a big raw page).
struct LaunchFlops {
  double total = 0;
  std::array<std::optional<double>, kFlopPathCount> by_path{};
  std::string source;  // empty without `with_source`
};
std::optional<LaunchFlops> launch_flops(const MetricResolver& resolver, const model::Launch& launch,
                                        std::string* why_not, bool with_source = true);

// DRAM bytes of one launch: dram__bytes.sum, else read + write, else rate x duration; the
// source is empty without `with_source`.
std::optional<Figured> launch_dram_bytes(const MetricResolver& resolver, const model::Launch& launch,
                                         bool with_source = true);

}  // namespace kernlens::analysis

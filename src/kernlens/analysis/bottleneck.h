// Why a kernel is slow, in one word and the numbers behind it.
//
//   launch   so short that launching it costs about as much as running it (decode)
//   compute  SM throughput decides: at or above the threshold and clearly above memory
//   memory   memory throughput decides, led by DRAM
//   cache    memory throughput decides, led by L1 or L2 while DRAM is below the threshold
//   mixed    SM and memory both at or above the threshold, within the balance margin
//   latency  both below the threshold: the kernel waits (small grid, stalls, low occupancy)
//   unknown  what decides was not measured; the reason says what is missing
//
// The thresholds start from Nsight Compute's own SOLBottleneck guidance (60% decides, SM and
// memory within 10 points are balanced) and can be changed on the command line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernlens/analysis/kernel_metrics.h"

namespace kernlens::analysis {

enum class Bottleneck : std::uint8_t { kCompute, kMemory, kLatency, kLaunch, kCache, kMixed, kUnknown };
std::string_view bottleneck_name(Bottleneck b);

struct BottleneckThresholds {
  double throughput_pct = 60;      // SM or memory throughput at or above this decides
  double balance_pct = 10;         // SM and memory closer than this (points) are balanced
  double launch_bound_ns = 5000;   // a mean duration below this is launch-bound
};

struct Verdict {
  Bottleneck kind = Bottleneck::kUnknown;
  std::string reason;  // for people, with the numbers: "SM 90.0% >= 60%, 20.4 points above memory 69.6%"
  std::vector<std::pair<std::string, double>> evidence;  // figure key -> value, as in `metrics`
};

Verdict classify_bottleneck(const KernelMetrics& metrics, std::optional<double> mean_ns,
                            const BottleneckThresholds& thresholds);

}  // namespace kernlens::analysis

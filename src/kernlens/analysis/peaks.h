// Peak rates of a GPU: FLOP/s per compute path and DRAM bytes/s, with where they came from.
//
//   const GpuPeakTable& table = builtin_gpu_peaks();         // data/gpu_peaks.txt
//   const PeakRates* h100 = table.find("NVIDIA H100 80GB HBM3");
//   h100->flops_per_s[FlopPath::kTensorBf16]                 // 989.4e12, dense
//
// The table holds datasheet peaks (dense, not sparse) by the device name drivers report.
// peaks_from_metrics() derives the same from a profile's own Nsight Compute metrics
// (peak per cycle x the GPU's maximum SM clock), for GPUs the table does not know.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/analysis/metrics.h"
#include "kernlens/common/error.h"
#include "kernlens/model/profile.h"

namespace kernlens::analysis {

inline constexpr std::size_t kFlopPathCount = static_cast<std::size_t>(FlopPath::kCount);

struct PeakRates {
  std::string gpu;  // the device name
  std::array<std::optional<double>, kFlopPathCount> flops_per_s{};
  std::optional<double> dram_bytes_per_s;
  std::string source;  // e.g. "NVIDIA H100 Tensor Core GPU datasheet, ..."

  std::optional<double> flops(FlopPath path) const { return flops_per_s[static_cast<std::size_t>(path)]; }
};

class GpuPeakTable {
 public:
  // Parses the text of a peaks file (format: data/gpu_peaks.txt). `origin` names it in errors.
  static Result<GpuPeakTable> parse(std::string_view text, std::string_view origin);

  // The entry for a device name as the driver reports it (case and outer spaces ignored).
  const PeakRates* find(std::string_view device_name) const;
  const std::vector<PeakRates>& gpus() const { return gpus_; }

 private:
  std::vector<PeakRates> gpus_;
};

// The table compiled into kernlens from data/gpu_peaks.txt.
const GpuPeakTable& builtin_gpu_peaks();
std::string_view builtin_gpu_peaks_text();  // generated from data/gpu_peaks.txt

// Peaks from the profile's own metrics on `launch` (ncu's *.peak_sustained per cycle x the
// device's maximum SM clock, device__attribute_clock_rate); absent paths stay empty.
// nullopt when the launch carries no peak metric or no clock.
std::optional<PeakRates> peaks_from_metrics(const MetricResolver& resolver, const model::Launch& launch,
                                            const model::Device& device);

}  // namespace kernlens::analysis

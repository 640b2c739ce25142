#include "kernlens/report/summary.h"

#include <fmt/format.h>

#include "kernlens/report/format.h"

namespace kernlens::report {

std::string describe_input(const model::InputInfo& input) {
  return input.description.empty() ? std::string(model::format_id(input.format)) : input.description;
}

std::string peaks_line(const analysis::PeakRates& p) {
  std::vector<std::string> parts;
  for (auto path : {analysis::FlopPath::kTensorBf16, analysis::FlopPath::kTensorFp8, analysis::FlopPath::kSimtFp32}) {
    if (auto v = p.flops(path)) parts.push_back(fmt::format("{} {}", human_si(*v, "FLOP/s"), analysis::path_name(path)));
  }
  if (p.dram_bytes_per_s) parts.push_back(fmt::format("{} DRAM", human_si(*p.dram_bytes_per_s, "B/s")));
  return fmt::format("{} ({})", fmt::join(parts, ", "), p.source);
}

std::string coverage_line(const analysis::MetricCoverage& c) {
  auto f = c.fraction();
  if (!f || c.deep_launches == 0) return "none: kernel times only (profile with ncu for bottlenecks and roofs)";
  auto kernels = c.measured_kernel_fraction();
  if (kernels && *kernels > *f + 1e-9) {  // some kernels measured on a few launches
    return fmt::format("ncu throughput metrics for {} of {} kernels, {} of kernel time (measured on {} of {} "
                       "launches)",
                       c.measured_kernels, c.kernels, human_percent(*kernels), c.deep_launches, c.launches);
  }
  return fmt::format("ncu throughput metrics cover {} of kernel time ({} of {} launches)", human_percent(*f),
                     c.deep_launches, c.launches);
}

std::string device_line(const model::Profile& profile, const analysis::Analysis& analysis) {
  if (!analysis.agg.device_ordinal) return "";
  const model::Device* d = profile.find_device(*analysis.agg.device_ordinal);
  if (!d) return "";
  std::string gpu = d->name.empty() ? fmt::format("device {}", d->ordinal) : d->name;
  if (!d->cc.empty()) gpu += fmt::format(", cc {}", d->cc);
  if (d->sm_count) gpu += fmt::format(", {} SMs", *d->sm_count);
  return gpu;
}

std::string mfu_note(const analysis::StageWork& w) {
  if (!w.mfu) return w.flops ? fmt::format("no MFU: {}", w.mfu_missing) : fmt::format("no MFU: FLOPs {}", w.flops_source);
  std::string precision = w.precision_source == "measured" ? std::string(analysis::path_name(*w.precision))
                                                           : fmt::format("{} {}", analysis::path_name(*w.precision), w.precision_source);
  std::string flops = human_si(*w.flops, "FLOP");
  if (!w.flops_high) {
    flops.insert(0, "at least ");
  } else if (std::string high = human_si(*w.flops_high, "FLOP"); high != flops) {
    flops.append(" to ").append(high);
  }
  return fmt::format("{} / ({} {} x {} {}); FLOPs {}", flops, human_duration_ns(w.time_ns),
                     w.time_basis, human_si(*w.peak_flops_per_s, "FLOP/s"), precision, w.flops_source);
}

std::string mfu_text(const analysis::StageWork& w) {
  if (!w.mfu) return "-";
  std::string point = human_percent(*w.mfu);
  if (!w.mfu_high) return std::string("≥ ").append(human_percent(*w.mfu_low));
  std::string low = human_percent(*w.mfu_low), high = human_percent(*w.mfu_high);
  if (low == point && high == point) return point;
  return fmt::format("{} ({}–{})", point, low.substr(0, low.size() - 1), high);
}

std::string flops_ratio_text(const analysis::StageWork& w) {
  if (!w.flops_ratio) return "-";
  std::string low = fmt::format("{:.2f}", *w.flops_ratio);
  if (!w.flops_ratio_high) return std::string("≥ ").append(low);
  std::string high = fmt::format("{:.2f}", *w.flops_ratio_high);
  return high == low ? low : low.append("–").append(high);
}

std::string analytic_note(const analysis::StageWork& w) {
  if (!w.analytic_flops) return w.analytic_source;
  std::string note = fmt::format("{} analytic ({})", human_si(*w.analytic_flops, "FLOP"), w.analytic_source);
  if (w.analytic_mfu) note.append("; MFU ").append(human_percent(*w.analytic_mfu));
  if (w.flops_ratio) note.append("; measured / analytic ").append(flops_ratio_text(w));
  if (!w.flops_ratio_flag.empty()) note.append(". Far from 1: ").append(w.flops_ratio_flag);
  return note;
}

std::string first_sentence(std::string_view text) {
  auto end = text.find(". ");
  return std::string(end == std::string_view::npos ? text : text.substr(0, end + 1));
}

}  // namespace kernlens::report

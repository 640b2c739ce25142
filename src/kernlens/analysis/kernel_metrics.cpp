#include "kernlens/analysis/kernel_metrics.h"

#include <algorithm>

#include <fmt/format.h>

namespace kernlens::analysis {
namespace {

bool is_tensor(FlopPath path) { return path >= FlopPath::kTensorFp64; }

// Adds a launch's roof, at the clock it ran at (peak per cycle x the measured cycles per
// second), to `mean`; its source is written out once, for the first launch that has one.
void add_launch_roof(WeightedMean& mean, std::optional<Sourced> per_cycle, std::optional<Sourced> clock,
                     double weight) {
  if (!per_cycle || !clock) return;
  mean.add_lazy(per_cycle->value * clock->value, weight,
                [&] { return fmt::format("{} x {}", per_cycle->source, clock->source); });
}

constexpr std::array<std::pair<Figure, std::string_view>, 5> kBlockLimits = {{
    {Figure::kBlockLimitRegisters, "registers"},
    {Figure::kBlockLimitSharedMem, "shared_mem"},
    {Figure::kBlockLimitWarps, "warps"},
    {Figure::kBlockLimitBlocks, "blocks"},
    {Figure::kBlockLimitBarriers, "barriers"},
}};

// The resources that allow the fewest blocks per SM, when occupancy is below 100%.
std::vector<std::string> occupancy_limiters(const MetricResolver& r, const model::Launch& launch) {
  auto theoretical = r.get(launch, Figure::kTheoreticalOccupancyPct);
  if (theoretical && theoretical->value >= 99.95) return {};
  std::optional<double> least;
  std::vector<std::string> names;
  for (const auto& [figure, name] : kBlockLimits) {
    auto v = r.get(launch, figure);
    if (!v) continue;
    if (!least || v->value < *least) {
      least = v->value;
      names.clear();
    }
    if (v->value == *least) names.emplace_back(name);
  }
  return names;
}

bool has_block_limits(const MetricResolver& r, const model::Launch& launch) {
  return std::any_of(kBlockLimits.begin(), kBlockLimits.end(),
                     [&](const auto& l) { return r.get(launch, l.first).has_value(); });
}

// The launches of one kernel lie far apart in the profile (a decode step runs dozens of
// kernels between two of them), so each launch record, and then its samples, is a cache miss
// the hardware cannot foresee (perf: most of summing a kernel's launches was waiting for them).
// They are fetched a few launches ahead: the record first, its samples once it has come.
class LaunchPrefetcher {
 public:
  LaunchPrefetcher(const model::Profile& profile, std::span<const model::LaunchIndex> indices)
      : profile_(profile), indices_(indices) {}
  void ahead_of(std::size_t i) const {
    if (i + kRecordsAhead < indices_.size()) {
      const char* record = reinterpret_cast<const char*>(&profile_.launches[indices_[i + kRecordsAhead]]);
      __builtin_prefetch(record);
      __builtin_prefetch(record + sizeof(model::Launch) - 1);
    }
    if (i + kSamplesAhead < indices_.size()) {
      const model::Launch& next = profile_.launches[indices_[i + kSamplesAhead]];
      const auto samples = profile_.metrics_of(next);
      const char* begin = reinterpret_cast<const char*>(samples.data());
      const char* end = begin + samples.size_bytes();
      for (const char* line = begin; line < end; line += kCacheLine) __builtin_prefetch(line);
    }
  }

 private:
  static constexpr std::size_t kRecordsAhead = 8, kSamplesAhead = 4, kCacheLine = 64;
  const model::Profile& profile_;
  std::span<const model::LaunchIndex> indices_;
};

}  // namespace

std::optional<double> KernelMetrics::arithmetic_intensity() const {
  if (intensity_bytes <= 0) return std::nullopt;
  return intensity_flops / intensity_bytes;
}

std::optional<double> KernelMetrics::achieved_flops_per_s() const {
  if (!flops || flops_time_ns <= 0) return std::nullopt;
  return flops->value / (flops_time_ns * 1e-9);
}

std::optional<double> KernelMetrics::achieved_dram_bytes_per_s() const {
  if (!dram_bytes || dram_time_ns <= 0) return std::nullopt;
  return dram_bytes->value / (dram_time_ns * 1e-9);
}

std::optional<LaunchFlops> launch_flops(const MetricResolver& resolver, const model::Launch& launch,
                                        std::string* why_not, bool with_source) {
  auto fail = [&](std::string_view why) -> std::optional<LaunchFlops> {
    if (why_not) *why_not = std::string(why);
    return std::nullopt;
  };
  LaunchFlops out;
  std::vector<std::string_view> sources;
  bool tensor_measured = false;
  for (std::size_t i = 0; i < kFlopPathCount; ++i) {
    auto path = static_cast<FlopPath>(i);
    auto f = resolver.flops(launch, path);
    if (!f) {
      if (path == FlopPath::kSimtFp32) {
        return fail("SIMT work not measured (SASS fadd/fmul/ffma counts: ncu section "
                    "SpeedOfLight_RooflineChart)");
      }
      continue;
    }
    tensor_measured = tensor_measured || is_tensor(path);
    out.by_path[i] = f->value;
    out.total += f->value;
    if (with_source && f->value > 0) sources.push_back(f->source);
  }
  if (!tensor_measured) {
    // Without the tensor counters, an idle tensor pipe still proves there was no tensor work.
    auto pipe = resolver.get(launch, Figure::kTensorPipePct);
    if (!pipe || pipe->value != 0) {
      return fail("tensor-core work not measured (ncu section "
                  "SpeedOfLight_HierarchicalTensorRooflineChart)");
    }
  }
  if (!with_source) return out;
  if (sources.empty()) sources.push_back(resolver.flops(launch, FlopPath::kSimtFp32)->source);
  out.source = fmt::format("{}", fmt::join(sources, " + "));
  return out;
}

std::optional<Figured> launch_dram_bytes(const MetricResolver& resolver, const model::Launch& launch,
                                         bool with_source) {
  if (auto total = resolver.get(launch, Figure::kDramBytes)) {
    return Figured{total->value, with_source ? std::string(total->source) : std::string()};
  }
  auto read = resolver.get(launch, Figure::kDramReadBytes);
  auto write = resolver.get(launch, Figure::kDramWriteBytes);
  if (read && write) {
    return Figured{read->value + write->value,
                   with_source ? fmt::format("{} + {}", read->source, write->source) : std::string()};
  }
  auto rate = resolver.get(launch, Figure::kDramBytesPerSecond);
  if (rate && launch.duration_ns) {
    return Figured{rate->value * *launch.duration_ns * 1e-9,
                   with_source ? fmt::format("{} x duration", rate->source) : std::string()};
  }
  return std::nullopt;
}

void WeightedMean::merge(const WeightedMean& later) {
  if (source_.empty()) source_ = later.source_;
  sum_ += later.sum_;
  weight_ += later.weight_;
}

LaunchSums::LaunchSums()
    : stall_sums_(MetricResolver::stall_reason_count()), stall_seen_(stall_sums_.size()) {}

void LaunchSums::add(const MetricsContext& ctx, std::span<const model::LaunchIndex> launch_indices) {
  const LaunchPrefetcher prefetcher(ctx.profile, launch_indices);
  for (std::size_t i = 0; i < launch_indices.size(); ++i) {
    prefetcher.ahead_of(i);
    add(ctx.resolver, ctx.profile.launches[launch_indices[i]]);
  }
}

void LaunchSums::add(const MetricResolver& r, const model::Launch& launch) {
  KernelMetrics& m = m_;
  if (launch.kind != model::LaunchKind::kKernel) return;
  m.launches += launch.count;
  const bool deep = launch.metrics_count > 0 && r.get(launch, Figure::kSmPct);
  if (deep) m.deep_launches += launch.count;
  // Every figure is weighted by time, so a launch without a duration cannot be averaged in.
  auto w = launch.total_duration_ns();
  if (!w || *w <= 0) return;
  m.time_ns += *w;
  if (launch.metrics_count == 0) {  // a timeline's launch: nothing to resolve (a million of them)
    if (m.flops_missing.empty()) launch_flops(r, launch, &m.flops_missing, /*with_source=*/false);
    return;
  }
  for (std::size_t f = 0; f < kFigureCount; ++f) {
    if (auto v = r.get(launch, static_cast<Figure>(f))) means_[f].add(v->value, *w, v->source);
  }
  if (deep) m.deep_time_ns += *w;
  auto sm_clock = r.get(launch, Figure::kSmClockHz);
  for (std::size_t p = 0; p < kFlopPathCount; ++p) {
    add_launch_roof(flops_peaks_[p], r.peak_flops_per_cycle(launch, static_cast<FlopPath>(p)), sm_clock, *w);
  }
  add_launch_roof(dram_peak_, r.dram_peak_bytes_per_cycle(launch), r.get(launch, Figure::kDramClockHz), *w);
  auto lf = launch_flops(r, launch, m.flops_missing.empty() ? &why_ : nullptr, !m.flops);
  if (lf) {
    if (!m.flops) m.flops = Figured{0, lf->source};
    m.flops->value += lf->total * static_cast<double>(launch.count);
    m.flops_time_ns += *w;
    for (std::size_t p = 0; p < kFlopPathCount; ++p) {
      if (lf->by_path[p]) m.flops_by_path[p] = m.flops_by_path[p].value_or(0) + *lf->by_path[p] * static_cast<double>(launch.count);
    }
  } else if (m.flops_missing.empty()) {
    m.flops_missing = why_;
  }
  auto bytes = launch_dram_bytes(r, launch, !m.dram_bytes);
  if (bytes) {
    if (!m.dram_bytes) m.dram_bytes = Figured{0, bytes->source};
    m.dram_bytes->value += bytes->value * static_cast<double>(launch.count);
    m.dram_time_ns += *w;
  }
  if (lf && bytes) {
    m.intensity_flops += lf->total * static_cast<double>(launch.count);
    m.intensity_bytes += bytes->value * static_cast<double>(launch.count);
  }
  r.stalls(launch, stalls_);
  if (!stalls_.empty()) stall_weight_ += *w;
  for (const auto& [reason, ratio] : stalls_) {
    stall_sums_[reason] += ratio * *w;
    stall_seen_[reason] = true;
    stall_total_ += ratio * *w;
  }
  if (has_block_limits(r, launch) && (!longest_with_limits_ || *w > *longest_with_limits_->total_duration_ns())) {
    longest_with_limits_ = &launch;
  }
}

namespace {

// later's sum added to `sum` (an absent one is 0), as its launches would have added it.
void merge_sum(std::optional<double>& sum, const std::optional<double>& later) {
  if (later) sum = sum.value_or(0) + *later;
}
void merge_sum(std::optional<Figured>& sum, const std::optional<Figured>& later) {
  if (!later) return;
  if (!sum) sum = Figured{0, later->source};  // the first launch's source
  sum->value += later->value;
}

}  // namespace

void LaunchSums::merge(LaunchSums&& later) {
  KernelMetrics& m = m_;
  const KernelMetrics& l = later.m_;
  m.launches += l.launches;
  m.deep_launches += l.deep_launches;
  m.time_ns += l.time_ns;
  m.deep_time_ns += l.deep_time_ns;
  if (m.flops_missing.empty()) m.flops_missing = l.flops_missing;
  merge_sum(m.flops, l.flops);
  m.flops_time_ns += l.flops_time_ns;
  for (std::size_t p = 0; p < kFlopPathCount; ++p) merge_sum(m.flops_by_path[p], l.flops_by_path[p]);
  merge_sum(m.dram_bytes, l.dram_bytes);
  m.dram_time_ns += l.dram_time_ns;
  m.intensity_flops += l.intensity_flops;
  m.intensity_bytes += l.intensity_bytes;
  for (std::size_t f = 0; f < kFigureCount; ++f) means_[f].merge(later.means_[f]);
  for (std::size_t p = 0; p < kFlopPathCount; ++p) flops_peaks_[p].merge(later.flops_peaks_[p]);
  dram_peak_.merge(later.dram_peak_);
  for (std::size_t i = 0; i < stall_sums_.size(); ++i) {
    stall_sums_[i] += later.stall_sums_[i];
    stall_seen_[i] = stall_seen_[i] || later.stall_seen_[i];
  }
  stall_total_ += later.stall_total_;
  stall_weight_ += later.stall_weight_;
  const model::Launch* other = later.longest_with_limits_;
  if (other && (!longest_with_limits_ || *other->total_duration_ns() > *longest_with_limits_->total_duration_ns())) {
    longest_with_limits_ = other;
  }
}

KernelMetrics LaunchSums::finish(const MetricsContext& ctx) && {
  const MetricResolver& r = ctx.resolver;
  KernelMetrics m = std::move(m_);
  for (std::size_t f = 0; f < kFigureCount; ++f) m.figures[f] = means_[f].result();
  if (m.flops) {
    double best = 0;
    for (std::size_t p = 0; p < kFlopPathCount; ++p) {
      if (m.flops_by_path[p] && *m.flops_by_path[p] > best) {
        best = *m.flops_by_path[p];
        m.dominant_path = static_cast<FlopPath>(p);
      }
    }
  }
  // Roofs: the launches' own (weighted like the figures), else the GPU's datasheet peaks;
  // only next to what was measured against them.
  if (m.dominant_path) m.peak_flops_per_s = flops_peaks_[static_cast<std::size_t>(*m.dominant_path)].result();
  m.peak_dram_bytes_per_s = dram_peak_.result();
  if (ctx.device_peaks) {
    if (!m.peak_flops_per_s && m.dominant_path) {
      if (auto v = ctx.device_peaks->flops(*m.dominant_path)) m.peak_flops_per_s = Figured{*v, ctx.device_peaks->source};
    }
    if (!m.peak_dram_bytes_per_s && m.dram_bytes && ctx.device_peaks->dram_bytes_per_s) {
      m.peak_dram_bytes_per_s = Figured{*ctx.device_peaks->dram_bytes_per_s, ctx.device_peaks->source};
    }
  }
  if (longest_with_limits_) m.occupancy_limiters = occupancy_limiters(r, *longest_with_limits_);
  if (stall_total_ > 0) {
    for (std::size_t i = 0; i < stall_sums_.size(); ++i) {
      const std::string_view reason = MetricResolver::stall_reason(i);
      if (!stall_seen_[i] || reason == "selected") continue;  // selected: the warp that issued, not a stall
      m.top_stalls.push_back(StallShare{std::string(reason), stall_sums_[i] / stall_weight_, stall_sums_[i] / stall_total_});
    }
    std::sort(m.top_stalls.begin(), m.top_stalls.end(), [](const StallShare& a, const StallShare& b) {
      return a.share != b.share ? a.share > b.share : a.reason < b.reason;
    });
    if (m.top_stalls.size() > ctx.top_stalls) m.top_stalls.resize(ctx.top_stalls);
  }
  return m;
}

}  // namespace kernlens::analysis

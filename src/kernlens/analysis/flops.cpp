#include "kernlens/analysis/flops.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "kernlens/analysis/kernel_metrics.h"
#include "kernlens/common/memory.h"
#include "kernlens/common/parallel_chunks.h"

namespace kernlens::analysis {
namespace {

using names::OpClass;

// What an op class's kernels can compute, for kernels never measured.
enum class ClassWork : std::uint8_t {
  kNone,  // moves, fills or orders data: no floating-point work
  kSimt,  // arithmetic on CUDA cores, not tensor cores: at most the GPU's SIMT peak
  kAny,   // may use tensor cores (GEMM, attention) or is unknown: no ceiling of its own
};

struct ClassWorkRule {
  OpClass op_class;
  ClassWork work;
};

constexpr ClassWorkRule kClassWork[] = {
    {OpClass::kGemm, ClassWork::kAny},        {OpClass::kAttention, ClassWork::kAny},
    {OpClass::kNorm, ClassWork::kSimt},       {OpClass::kSoftmax, ClassWork::kSimt},
    {OpClass::kElementwise, ClassWork::kSimt}, {OpClass::kReduction, ClassWork::kSimt},
    {OpClass::kCopy, ClassWork::kNone},       {OpClass::kGather, ClassWork::kSimt},
    {OpClass::kScatter, ClassWork::kSimt},    {OpClass::kEmbedding, ClassWork::kNone},
    {OpClass::kSort, ClassWork::kNone},       {OpClass::kRouting, ClassWork::kSimt},
    {OpClass::kComm, ClassWork::kSimt},       {OpClass::kMemset, ClassWork::kNone},
    {OpClass::kOther, ClassWork::kAny},
};
static_assert(std::size(kClassWork) == static_cast<std::size_t>(OpClass::kOther) + 1);

ClassWork class_work(OpClass c) { return kClassWork[static_cast<std::size_t>(c)].work; }

constexpr std::array<std::string_view, kFlopsBasisCount> kBasisNames = {
    "measured", "same shape", "rate x duration", "no work", "never measured"};

// What identifies a launch's problem size on a timeline, besides its duration, is its launch
// configuration: interned, one id per configuration of the profile.
struct MeasuredLaunch {
  model::ConfigId shape;
  std::optional<double> duration_ns;  // per execution
  double flops = 0;                   // per execution
  std::array<double, kFlopPathCount> by_path{};
};

// One kernel name's measured launches and its rate over them.
struct KernelMeasure {
  std::vector<MeasuredLaunch> launches;
  double flops = 0, time_ns = 0;  // over the measured launches with a duration
  std::array<double, kFlopPathCount> by_path{};
  std::optional<double> rate() const {  // FLOP per ns
    return time_ns > 0 ? std::optional<double>(flops / time_ns) : std::nullopt;
  }
};

// The measured launch of the same shape whose duration is nearest, when it did the same work.
const MeasuredLaunch* same_shape(const model::Profile& profile, const KernelMeasure& k, const model::Launch& l) {
  if (!profile.config_of(l).grid.known()) return nullptr;
  const model::ConfigId s = l.config;
  const MeasuredLaunch* best = nullptr;
  double best_ratio = 0;
  for (const auto& m : k.launches) {
    if (!(m.shape == s)) continue;
    if (!l.duration_ns || !m.duration_ns || *m.duration_ns <= 0 || *l.duration_ns <= 0) return &m;
    double ratio = std::max(*l.duration_ns / *m.duration_ns, *m.duration_ns / *l.duration_ns);
    if (!best || ratio < best_ratio) best = &m, best_ratio = ratio;
  }
  return best && best_ratio <= kSameShapeDurationRatio ? best : nullptr;
}

LaunchEstimate measured_kernel_launch(const model::Profile& profile, const KernelMeasure& k, const model::Launch& l) {
  LaunchEstimate e;
  const auto n = static_cast<double>(l.count);
  if (const MeasuredLaunch* m = same_shape(profile, k, l)) {
    e.basis = FlopsBasis::kSameShape;
    e.flops = m->flops * n;
    for (std::size_t p = 0; p < kFlopPathCount; ++p) e.by_path[p] = m->by_path[p] * n;
    return e;
  }
  auto rate = k.rate();
  auto duration = l.total_duration_ns();
  if (!rate || !duration) return e;
  e.basis = FlopsBasis::kRate;
  e.flops = *rate * *duration;
  if (k.flops > 0) {
    for (std::size_t p = 0; p < kFlopPathCount; ++p) e.by_path[p] = k.by_path[p] / k.flops * e.flops;
  }
  return e;
}

// The highest FLOP rate (per ns) a kernel of each op class may run at, when it was never
// measured; absent: no upper bound.
//   no work  0.
//   SIMT     the fastest measured kernel of the class (CUDA-core kernels of one kind run at
//            alike rates, bound by memory), capped at the GPU's SIMT peak; that peak when no
//            kernel of the class was measured.
//   any      the GPU's peak on the fastest compute path that measured kernels of these classes
//            (GEMM, attention, unknown) ran on: measured GEMMs are no bound for another GEMM (a
//            larger one runs faster), the hardware is. None measured: no upper bound.
std::array<std::optional<double>, std::size(kClassWork)> class_ceilings(
    const std::unordered_map<model::NameId, KernelMeasure>& measured, std::span<const OpClass> op_class_by_name,
    const PeakRates* peaks) {
  std::optional<double> simt_peak, measured_path_peak;  // per ns
  std::array<double, kFlopPathCount> measured_by_path{};  // of kernels of the classes without a ceiling
  for (const auto& [name, k] : measured) {
    if (name >= op_class_by_name.size() || class_work(op_class_by_name[name]) != ClassWork::kAny) continue;
    for (std::size_t p = 0; p < kFlopPathCount; ++p) measured_by_path[p] += k.by_path[p];
  }
  if (peaks) {
    for (std::size_t p = 0; p < kFlopPathCount; ++p) {
      auto v = peaks->flops_per_s[p];
      if (!v) continue;
      if (p <= static_cast<std::size_t>(FlopPath::kSimtFp16)) simt_peak = std::max(simt_peak.value_or(0), *v * 1e-9);
      if (measured_by_path[p] > 0) measured_path_peak = std::max(measured_path_peak.value_or(0), *v * 1e-9);
    }
  }
  std::array<std::optional<double>, std::size(kClassWork)> ceiling{};
  for (const auto& [name, k] : measured) {
    auto rate = k.rate();
    if (!rate || name >= op_class_by_name.size()) continue;
    auto& c = ceiling[static_cast<std::size_t>(op_class_by_name[name])];
    c = std::max(c.value_or(0), *rate);
  }
  for (std::size_t c = 0; c < ceiling.size(); ++c) {
    switch (kClassWork[c].work) {
      case ClassWork::kNone: ceiling[c] = 0; break;
      case ClassWork::kSimt:
        if (simt_peak) ceiling[c] = ceiling[c] ? std::min(*ceiling[c], *simt_peak) : *simt_peak;
        break;
      case ClassWork::kAny: ceiling[c] = measured_path_peak; break;
    }
  }
  return ceiling;
}

// The launches of a range of Profile::launches that measured their FLOPs, in order, and why
// the first launch with deep metrics but no FLOPs has none (empty: no such launch).
struct MeasuredRange {
  std::vector<std::pair<std::size_t, MeasuredLaunch>> launches;  // (index into Profile::launches, figures)
  std::string why_not;
};

MeasuredRange measure_range(const model::Profile& profile, const MetricResolver& resolver, std::size_t begin,
                            std::size_t end) {
  MeasuredRange out;
  std::string why;
  for (std::size_t i = begin; i < end; ++i) {
    const model::Launch& l = profile.launches[i];
    if (l.kind != model::LaunchKind::kKernel || !resolver.has_deep_metrics(l)) continue;
    auto lf = launch_flops(resolver, l, out.why_not.empty() ? &why : nullptr, /*with_source=*/false);
    if (!lf) {
      if (out.why_not.empty()) out.why_not = why;
      continue;
    }
    MeasuredLaunch m{l.config, l.duration_ns, lf->total, {}};
    for (std::size_t p = 0; p < kFlopPathCount; ++p) m.by_path[p] = lf->by_path[p].value_or(0);
    out.launches.emplace_back(i, m);
  }
  return out;
}

// Every launch's measured FLOPs, in ranges of launches worked out on up to default_threads()
// threads. Resolving each launch's counters on one thread was a tenth of `analyze` of a 1 GB
// raw page on 16; what the ranges hold is summed in launch order after, as before.
std::vector<MeasuredRange> measure_launches(const model::Profile& profile, const MetricResolver& resolver) {
  // No counters at all (a timeline): nothing to resolve, and no pass over every launch.
  if (profile.metric_samples.empty()) return {};
  constexpr std::size_t kRangeLaunches = 4096;
  const std::size_t n = profile.launches.size();
  std::vector<MeasuredRange> ranges((n + kRangeLaunches - 1) / kRangeLaunches);
  for_each_with_resolver(resolver, ranges.size(), default_threads(), [&](const MetricResolver& r, std::size_t k) {
    ranges[k] = measure_range(profile, r, k * kRangeLaunches, std::min(n, (k + 1) * kRangeLaunches));
  });
  return ranges;
}

}  // namespace

std::string_view basis_name(FlopsBasis basis) { return kBasisNames[static_cast<std::size_t>(basis)]; }

FlopsEstimates estimate_flops(const model::Profile& profile, const MetricResolver& resolver,
                              std::span<const OpClass> op_class_by_name, const PeakRates* peaks) {
  FlopsEstimates out;
  // estimates[0]: none (not a kernel); then each measured launch's own, one per class (of no
  // work or of unmeasured work), and the own of each launch of a measured kernel.
  out.estimates.emplace_back();
  resize_prefaulted(out.of_launch, profile.launches.size(), default_threads());
  auto own = [&](std::size_t launch) -> LaunchEstimate& {
    out.of_launch[launch] = static_cast<std::uint32_t>(out.estimates.size());
    return out.estimates.emplace_back();
  };
  std::unordered_map<model::NameId, KernelMeasure> measured;
  std::vector<bool> is_measured(profile.launches.size(), false);
  for (const MeasuredRange& range : measure_launches(profile, resolver)) {
    if (out.why_not_measured.empty()) out.why_not_measured = range.why_not;
    for (const auto& [i, m] : range.launches) {
      const model::Launch& l = profile.launches[i];
      is_measured[i] = true;
      KernelMeasure& k = measured[l.name];
      const auto n = static_cast<double>(l.count);
      LaunchEstimate& e = own(i);
      e.basis = FlopsBasis::kMeasured;
      e.flops = m.flops * n;
      for (std::size_t p = 0; p < kFlopPathCount; ++p) e.by_path[p] = m.by_path[p] * n;
      if (auto d = l.total_duration_ns()) {
        k.flops += e.flops;
        k.time_ns += *d;
        for (std::size_t p = 0; p < kFlopPathCount; ++p) k.by_path[p] += e.by_path[p];
      }
      k.launches.push_back(m);
    }
  }
  out.any_measured = !measured.empty();
  if (out.any_measured) out.why_not_measured.clear();
  const auto ceiling = class_ceilings(measured, op_class_by_name, peaks);
  // The launches not measured, in one pass on every thread (a timeline's million launches were
  // a serial pass, then two parallel ones): a measured kernel's get an estimate each, kept by
  // their chunk and appended in launch order after; the others share their class's, made for
  // every class first (a few; an estimate is only ever reached through its launches).
  std::array<std::uint32_t, std::size(kClassWork)> of_class{};  // the shared estimate of each class
  for (std::size_t c = 0; c < of_class.size(); ++c) {
    of_class[c] = static_cast<std::uint32_t>(out.estimates.size());
    LaunchEstimate& e = out.estimates.emplace_back();
    const bool no_work = class_work(static_cast<OpClass>(c)) == ClassWork::kNone;
    e.basis = no_work ? FlopsBasis::kNoWork : FlopsBasis::kUnmeasured;
    e.high_per_ns = no_work ? std::optional<double>(0) : ceiling[c];
  }
  const std::size_t n = profile.launches.size(), chunks = std::clamp<std::size_t>(n / 65536, 1, default_threads());
  struct alignas(kThreadStateAlign) Chunk {  // `own` grows launch by launch
    std::vector<std::pair<std::size_t, LaunchEstimate>> own;
  };
  std::vector<Chunk> met(chunks);
  run_in_chunks(n, chunks, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const model::Launch& l = profile.launches[i];
      if (l.kind != model::LaunchKind::kKernel || is_measured[i]) continue;
      if (const auto m = measured.find(l.name); m != measured.end()) {
        met[chunk].own.emplace_back(i, measured_kernel_launch(profile, m->second, l));
      } else {
        const OpClass c = l.name < op_class_by_name.size() ? op_class_by_name[l.name] : OpClass::kOther;
        out.of_launch[i] = of_class[static_cast<std::size_t>(c)];
      }
    }
  });
  for (Chunk& chunk : met) {
    for (auto& [i, e] : chunk.own) own(i) = e;
  }
  return out;
}

void FlopsTotal::add(const LaunchEstimate& e, std::optional<double> duration_ns) {
  if (!e.basis) {
    untimed_launches += 1;
    return;
  }
  flops += e.flops;
  for (std::size_t p = 0; p < kFlopPathCount; ++p) by_path[p] += e.by_path[p];
  if (*e.basis == FlopsBasis::kUnmeasured) {
    if (e.high_per_ns && duration_ns) {
      unmeasured_high += *e.high_per_ns * *duration_ns;
    } else {
      bounded = false;
    }
  }
  if (duration_ns) time_ns[static_cast<std::size_t>(*e.basis)] += *duration_ns;
}

void FlopsTotal::merge(const FlopsTotal& later) {
  flops += later.flops;
  unmeasured_high += later.unmeasured_high;
  bounded = bounded && later.bounded;
  for (std::size_t p = 0; p < kFlopPathCount; ++p) by_path[p] += later.by_path[p];
  for (std::size_t b = 0; b < kFlopsBasisCount; ++b) time_ns[b] += later.time_ns[b];
  untimed_launches += later.untimed_launches;
}

bool FlopsTotal::known() const {
  auto any = [&](FlopsBasis b) { return time_ns[static_cast<std::size_t>(b)] > 0; };
  return flops > 0 || any(FlopsBasis::kMeasured) || any(FlopsBasis::kSameShape) || any(FlopsBasis::kRate) ||
         any(FlopsBasis::kNoWork);
}

bool FlopsTotal::all_measured() const {
  double total = 0;
  for (double t : time_ns) total += t;
  return total > 0 && time_ns[static_cast<std::size_t>(FlopsBasis::kMeasured)] == total && untimed_launches == 0;
}

std::optional<FlopPath> FlopsTotal::dominant_path() const {
  std::optional<FlopPath> best;
  for (std::size_t p = 0; p < kFlopPathCount; ++p) {
    if (by_path[p] > 0 && (!best || by_path[p] > by_path[static_cast<std::size_t>(*best)])) {
      best = static_cast<FlopPath>(p);
    }
  }
  return best;
}

std::string FlopsTotal::source() const {
  double total = 0;
  for (double t : time_ns) total += t;
  if (all_measured()) return "measured (ncu FLOP counters)";
  if (total <= 0) return "no launch with a duration to estimate from";
  auto share = [&](FlopsBasis b) { return 100 * time_ns[static_cast<std::size_t>(b)] / total; };
  if (share(FlopsBasis::kUnmeasured) == 100) {
    return bounded ? fmt::format("never measured: at least 0, at most {:.3g} FLOP", unmeasured_high)
                   : std::string("never measured: at least 0, no upper bound");
  }
  if (share(FlopsBasis::kNoWork) == 100) return "never measured; its op class does no floating-point work";
  std::vector<std::string> known;
  for (auto b : {FlopsBasis::kMeasured, FlopsBasis::kSameShape, FlopsBasis::kRate, FlopsBasis::kNoWork}) {
    if (time_ns[static_cast<std::size_t>(b)] <= 0) continue;
    known.push_back(known.empty() ? fmt::format("{} on {:.1f}% of the kernel time", basis_name(b), share(b))
                                  : fmt::format("{} {:.1f}%", basis_name(b), share(b)));
  }
  std::string out = fmt::format("{}", fmt::join(known, ", "));
  if (double unmeasured = share(FlopsBasis::kUnmeasured); unmeasured > 0) {
    out += bounded ? fmt::format("; {:.1f}% in kernels never measured (at most +{:.3g} FLOP)", unmeasured, unmeasured_high)
                   : fmt::format("; {:.1f}% in kernels never measured (no upper bound)", unmeasured);
  }
  return out;
}

}  // namespace kernlens::analysis

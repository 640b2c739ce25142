#include "kernlens/analysis/bottleneck.h"

#include <cmath>

#include <fmt/format.h>

namespace kernlens::analysis {
namespace {

constexpr std::array<std::string_view, 7> kNames = {"compute", "memory", "latency", "launch",
                                                   "cache",   "mixed",  "unknown"};

std::string duration_text(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.2f} us", ns * 1e-3);
  return fmt::format("{:.2f} ms", ns * 1e-6);
}

class VerdictBuilder {
 public:
  explicit VerdictBuilder(const KernelMetrics& m) : m_(m) {}

  // Adds a figure to the evidence when measured; returns it.
  std::optional<double> use(Figure f) {
    auto v = m_.value(f);
    if (v) verdict_.evidence.emplace_back(std::string(figure_key(f)), *v);
    return v;
  }
  void add(std::string key, double value) { verdict_.evidence.emplace_back(std::move(key), value); }
  Verdict done(Bottleneck kind, std::string reason) {
    verdict_.kind = kind;
    verdict_.reason = std::move(reason);
    return std::move(verdict_);
  }

 private:
  const KernelMetrics& m_;
  Verdict verdict_;
};

// "; arithmetic intensity 768 FLOP/B, above the ridge point 295 FLOP/B" when known.
std::string roofline_note(const KernelMetrics& m, VerdictBuilder& b) {
  auto ai = m.arithmetic_intensity();
  if (!ai || !m.peak_flops_per_s || !m.peak_dram_bytes_per_s || m.peak_dram_bytes_per_s->value <= 0) return {};
  double ridge = m.peak_flops_per_s->value / m.peak_dram_bytes_per_s->value;
  b.add("arithmetic_intensity", *ai);
  b.add("ridge_point", ridge);
  return fmt::format("; arithmetic intensity {:.3g} FLOP/byte is {} the ridge point {:.3g} FLOP/byte", *ai,
                     *ai >= ridge ? "above" : "below", ridge);
}

std::string latency_detail(const KernelMetrics& m, VerdictBuilder& b) {
  std::string detail;
  if (auto waves = b.use(Figure::kWavesPerSm); waves && *waves < 1) {
    detail += fmt::format("; the grid is {:.2f} waves: fewer blocks than the SMs hold at once", *waves);
  }
  if (!m.top_stalls.empty()) {
    const StallShare& s = m.top_stalls.front();
    detail += fmt::format("; top stall {} ({:.0f}% of the cycles between issues)", s.reason, s.share * 100);
  }
  if (auto occ = b.use(Figure::kAchievedOccupancyPct)) detail += fmt::format("; achieved occupancy {:.1f}%", *occ);
  return detail;
}

}  // namespace

std::string_view bottleneck_name(Bottleneck b) { return kNames[static_cast<std::size_t>(b)]; }

Verdict classify_bottleneck(const KernelMetrics& m, std::optional<double> mean_ns, const BottleneckThresholds& t) {
  VerdictBuilder b(m);
  if (mean_ns && *mean_ns < t.launch_bound_ns) {
    b.add("mean_ns", *mean_ns);
    auto sm = b.use(Figure::kSmPct);
    auto mem = b.use(Figure::kMemoryPct);
    std::string sol = sm && mem ? fmt::format(" (while it runs: SM {:.1f}%, memory {:.1f}%)", *sm, *mem) : "";
    return b.done(Bottleneck::kLaunch,
                  fmt::format("mean duration {} is below the launch-bound threshold {}: launching it costs "
                              "about as much as running it{}",
                              duration_text(*mean_ns), duration_text(t.launch_bound_ns), sol));
  }
  auto sm = b.use(Figure::kSmPct);
  auto mem = b.use(Figure::kMemoryPct);
  if (!sm || !mem) {
    return b.done(Bottleneck::kUnknown, mean_ns ? "SM and memory throughput not measured (ncu section SpeedOfLight)"
                                                : "no duration and no throughput measured");
  }
  const double high = std::max(*sm, *mem);
  if (high < t.throughput_pct) {
    std::string detail = latency_detail(m, b);
    return b.done(Bottleneck::kLatency, fmt::format("SM {:.1f}% and memory {:.1f}% are both below {:.0f}%{}", *sm,
                                                    *mem, t.throughput_pct, detail));
  }
  if (std::fabs(*sm - *mem) < t.balance_pct) {
    return b.done(Bottleneck::kMixed, fmt::format("SM {:.1f}% and memory {:.1f}% are within {:.0f} points of each "
                                                  "other, at least one at or above {:.0f}%",
                                                  *sm, *mem, t.balance_pct, t.throughput_pct));
  }
  if (*sm > *mem) {
    std::string note = roofline_note(m, b);
    return b.done(Bottleneck::kCompute, fmt::format("SM {:.1f}% >= {:.0f}%, {:.1f} points above memory {:.1f}%{}",
                                                    *sm, t.throughput_pct, *sm - *mem, *mem, note));
  }
  auto dram = b.use(Figure::kDramPct);
  auto l1 = b.use(Figure::kL1Pct);
  auto l2 = b.use(Figure::kL2Pct);
  // The memory unit that is busiest decides between a DRAM and a cache bottleneck.
  std::string_view unit;
  double unit_pct = 0;
  if (l1 && (!dram || *l1 > *dram) && (!l2 || *l1 >= *l2)) unit = "L1", unit_pct = *l1;
  else if (l2 && (!dram || *l2 > *dram)) unit = "L2", unit_pct = *l2;
  if (!unit.empty() && (!dram || *dram < t.throughput_pct)) {
    b.use(unit == "L1" ? Figure::kL1HitPct : Figure::kL2HitPct);
    std::string dram_text = dram ? fmt::format(" while DRAM is at {:.1f}%", *dram) : std::string();
    return b.done(Bottleneck::kCache, fmt::format("memory {:.1f}% >= {:.0f}%, led by {} at {:.1f}%{}; SM {:.1f}%",
                                                  *mem, t.throughput_pct, unit, unit_pct, dram_text, *sm));
  }
  std::string note = roofline_note(m, b);
  std::string dram_text = dram ? fmt::format(" (DRAM {:.1f}%)", *dram) : std::string();
  return b.done(Bottleneck::kMemory, fmt::format("memory {:.1f}%{} >= {:.0f}%, {:.1f} points above SM {:.1f}%{}",
                                                 *mem, dram_text, t.throughput_pct, *mem - *sm, *sm, note));
}

}  // namespace kernlens::analysis

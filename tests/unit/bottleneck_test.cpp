// Bottleneck verdicts from figures: each class, its evidence, and the thresholds.
#include <gtest/gtest.h>

#include "kernlens/analysis/bottleneck.h"

namespace kernlens::analysis {
namespace {

struct Figures {
  std::optional<double> sm = {}, mem = {}, dram = {}, l1 = {}, l2 = {}, waves = {};
};

KernelMetrics metrics(const Figures& f) {
  KernelMetrics m;
  auto set = [&](Figure figure, std::optional<double> v) {
    if (v) m.figures[static_cast<std::size_t>(figure)] = Figured{*v, "test"};
  };
  set(Figure::kSmPct, f.sm);
  set(Figure::kMemoryPct, f.mem);
  set(Figure::kDramPct, f.dram);
  set(Figure::kL1Pct, f.l1);
  set(Figure::kL2Pct, f.l2);
  set(Figure::kWavesPerSm, f.waves);
  return m;
}

double evidence(const Verdict& v, const std::string& key) {
  for (const auto& [k, value] : v.evidence) {
    if (k == key) return value;
  }
  ADD_FAILURE() << "no evidence " << key << " in: " << v.reason;
  return -1;
}

const BottleneckThresholds kDefaults;

TEST(Bottleneck, ComputeWhenSmLeadsAboveTheThreshold) {
  // The H100 bf16 4096^3 GEMM: ncu SOL SM 89.99%, memory 69.62%.
  auto v = classify_bottleneck(metrics({.sm = 89.99, .mem = 69.62}), 176384, kDefaults);
  EXPECT_EQ(v.kind, Bottleneck::kCompute) << v.reason;
  EXPECT_EQ(evidence(v, "sm_pct"), 89.99);
  EXPECT_EQ(evidence(v, "memory_pct"), 69.62);
  EXPECT_EQ(v.reason, "SM 90.0% >= 60%, 20.4 points above memory 69.6%");
}

TEST(Bottleneck, MemoryWhenDramLeads) {
  auto v = classify_bottleneck(metrics({.sm = 12.13, .mem = 90.36, .dram = 90.36, .l1 = 30, .l2 = 45}), 1.4e6,
                               kDefaults);
  EXPECT_EQ(v.kind, Bottleneck::kMemory) << v.reason;
  EXPECT_EQ(evidence(v, "dram_pct"), 90.36);
}

TEST(Bottleneck, CacheWhenL1OrL2LeadsAndDramIsLow) {
  auto v = classify_bottleneck(metrics({.sm = 20, .mem = 85, .dram = 10, .l1 = 85, .l2 = 30}), 1e5, kDefaults);
  EXPECT_EQ(v.kind, Bottleneck::kCache) << v.reason;
  EXPECT_NE(v.reason.find("led by L1 at 85.0%"), std::string::npos) << v.reason;
  auto l2 = classify_bottleneck(metrics({.sm = 20, .mem = 75, .dram = 40, .l1 = 30, .l2 = 75}), 1e5, kDefaults);
  EXPECT_EQ(l2.kind, Bottleneck::kCache) << l2.reason;
  // DRAM itself above the threshold: memory, even when a cache is busier.
  auto busy = classify_bottleneck(metrics({.sm = 20, .mem = 90, .dram = 70, .l1 = 90}), 1e5, kDefaults);
  EXPECT_EQ(busy.kind, Bottleneck::kMemory) << busy.reason;
}

TEST(Bottleneck, MixedWhenBothHighAndClose) {
  // The fp32 SIMT GEMM: SM 64.83%, memory 56.26%; ncu: "Compute and Memory are well-balanced".
  auto v = classify_bottleneck(metrics({.sm = 64.83, .mem = 56.26}), 61312, kDefaults);
  EXPECT_EQ(v.kind, Bottleneck::kMixed) << v.reason;
}

TEST(Bottleneck, LatencyWhenBothLowWithTheGridAsEvidence) {
  auto v = classify_bottleneck(metrics({.sm = 3.1, .mem = 22.2, .waves = 0.26}), 6031, kDefaults);
  EXPECT_EQ(v.kind, Bottleneck::kLatency) << v.reason;
  EXPECT_EQ(evidence(v, "waves_per_sm"), 0.26);
  EXPECT_NE(v.reason.find("0.26 waves"), std::string::npos) << v.reason;
}

TEST(Bottleneck, LaunchForShortKernelsWhateverTheirThroughput) {
  auto v = classify_bottleneck(metrics({.sm = 3.9, .mem = 28.3}), 4526, kDefaults);
  EXPECT_EQ(v.kind, Bottleneck::kLaunch) << v.reason;
  EXPECT_EQ(evidence(v, "mean_ns"), 4526);
  EXPECT_EQ(evidence(v, "sm_pct"), 3.9);
  // Without any metric a short duration still decides (timelines: nsys, PyTorch traces).
  EXPECT_EQ(classify_bottleneck(KernelMetrics{}, 2000, kDefaults).kind, Bottleneck::kLaunch);
}

TEST(Bottleneck, UnknownSaysWhatIsMissing) {
  auto v = classify_bottleneck(metrics({.sm = 50}), 1e5, kDefaults);
  EXPECT_EQ(v.kind, Bottleneck::kUnknown);
  EXPECT_EQ(v.reason, "SM and memory throughput not measured (ncu section SpeedOfLight)");
  EXPECT_EQ(classify_bottleneck(KernelMetrics{}, std::nullopt, kDefaults).kind, Bottleneck::kUnknown);
}

TEST(Bottleneck, ThresholdsAreTheUsers) {
  BottleneckThresholds t;
  t.throughput_pct = 50;
  t.balance_pct = 5;
  t.launch_bound_ns = 0;
  EXPECT_EQ(classify_bottleneck(metrics({.sm = 55, .mem = 20}), 4000, t).kind, Bottleneck::kCompute);
  EXPECT_EQ(classify_bottleneck(metrics({.sm = 64.83, .mem = 56.26}), 61312, t).kind, Bottleneck::kCompute);
  EXPECT_EQ(classify_bottleneck(metrics({.sm = 55, .mem = 20}), 4000, kDefaults).kind, Bottleneck::kLaunch);
}

TEST(Bottleneck, RooflineEvidenceWhenWorkAndRoofsAreKnown) {
  KernelMetrics m = metrics({.sm = 89.99, .mem = 69.62});
  m.flops = Figured{137438953472.0, "test"};
  m.intensity_flops = 137438953472.0;
  m.intensity_bytes = 178988800.0;
  m.peak_flops_per_s = Figured{865.8e12, "test"};
  m.peak_dram_bytes_per_s = Figured{3.35e12, "test"};
  auto v = classify_bottleneck(m, 176384, kDefaults);
  EXPECT_NEAR(evidence(v, "arithmetic_intensity"), 767.86, 0.01);
  EXPECT_NEAR(evidence(v, "ridge_point"), 258.4, 0.1);
  EXPECT_NE(v.reason.find("is above the ridge point"), std::string::npos) << v.reason;
}

}  // namespace
}  // namespace kernlens::analysis

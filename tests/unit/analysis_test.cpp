// The analysis against real exports: kernels of known work (FLOPs, bytes, verdicts), every
// top kernel of the shared H100 fixtures explained, MFU per stage, advice, coverage.
#include <cmath>

#include <gtest/gtest.h>

#include "kernlens/analysis/analysis.h"
#include "kernlens/ingest/reconcile.h"
#include "test_util.h"

namespace kernlens::analysis {
namespace {

struct Analyzed {
  model::Profile profile;
  Analysis analysis;
};

// Reads fixtures the way `analyze` does (only the metrics the analysis uses) and analyzes.
Analyzed analyze_fixtures(std::initializer_list<const char*> fixtures, const AnalysisOptions& options = {}) {
  Analyzed out;
  ingest::ReadOptions read;
  read.all_metrics = false;
  read.metrics = analysis_metric_names();
  for (const char* f : fixtures) {
    Status s = ingest::read_input(test::fixture(f), out.profile, read);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().to_string());
  }
  ingest::reconcile_inputs(out.profile);
  auto a = analyze(out.profile, test::builtin_classifier(), options);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().to_string());
  if (a.ok()) out.analysis = std::move(a).value();
  return out;
}

// The analysis of the kernel whose name starts with `prefix`.
const KernelInsight& kernel(const Analyzed& a, std::string_view prefix) {
  for (std::size_t i = 0; i < a.analysis.agg.kernels.size(); ++i) {
    if (a.profile.names[a.analysis.agg.kernels[i].name].starts_with(prefix)) return a.analysis.kernels[i];
  }
  ADD_FAILURE() << "no kernel " << prefix;
  static const KernelInsight none;
  return none;
}

const StageWork& stage(const Analyzed& a, std::string_view name) {
  for (std::size_t i = 0; i < a.analysis.agg.stages.size(); ++i) {
    if (a.analysis.agg.stages[i].name == name) return a.analysis.stages[i];
  }
  ADD_FAILURE() << "no stage " << name;
  static const StageWork none;
  return none;
}

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr const char* kGemm1k = "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT";
constexpr const char* kGemm4k = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT";
constexpr const char* kGemmFp32 = "sm80_xmma_gemm_f32f32";
constexpr const char* kScale = "void at::vectorized_elementwise_kernel<8, at::AUnaryFunctor";

TEST(KnownWork, BF16GemmFlopsAreExactly2MNK) {
  auto a = analyze_fixtures({"ncu/roofline_checks_raw.csv"});
  const auto& g1 = kernel(a, kGemm1k).metrics;
  ASSERT_TRUE(g1.flops);
  EXPECT_EQ(g1.flops->value, 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(g1.flops->source, "sm__ops_path_tensor_src_bf16_dst_fp32.sum");
  EXPECT_EQ(g1.dominant_path, FlopPath::kTensorBf16);
  const auto& g4 = kernel(a, kGemm4k).metrics;
  ASSERT_TRUE(g4.flops);
  EXPECT_EQ(g4.flops->value, 2.0 * 4096 * 4096 * 4096);
}

TEST(KnownWork, SimtGemmFlopsFromFfmaWithin0p2Percent) {
  auto a = analyze_fixtures({"ncu/roofline_checks_raw.csv"});
  const auto& m = kernel(a, kGemmFp32).metrics;
  ASSERT_TRUE(m.flops);
  // Above 2MNK by the epilogue's one FFMA per output (1024^2) and 16,384 HFMA2: real work.
  EXPECT_NEAR(m.flops->value / (2.0 * 1024 * 1024 * 1024), 1.001, 0.001);
  EXPECT_EQ(m.dominant_path, FlopPath::kSimtFp32);
  // 1,074,790,400 FFMA x 2 and 32,768 HFMA x 4, exactly as ncu counted them.
  EXPECT_EQ(*m.flops_by_path[static_cast<std::size_t>(FlopPath::kSimtFp32)], 2.0 * 1074790400);
  EXPECT_EQ(*m.flops_by_path[static_cast<std::size_t>(FlopPath::kSimtFp16)], 4.0 * 16384);
}

TEST(KnownWork, CopyDramBytesWithin2PercentOfWhatItMoves) {
  auto a = analyze_fixtures({"ncu/roofline_checks_raw.csv"});
  const auto& m = kernel(a, kScale).metrics;
  ASSERT_TRUE(m.dram_bytes);
  EXPECT_EQ(m.dram_bytes->value, 2147512576.0 + 2127447552.0);
  EXPECT_NEAR(m.dram_bytes->value / (4 * kGiB), 1.0, 0.02);
  EXPECT_EQ(m.dram_bytes->source, "dram__bytes_read.sum + dram__bytes_write.sum");
}

TEST(KnownWork, VerdictsMatchWhatTheKernelsDo) {
  auto a = analyze_fixtures({"ncu/roofline_checks_raw.csv"});
  EXPECT_EQ(kernel(a, kGemm4k).verdict.kind, Bottleneck::kCompute) << kernel(a, kGemm4k).verdict.reason;
  EXPECT_EQ(kernel(a, kScale).verdict.kind, Bottleneck::kMemory) << kernel(a, kScale).verdict.reason;
  EXPECT_EQ(kernel(a, kGemmFp32).verdict.kind, Bottleneck::kMixed);  // ncu: "well-balanced"
  EXPECT_EQ(kernel(a, kGemm1k).verdict.kind, Bottleneck::kLatency);  // ncu: "grid too small"
}

TEST(KnownWork, RoofsAtTheClockTheKernelRanAt) {
  auto a = analyze_fixtures({"ncu/roofline_checks_raw.csv"});
  const auto& m = kernel(a, kGemm4k).metrics;
  // 540,672 FLOP/cycle x 1,601,413,977.63 cycles/s: ncu's own
  // sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained_elapsed.per_second.
  ASSERT_TRUE(m.peak_flops_per_s);
  EXPECT_NEAR(m.peak_flops_per_s->value, 865839698113207.62, 1e3);
  ASSERT_TRUE(m.peak_dram_bytes_per_s);
  EXPECT_NEAR(m.peak_dram_bytes_per_s->value, 1280 * 2618577648.77, 1e3);
  ASSERT_TRUE(m.achieved_flops_per_s());
  EXPECT_NEAR(*m.achieved_flops_per_s() / m.peak_flops_per_s->value, 0.90, 0.005);  // ncu SM: 89.99%
  EXPECT_EQ(m.occupancy_limiters, (std::vector<std::string>{"registers", "shared_mem"}));
  ASSERT_FALSE(m.top_stalls.empty());
  EXPECT_EQ(m.top_stalls[0].reason, "barrier");  // ncu CPIStall: "waiting ... at a CTA barrier"
}

TEST(KnownWork, AutomaticUnitsGiveTheSameNumbers) {
  auto base = analyze_fixtures({"ncu/roofline_checks_raw.csv"});
  auto dynamic = analyze_fixtures({"ncu/roofline_checks_raw_dynamic.csv"});
  for (const char* k : {kGemm1k, kGemm4k, kGemmFp32, kScale}) {
    const auto& b = kernel(base, k).metrics;
    const auto& d = kernel(dynamic, k).metrics;
    ASSERT_TRUE(b.flops && d.flops && b.dram_bytes && d.dram_bytes) << k;
    EXPECT_NEAR(d.flops->value / b.flops->value, 1.0, 1e-6) << k;
    // Gbyte with six decimals: a kB of rounding on 4 MB.
    EXPECT_NEAR(d.dram_bytes->value / b.dram_bytes->value, 1.0, 1e-3) << k;
    EXPECT_EQ(kernel(dynamic, k).verdict.kind, kernel(base, k).verdict.kind) << k;
  }
}

TEST(KnownWork, DetailsPageAloneWithPerRowUnits) {
  // The details page prints dram__bytes_read.sum in Mbyte for some rows and Gbyte for others.
  auto a = analyze_fixtures({"ncu/roofline_checks_details.csv"});
  const auto& m = kernel(a, kScale).metrics;
  ASSERT_TRUE(m.dram_bytes);
  EXPECT_NEAR(m.dram_bytes->value / (2147512576.0 + 2127447552.0), 1.0, 0.005);
  EXPECT_EQ(kernel(a, kGemm4k).verdict.kind, Bottleneck::kCompute);
  EXPECT_EQ(kernel(a, kScale).verdict.kind, Bottleneck::kMemory);
}

TEST(Mfu, MeasuredPerStageAgainstTheDatasheetPeak) {
  auto a = analyze_fixtures({"ncu/roofline_checks_raw.csv"});
  ASSERT_TRUE(a.analysis.peaks);
  EXPECT_EQ(a.analysis.peaks->gpu, "NVIDIA H100 80GB HBM3");
  const StageWork& s = stage(a, "gemm_bf16_4096");
  ASSERT_TRUE(s.flops && s.mfu);
  EXPECT_EQ(*s.flops, 2.0 * 4096 * 4096 * 4096);
  EXPECT_EQ(s.precision, FlopPath::kTensorBf16);
  EXPECT_EQ(s.time_basis, "kernel time");
  EXPECT_DOUBLE_EQ(*s.mfu, 2.0 * 4096 * 4096 * 4096 / (176384e-9 * 989.4e12));
  EXPECT_EQ(s.flops_source, "measured (ncu FLOP counters)");
  EXPECT_EQ(stage(a, "gemm_fp32_1024").precision, FlopPath::kSimtFp32);
}

TEST(Mfu, UnmeasuredTensorWorkIsNotGuessedFromOtherKernels) {
  // gpt2's raw page has SIMT counts but no tensor counters: its GEMMs' work is unknown. The
  // stage's FLOPs are what the other kernels measured, with no upper bound.
  auto a = analyze_fixtures({"ncu/gpt2_prefill_raw.csv"});
  const StageWork& s = stage(a, "prefill");
  ASSERT_TRUE(s.flops && s.mfu);
  EXPECT_EQ(s.flops_low, s.flops);
  EXPECT_FALSE(s.flops_high);
  EXPECT_FALSE(s.mfu_high);
  EXPECT_EQ(s.precision_source, "assumed (--precision to change)");  // the measured mix is SIMT only
  EXPECT_NE(s.flops_source.find("; 48.1% in kernels never measured (no upper bound)"), std::string::npos)
      << s.flops_source;
  for (std::size_t i = 0; i < a.analysis.agg.kernels.size(); ++i) {
    const auto& row = a.analysis.agg.kernels[i];
    if (a.analysis.agg.families[row.family].cls.op_class != names::OpClass::kGemm) continue;
    EXPECT_FALSE(a.analysis.kernels[i].flops.known()) << a.profile.names[row.name];
    EXPECT_FALSE(a.analysis.kernels[i].flops.high()) << a.profile.names[row.name];
  }
}

TEST(Mfu, UserWorkPerStage) {
  AnalysisOptions o;
  o.work.params = 1.2e8;
  o.work.tokens = {{"prefill", 1024}};
  o.work.precision = FlopPath::kTensorFp16;
  auto a = analyze_fixtures({"ncu/gpt2_prefill_raw.csv"}, o);
  const StageWork& s = stage(a, "prefill");
  ASSERT_TRUE(s.flops && s.mfu);
  EXPECT_EQ(*s.flops, 2 * 1.2e8 * 1024);
  EXPECT_EQ(s.precision_source, "--precision");
  EXPECT_DOUBLE_EQ(*s.mfu, 2 * 1.2e8 * 1024 / (494592e-9 * 989.4e12));

  AnalysisOptions flops;
  flops.work.model_flops = {{"prefill", 5e11}, {"", 6e11}};
  auto b = analyze_fixtures({"ncu/gpt2_prefill_raw.csv"}, flops);
  EXPECT_EQ(*stage(b, "prefill").flops, 5e11);
  EXPECT_EQ(stage(b, "prefill").precision_source, "assumed (--precision to change)");
  EXPECT_EQ(*b.analysis.whole.flops, 6e11);
}

TEST(Mfu, AStageTheProfileLacksIsAnError) {
  AnalysisOptions o;
  o.work.params = 1e9;
  o.work.tokens = {{"decode", 64}};
  model::Profile profile;
  ASSERT_TRUE(ingest::read_input(test::fixture("ncu/gpt2_prefill_raw.csv"), profile).ok());
  auto a = analyze(profile, test::builtin_classifier(), o);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, "no stage 'decode'; stages are: prefill");
}

TEST(Mfu, ParseStageValue) {
  auto v = parse_stage_value("step/decode=6.4e1");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->first, "step/decode");
  EXPECT_EQ(v->second, 64);
  auto whole = parse_stage_value("2.5e12");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->first, "");
  for (auto bad : {"decode=", "=5", "decode=-1", "decode=abc", "decode=inf", "0"}) {
    EXPECT_FALSE(parse_stage_value(bad).ok()) << bad;
  }
}

TEST(Mfu, AnUnknownGpuGetsNoMadeUpPeak) {
  model::Profile profile;
  ASSERT_TRUE(ingest::read_input(test::fixture("ncu/qwen_decode_raw.csv"), profile).ok());
  for (auto& d : profile.devices) d.name = "NVIDIA Made-Up GPU";
  AnalysisOptions o;
  o.work.model_flops = {{"decode", 1e9}};
  auto a = analyze(profile, test::builtin_classifier(), o);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->peaks);
  EXPECT_FALSE(a->stages[0].mfu);
  EXPECT_EQ(a->stages[0].mfu_missing,
            "no peaks known for GPU 'NVIDIA Made-Up GPU': it is not in the GPU table (data/gpu_peaks.txt) and the "
            "profile has no ncu peak metrics");
}

TEST(Mfu, AnUnknownGpuWithNcuPeakMetricsUsesThem) {
  model::Profile profile;
  ASSERT_TRUE(ingest::read_input(test::fixture("ncu/roofline_checks_raw.csv"), profile).ok());
  for (auto& d : profile.devices) d.name = "NVIDIA Made-Up GPU";
  auto a = analyze(profile, test::builtin_classifier(), {});
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(a->peaks);
  EXPECT_EQ(a->peaks->source, "ncu peak_sustained per cycle x the GPU's maximum clocks");
  // 540,672 FLOP/cycle x device__attribute_clock_rate 1,980,000 kHz.
  EXPECT_DOUBLE_EQ(*a->peaks->flops(FlopPath::kTensorBf16), 540672 * 1.98e9);
  EXPECT_DOUBLE_EQ(*a->peaks->dram_bytes_per_s, 1280 * 2.619e9);
}

TEST(SharedFixtures, EveryTopKernelHasAVerdictWithEvidence) {
  for (const char* f : {"ncu/gpt2_prefill_raw.csv", "ncu/qwen_decode_raw.csv"}) {
    auto a = analyze_fixtures({f});
    ASSERT_FALSE(a.analysis.kernels.empty());
    for (std::size_t i = 0; i < std::min<std::size_t>(10, a.analysis.kernels.size()); ++i) {
      const auto& k = a.analysis.kernels[i];
      const std::string& name = a.profile.names[a.analysis.agg.kernels[i].name];
      EXPECT_NE(k.verdict.kind, Bottleneck::kUnknown) << f << ": " << name << ": " << k.verdict.reason;
      EXPECT_FALSE(k.verdict.evidence.empty()) << name;
      EXPECT_FALSE(k.verdict.reason.empty()) << name;
    }
    EXPECT_EQ(a.analysis.coverage.fraction(), 1.0) << f;
  }
}

TEST(SharedFixtures, DecodeIsLaunchBound) {
  auto a = analyze_fixtures({"ncu/qwen_decode_raw.csv"});
  // The top kernel: 54 launches of 4.5 us.
  const auto& top = a.analysis.kernels[0];
  EXPECT_EQ(top.verdict.kind, Bottleneck::kLaunch);
  ASSERT_FALSE(top.advice.empty());
  EXPECT_EQ(top.advice[0].rule, "kernlens:launch-overhead");
  // Not measured stays absent: the basic set has no DRAM byte counts.
  EXPECT_FALSE(top.metrics.dram_bytes);
  EXPECT_FALSE(top.metrics.peak_dram_bytes_per_s);
  EXPECT_FALSE(top.metrics.flops);
}

TEST(Advice, NcuRulesWeightedByLaunchTime) {
  auto a = analyze_fixtures({"ncu/roofline_checks_raw.csv", "ncu/roofline_checks_details.csv"});
  const auto& advice = kernel(a, kGemmFp32).advice;
  ASSERT_FALSE(advice.empty());
  EXPECT_EQ(advice[0].rule, "ncu:TheoreticalOccupancy");
  EXPECT_EQ(advice[0].est_speedup_pct, 87.5);
  for (const auto& x : advice) {
    EXPECT_EQ(x.text.find("The optional metric"), std::string::npos) << x.text;  // about ncu, not the kernel
  }
}

TEST(Advice, KernlensRulesFromTheWholePicture) {
  KernelMetrics m;
  m.figures[static_cast<std::size_t>(Figure::kTheoreticalOccupancyPct)] = Figured{18.75, "t"};
  m.occupancy_limiters = {"registers"};
  Verdict memory{Bottleneck::kMemory, "r", {}};
  auto rules = [](const std::vector<Advice>& v) {
    std::vector<std::string> r;
    for (const auto& a : v) r.push_back(a.rule);
    return r;
  };
  EXPECT_EQ(rules(kernlens_advice({m, memory, "gemm", 25, 6031})), std::vector<std::string>{"kernlens:thin-gemm"});
  EXPECT_EQ(rules(kernlens_advice({m, memory, "elementwise", 9, 1.4e6})),
            std::vector<std::string>{"kernlens:fuse-memory-bound"});
  Verdict latency{Bottleneck::kLatency, "r", {}};
  m.figures[static_cast<std::size_t>(Figure::kWavesPerSm)] = Figured{0.12, "t"};
  EXPECT_EQ(rules(kernlens_advice({m, latency, "other", 4, 5488})),
            (std::vector<std::string>{"kernlens:small-grid", "kernlens:occupancy-limit"}));
  Verdict compute{Bottleneck::kCompute, "r", {}};
  EXPECT_TRUE(kernlens_advice({m, compute, "gemm", 1, 176384}).empty());
}

}  // namespace
}  // namespace kernlens::analysis

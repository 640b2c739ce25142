// FLOPs per launch, kernel by kernel (analysis/flops.h), on synthetic launches whose work is
// known: the same shape takes the measured count, another shape the kernel's rate x its
// duration, a kernel never measured adds an interval bounded by its op class, and launches
// that only carry timing metrics (Nsight Compute's timing mode) are timeline launches.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "kernlens/analysis/analysis.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/load/load.h"
#include "test_util.h"

namespace kernlens::analysis {
namespace {

constexpr const char* kGemmA = "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT";
constexpr const char* kGemmB = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT";
constexpr const char* kAdd = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                             "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
constexpr const char* kMul = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, "
                             "float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, "
                             "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> "
                             ">, std::array<char*, 3ul>)";
constexpr const char* kCopy = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 128, 1>"
                              "(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, "
                              "128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, "
                              "unsigned int)";
constexpr double kBf16Peak = 989.4e12;  // the H100 SXM's, from data/gpu_peaks.txt
constexpr double kSimtPeak = 133.8e12;  // its fastest SIMT path (fp16)

// Launches on an H100 with the metrics a deep pass (or a timing pass) leaves on them.
class Launches {
 public:
  Launches() { p_.device(0).name = "NVIDIA H100 80GB HBM3"; }

  // A kernel launch of `duration_ns` with a grid of `grid_x` blocks.
  model::Launch& add(const char* name, std::uint32_t grid_x, double duration_ns) {
    model::Launch l;
    l.name = p_.names.intern(name);
    l.device_ordinal = 0;
    l.config = p_.intern_config({.grid = {grid_x, 1, 1}, .block = {128, 1, 1}});
    l.duration_ns = duration_ns;
    p_.launches.push_back(l);
    return p_.launches.back();
  }

  // What ncu counts: bf16 tensor FLOPs and fp32 FMAs (2 FLOPs each), the roofline sections'.
  void measure(model::Launch& l, double tensor_flops, double ffma = 0) {
    metric(l, "sm__ops_path_tensor_src_bf16_dst_fp32.sum", tensor_flops);
    metric(l, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0);
    metric(l, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 0);
    metric(l, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", ffma);
    metric(l, "sm__throughput.avg.pct_of_peak_sustained_elapsed", 50);
  }

  // Nsight Compute's timing mode: gpu__time_duration (the launch's duration) and launch statistics.
  void timing_only(model::Launch& l) { metric(l, "launch__waves_per_multiprocessor", 0.5); }

  // Profiled with throughput figures but without the roofline sections' counters.
  void without_counters(model::Launch& l) { metric(l, "sm__throughput.avg.pct_of_peak_sustained_elapsed", 50); }

  Analysis analyze() {
    auto a = analysis::analyze(p_, test::builtin_classifier(), {});
    EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().to_string());
    return a.ok() ? std::move(a).value() : Analysis{};
  }

  const model::Profile& profile() const { return p_; }

 private:
  void metric(model::Launch& l, const char* name, double value) {
    p_.add_metric(l, {p_.metrics.intern(name, ""), value});
  }
  model::Profile p_;
};

const FlopsTotal& kernel_flops(const Analysis& a, const model::Profile& p, const char* name) {
  for (std::size_t i = 0; i < a.agg.kernels.size(); ++i) {
    if (p.names[a.agg.kernels[i].name] == name) return a.kernels[i].flops;
  }
  ADD_FAILURE() << "no kernel " << name;
  static const FlopsTotal none;
  return none;
}

double time_of(const FlopsTotal& t, FlopsBasis b) { return t.time_ns[static_cast<std::size_t>(b)]; }

TEST(Flops, TheSameShapeGetsTheMeasuredLaunchsCount) {
  Launches l;
  l.measure(l.add(kGemmA, 64, 100), 1e9);
  l.add(kGemmA, 64, 110);  // within 25% of the measured launch: the same problem
  l.add(kGemmA, 64, 90);
  Analysis a = l.analyze();
  const FlopsTotal& k = kernel_flops(a, l.profile(), kGemmA);
  EXPECT_EQ(k.flops, 3e9);
  EXPECT_EQ(k.high(), 3e9);
  EXPECT_EQ(time_of(k, FlopsBasis::kSameShape), 200);
  ASSERT_TRUE(a.whole.flops && a.whole.mfu);
  EXPECT_EQ(*a.whole.flops, 3e9);
  EXPECT_EQ(a.whole.flops_high, 3e9);
  EXPECT_DOUBLE_EQ(*a.whole.mfu, 3e9 / (300e-9 * kBf16Peak));
  EXPECT_EQ(a.whole.mfu_low, a.whole.mfu);
  EXPECT_EQ(a.whole.mfu_high, a.whole.mfu);
  EXPECT_EQ(a.whole.precision, FlopPath::kTensorBf16);
  EXPECT_EQ(a.whole.precision_source, "measured");
}

TEST(Flops, AnotherShapeGetsTheKernelsRateTimesItsDuration) {
  Launches l;
  l.measure(l.add(kGemmA, 64, 100), 1e9);  // 1e7 FLOP per ns
  l.add(kGemmA, 128, 300);                   // another grid
  l.add(kGemmA, 64, 250);                    // the same grid, 2.5x longer: another K
  Analysis a = l.analyze();
  const FlopsTotal& k = kernel_flops(a, l.profile(), kGemmA);
  EXPECT_DOUBLE_EQ(k.flops, 1e9 + 3e9 + 2.5e9);
  EXPECT_EQ(time_of(k, FlopsBasis::kRate), 550);
  EXPECT_EQ(time_of(k, FlopsBasis::kSameShape), 0);
  EXPECT_EQ(k.source(), "measured on 15.4% of the kernel time, rate x duration 84.6%");
}

TEST(Flops, AKernelNeverMeasuredAddsAnIntervalNotAGuess) {
  Launches l;
  l.measure(l.add(kGemmA, 64, 100), 1e9);
  l.add(kGemmB, 256, 400);                      // a GEMM nobody measured
  l.measure(l.add(kAdd, 32, 50), 0, 1e5);       // an elementwise kernel at 2e5 / 50 ns
  l.add(kMul, 32, 80);                          // another one nobody measured
  l.add(kCopy, 8, 20);                          // a copy: no floating-point work
  Analysis a = l.analyze();
  const model::Profile& p = l.profile();
  // Nothing of kGemmA's work is credited to kGemmB: only the interval says what it may be.
  const FlopsTotal& b = kernel_flops(a, p, kGemmB);
  EXPECT_FALSE(b.known());
  EXPECT_EQ(b.low(), 0);
  ASSERT_TRUE(b.high());
  EXPECT_DOUBLE_EQ(*b.high(), 400e-9 * kBf16Peak);  // a GEMM: the peak of the path GEMMs ran on
  const FlopsTotal& mul = kernel_flops(a, p, kMul);
  EXPECT_DOUBLE_EQ(*mul.high(), 2e5 / 50 * 80);     // the fastest measured elementwise kernel's rate
  const FlopsTotal& copy = kernel_flops(a, p, kCopy);
  EXPECT_TRUE(copy.known());
  EXPECT_EQ(copy.high(), 0);
  EXPECT_EQ(copy.source(), "never measured; its op class does no floating-point work");

  ASSERT_TRUE(a.whole.flops && a.whole.flops_high && a.whole.mfu && a.whole.mfu_high);
  EXPECT_DOUBLE_EQ(*a.whole.flops, 1e9 + 2e5);
  EXPECT_DOUBLE_EQ(*a.whole.flops_high, 1e9 + 2e5 + 400e-9 * kBf16Peak + 2e5 / 50 * 80);
  const double capacity = 650e-9 * kBf16Peak;
  EXPECT_DOUBLE_EQ(*a.whole.mfu, (1e9 + 2e5) / capacity);
  EXPECT_DOUBLE_EQ(*a.whole.mfu_high, *a.whole.flops_high / capacity);
  EXPECT_NE(a.whole.flops_source.find("73.8% in kernels never measured"), std::string::npos) << a.whole.flops_source;
}

TEST(Flops, TheIntervalHasNoUpperBoundWhereNothingOfTheClassRan) {
  Launches l;
  l.measure(l.add(kAdd, 32, 100), 0, 1e5);
  l.add(kGemmB, 256, 400);  // no GEMM was measured: nothing bounds it but the user's knowledge
  l.add(kMul, 32, 100);
  Analysis a = l.analyze();
  EXPECT_FALSE(kernel_flops(a, l.profile(), kGemmB).high());
  ASSERT_TRUE(a.whole.flops && a.whole.mfu);
  EXPECT_FALSE(a.whole.flops_high);
  EXPECT_FALSE(a.whole.mfu_high);
  EXPECT_NE(a.whole.flops_source.find("no upper bound"), std::string::npos);

  Launches simt;  // an elementwise kernel when no elementwise kernel was measured: the SIMT peak
  simt.measure(simt.add(kGemmA, 64, 100), 1e9);
  simt.add(kMul, 32, 100);
  EXPECT_DOUBLE_EQ(*kernel_flops(simt.analyze(), simt.profile(), kMul).high(), 100e-9 * kSimtPeak);
}

TEST(Flops, TimingOnlyLaunchesAreTimelineLaunches) {
  // A run whose discovery was ncu's timing mode: every launch carries gpu__time_duration and
  // launch statistics; the deep pass measured one of them.
  Launches l;
  l.measure(l.add(kGemmA, 64, 100), 1e9);
  for (int i = 0; i < 3; ++i) l.timing_only(l.add(kGemmA, 64, 100));
  l.timing_only(l.add(kCopy, 8, 100));
  Analysis a = l.analyze();
  for (std::size_t i = 1; i < l.profile().launches.size(); ++i) {
    EXPECT_FALSE(MetricResolver(l.profile()).has_deep_metrics(l.profile().launches[i]));
  }
  ASSERT_TRUE(a.whole.flops) << a.whole.flops_source;
  EXPECT_EQ(*a.whole.flops, 4e9);
  EXPECT_EQ(a.whole.flops_high, 4e9);
  ASSERT_TRUE(a.whole.mfu);

  // The timing pass alone: nothing was profiled, rather than profiled without FLOP counters.
  Launches timing;
  for (int i = 0; i < 3; ++i) timing.timing_only(timing.add(kGemmA, 64, 100));
  Analysis t = timing.analyze();
  EXPECT_FALSE(t.whole.flops);
  EXPECT_EQ(t.whole.flops_source,
            "not measured: no launch was profiled with FLOP counters; give --model-flops, or --params and --tokens");
}

TEST(Flops, LaunchesNeverMeasuredShareOneEstimatePerClass) {
  // A timeline of many launches, one measured: only launches measured or carried over from a
  // measurement have an estimate of their own; the others share their class's, and the bound
  // still follows each launch's own duration.
  Launches l;
  l.measure(l.add(kAdd, 32, 100), 0, 1e5);  // measured: 2e5 FLOPs in 100 ns
  l.add(kAdd, 64, 300);                     // another shape: the kernel's rate
  for (int i = 1; i <= 50; ++i) l.add(kMul, 32, 10.0 * i);
  for (int i = 0; i < 20; ++i) l.add(kCopy, 8, 40);
  const model::Profile& p = l.profile();
  std::vector<names::OpClass> op_class(p.names.size(), names::OpClass::kOther);
  op_class[p.launches[0].name] = op_class[p.launches[2].name] = names::OpClass::kElementwise;  // add, mul
  op_class[p.launches[52].name] = names::OpClass::kCopy;
  const MetricResolver resolver(p);
  const FlopsEstimates e = estimate_flops(p, resolver, op_class, nullptr);
  ASSERT_EQ(e.of_launch.size(), p.launches.size());
  // The two add launches' own, one elementwise and one copy estimate shared by the rest.
  EXPECT_EQ(std::set<std::uint32_t>(e.of_launch.begin(), e.of_launch.end()).size(), 2u + 2);
  EXPECT_EQ(e.of_launch[2], e.of_launch[51]);
  EXPECT_EQ(e.of_launch[52], e.of_launch.back());
  EXPECT_EQ(*e.launch(1).basis, FlopsBasis::kRate);
  EXPECT_DOUBLE_EQ(e.launch(1).flops, 2e5 / 100 * 300);
  FlopsTotal mul, copy;
  for (std::size_t i = 2; i < 52; ++i) mul.add(e.launch(i), p.launches[i].total_duration_ns());
  for (std::size_t i = 52; i < p.launches.size(); ++i) copy.add(e.launch(i), p.launches[i].total_duration_ns());
  ASSERT_TRUE(mul.high());
  EXPECT_DOUBLE_EQ(*mul.high(), 2e5 / 100 * (10.0 * 50 * 51 / 2));  // the measured rate x each launch's duration
  EXPECT_EQ(time_of(mul, FlopsBasis::kUnmeasured), 10.0 * 50 * 51 / 2);
  EXPECT_EQ(copy.high(), 0);
  EXPECT_EQ(time_of(copy, FlopsBasis::kNoWork), 800);
}

TEST(Flops, ProfiledWithoutCountersIsSaidNotGuessed) {
  Launches l;
  for (int i = 0; i < 2; ++i) l.without_counters(l.add(kGemmA, 64, 100));
  Analysis a = l.analyze();
  EXPECT_FALSE(a.flops_measured);
  EXPECT_FALSE(a.whole.flops);
  EXPECT_FALSE(a.whole.mfu);
  EXPECT_EQ(a.whole.flops_source,
            "not measured: SIMT work not measured (SASS fadd/fmul/ffma counts: ncu section "
            "SpeedOfLight_RooflineChart); give --model-flops, or --params and --tokens");
}

// The committed H100 runs (examples/data/runs, ncu timing-mode discovery, 2 prefills of
// llm_stages.py's models): their FLOPs' interval holds the models' analytic count, which the
// old scaling by all kernel time (no MFU at all here) could not say.
TEST(Flops, CommittedH100RunsHoldTheirAnalyticCount) {
  struct Case {
    const char* run;
    const char* config;
    std::int64_t batch;
  };
  for (const Case& c : {Case{"llama_prefill", "llama", 4}, Case{"qwen_prefill", "qwen", 4},
                        Case{"llama_prefill_b8", "llama", 8}}) {
    const std::string examples = test::fixture("../../examples/");
    auto loaded = load::load({examples + "data/runs/" + c.run}, test::builtin_classifier());
    ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
    const model::Profile& profile = loaded->profile;
    auto text = InputBuffer::open(examples + "workloads/configs/llm_stages_" + c.config + ".json");
    ASSERT_TRUE(text.ok());
    auto config = parse_model_config(text->bytes(), c.config);
    ASSERT_TRUE(config.ok());
    AnalysisOptions options;
    options.work.analytic = AnalyticWork{*config, c.config, {c.batch, 256, 2}, 2};
    auto a = analyze(profile, test::builtin_classifier(), options);
    ASSERT_TRUE(a.ok());
    const StageWork& prefill = a->stages.front();
    ASSERT_TRUE(prefill.flops && prefill.flops_high && prefill.analytic_flops && prefill.mfu) << c.run;
    EXPECT_DOUBLE_EQ(*prefill.analytic_flops, 2 * prefill_flops(*config, {c.batch, 256, 2}));
    EXPECT_LT(*prefill.flops, *prefill.analytic_flops) << c.run;   // the LM head was not measured
    EXPECT_GT(*prefill.flops_high, *prefill.analytic_flops) << c.run;
    EXPECT_GT(*prefill.flops_ratio, 0.65) << c.run;
    EXPECT_EQ(prefill.precision_source, "measured");
    EXPECT_TRUE(prefill.flops_ratio_flag.empty()) << prefill.flops_ratio_flag;
  }
}

// The whole profile's work and each stage row's come from one pass over the launches: on a
// timeline the whole profile is the whole-run row (same FLOPs, time and MFU), and without one
// (a raw page) it is every kernel's time and FLOPs, a row's at most.
TEST(ProfileWork, TheWholeProfileIsTheWholeRunRowOrEveryKernel) {
  for (const char* input : {"nsys/llama_stages.sqlite", "ncu/qwen_decode_raw.csv"}) {
    model::Profile p;
    ASSERT_TRUE(ingest::read_input(test::fixture(input), p)) << input;
    auto a = analyze(p, test::builtin_classifier(), {});
    ASSERT_TRUE(a.ok()) << input;
    ASSERT_FALSE(a->stages.empty()) << input;
    double kernel_ns = 0;
    for (const auto& l : p.launches) {
      if (l.kind == model::LaunchKind::kKernel) kernel_ns += l.total_duration_ns().value_or(0);
    }
    const StageRow& first = a->agg.stages.front();
    if (first.name == kWholeRunStage) {
      const StageWork& row = a->stages.front();
      EXPECT_EQ(a->whole.flops, row.flops) << input;
      EXPECT_EQ(a->whole.flops_high, row.flops_high) << input;
      EXPECT_EQ(a->whole.time_ns, *first.wall_ns) << input;
      EXPECT_EQ(a->whole.time_basis, "wall time") << input;
      EXPECT_EQ(a->whole.coverage, row.coverage) << input;
    } else {
      EXPECT_NEAR(a->whole.time_ns, kernel_ns, 1e-6 * kernel_ns) << input;
      EXPECT_EQ(a->whole.time_basis, "kernel time") << input;
      for (const StageWork& row : a->stages) {
        if (row.flops && a->whole.flops) {
          EXPECT_LE(*row.flops, *a->whole.flops * (1 + 1e-12)) << input;
        }
      }
    }
  }
}

// Each figure is answered by the most preferred of its names a launch has (here the 2025.3
// name before the older one, whatever the samples' order), a metric given twice by its first
// sample, nothing by a launch without it; moving between launches answers for each its own.
TEST(MetricResolver, ThePreferredNameAnswersEachLaunchForItself) {
  model::Profile p;
  const model::MetricId older = p.metrics.intern("dram__throughput.avg.pct_of_peak_sustained_elapsed", "%");
  const model::MetricId newer = p.metrics.intern("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%");
  const model::MetricId stall_wait = p.metrics.intern("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "");
  const model::MetricId stall_long =
      p.metrics.intern("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "");
  auto launch = [&](std::vector<model::MetricSample> samples) {
    model::Launch& l = p.launches.emplace_back();
    for (const auto& s : samples) p.add_metric(l, s);
  };
  launch({{older, 10}, {newer, 20}, {stall_wait, 0.5}, {stall_long, 3}});
  launch({{older, 30}});
  launch({{newer, 40}, {newer, 50}});
  launch({});
  const MetricResolver r(p);
  auto dram = [&](std::size_t i) { return r.get(p.launches[i], Figure::kDramPct); };
  for (int pass = 0; pass < 2; ++pass) {  // again, each launch's index made anew
    ASSERT_TRUE(dram(0));
    EXPECT_EQ(dram(0)->value, 20);
    EXPECT_EQ(dram(0)->source, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed");
    ASSERT_TRUE(dram(1));
    EXPECT_EQ(dram(1)->value, 30);
    EXPECT_EQ(dram(1)->source, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
    ASSERT_TRUE(dram(2));
    EXPECT_EQ(dram(2)->value, 40);
    EXPECT_FALSE(dram(3));
    EXPECT_FALSE(r.get(p.launches[0], Figure::kSmPct));
  }
  std::vector<std::pair<std::size_t, double>> stalls;
  r.stalls(p.launches[0], stalls);
  ASSERT_EQ(stalls.size(), 2u);
  EXPECT_EQ(MetricResolver::stall_reason(stalls[0].first), "long_scoreboard");  // largest first
  EXPECT_EQ(stalls[0].second, 3);
  EXPECT_EQ(MetricResolver::stall_reason(stalls[1].first), "wait");
  r.stalls(p.launches[1], stalls);
  EXPECT_TRUE(stalls.empty());
}

// Launches that carry the same metric ids in the same order (a raw page's, one kernel's) share
// the answers' positions, and each gives its own values; the same ids in another order, one id
// more, or a timing-only launch between them are layouts of their own. Checked against a
// brute-force lookup on launches drawn from a few layouts, asked in a random order.
TEST(MetricResolver, LaunchesOfOneLayoutAnswerWithTheirOwnSamples) {
  model::Profile p;
  const model::MetricId sm = p.metrics.intern("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%");
  const model::MetricId older = p.metrics.intern("dram__throughput.avg.pct_of_peak_sustained_elapsed", "%");
  const model::MetricId newer = p.metrics.intern("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%");
  const model::MetricId stall = p.metrics.intern("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "");
  const model::MetricId timing = p.metrics.intern("gpu__time_duration.sum", "ns");
  const model::MetricId regs = p.metrics.intern("launch__registers_per_thread", "");
  const std::vector<std::vector<model::MetricId>> layouts = {
      {timing, regs, sm, older, stall},  {timing, regs, sm, older, stall, newer}, {stall, older, sm, regs, timing},
      {timing, regs},                    {newer, newer, older},                   {}};
  std::mt19937 rng(7);
  std::vector<std::size_t> layout_of;
  for (int i = 0; i < 400; ++i) {
    // runs of one layout, as a kernel's launches come, broken now and then
    const std::size_t layout = (i == 0 || rng() % 4 == 0) ? rng() % layouts.size() : layout_of.back();
    layout_of.push_back(layout);
    model::Launch& l = p.launches.emplace_back();
    for (model::MetricId id : layouts[layout]) p.add_metric(l, {id, static_cast<double>(rng() % 1000)});
  }
  auto brute = [&](const model::Launch& l, std::initializer_list<model::MetricId> preferred) -> std::optional<double> {
    for (model::MetricId id : preferred) {
      for (const auto& m : p.metrics_of(l)) {
        if (m.id == id) return m.value;
      }
    }
    return std::nullopt;
  };
  auto value = [](const std::optional<Sourced>& s) { return s ? std::optional<double>(s->value) : std::nullopt; };
  const MetricResolver r(p);
  std::vector<std::pair<std::size_t, double>> stalls;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::size_t> order(p.launches.size());
    std::iota(order.begin(), order.end(), 0);
    if (round > 0) std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t i : order) {
      const model::Launch& l = p.launches[i];
      // the questions in an order of their own at each launch
      const int first_question = static_cast<int>(rng() % 3);
      for (int q = 0; q < 3; ++q) {
        switch ((first_question + q) % 3) {
          case 0: EXPECT_EQ(value(r.get(l, Figure::kSmPct)), brute(l, {sm})) << i; break;
          case 1: EXPECT_EQ(value(r.get(l, Figure::kDramPct)), brute(l, {newer, older})) << i; break;
          default:
            r.stalls(l, stalls);
            EXPECT_EQ(stalls.empty() ? std::nullopt : std::optional<double>(stalls[0].second), brute(l, {stall})) << i;
        }
      }
      EXPECT_EQ(r.has_deep_metrics(l), brute(l, {sm, older, newer, stall}).has_value()) << i;
      if (auto d = r.get(l, Figure::kDramPct)) {
        EXPECT_EQ(d->source, brute(l, {newer}) ? p.metrics[newer].name : p.metrics[older].name) << i;
      }
    }
  }
}

}  // namespace
}  // namespace kernlens::analysis

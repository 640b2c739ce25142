// The analysis finds the launches' runs of one input, process and GPU (ranks.cpp, in stretches),
// lists each name's launches (analysis.cpp, launches_by_name), sums the kernel and stage rows
// in stretches (aggregate.cpp, where the sums are exact), works out kernels and families
// (insights_in_parallel) and each launch's measured FLOPs (flops.cpp, measure_launches) on
// several threads, the timeline's pass over the kernels beside the aggregate's rows
// (TimelineSweep) and the ranks beside the insights (analysis.cpp): its result, written out
// whole as analyze's JSON, is the one a single thread gives, on fixtures large enough to use
// every thread asked for (the nsys export has stage rows and a timeline, its rows swept in
// parts on several threads). Fractional sums over more than kSumStretchLaunches launches (a
// kernel's figures, the MFU's FLOPs) are taken in fixed stretches, whatever the threads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/analysis/analysis.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/step_times.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/report/json_report.h"
#include "test_util.h"

namespace kernlens {
namespace {

// The fixtures' launches (one profile: several ranks' traces make a multi-rank profile)
// repeated to at least `launches`, each copy sharing the first's metric samples (a profile of
// thousands of launches without reading megabytes).
model::Profile repeated(const std::vector<std::string>& fixtures, std::size_t launches) {
  model::Profile p;
  for (const auto& fixture : fixtures) EXPECT_TRUE(ingest::read_input(test::fixture(fixture), p).ok());
  const std::size_t n = p.launches.size();
  for (std::size_t c = 1; c * n < launches; ++c) {
    for (std::size_t i = 0; i < n; ++i) p.launches.push_back(p.launches[i]);
  }
  return p;
}

std::string analysis_on(const model::Profile& p, unsigned threads) {
  set_default_threads(threads);
  auto a = analysis::analyze(p, test::builtin_classifier(), {});
  set_default_threads(0);
  EXPECT_TRUE(a.ok());
  return a.ok() ? report::analysis_json(p, *a, {}) : std::string();
}

TEST(ParallelAnalysis, TheSameOnAnyNumberOfThreads) {
  // FLOPs not measured (qwen), measured for some kernels (gpt2) and for all (llama decode);
  // two ranks of tensor parallelism (the ranks' figures).
  const std::vector<std::vector<std::string>> inputs = {
      {"ncu/qwen_decode_raw.csv"}, {"ncu/gpt2_prefill_raw.csv"}, {"ncu/llama_decode_raw.csv"},
      {"nsys/llama_stages.sqlite"},
      {"multirank/tp_nccl_h200_rank-0.json.gz", "multirank/tp_nccl_h200_rank-1.json.gz"}};
  for (const auto& fixtures : inputs) {
    const model::Profile p = repeated(fixtures, 4 * 4096);
    ASSERT_GT(p.launches.size(), 3u * 4096) << fixtures[0];  // enough for several threads
    const std::string one = analysis_on(p, 1);
    ASSERT_NE(one.find("\"kernels\""), std::string::npos);
    if (fixtures.size() > 1) {
      ASSERT_NE(one.find("\"ranks\""), std::string::npos);
    }
    for (unsigned threads : {2u, 3u, 8u}) EXPECT_EQ(analysis_on(p, threads), one) << fixtures[0] << " on " << threads;
  }
}

// The steps analyze recorded, as text.
std::string steps_on(const model::Profile& p, unsigned threads) {
  StepTimes times;
  analysis::AnalysisOptions options;
  options.step_times = &times;
  set_default_threads(threads);
  EXPECT_TRUE(analysis::analyze(p, test::builtin_classifier(), options).ok());
  set_default_threads(0);
  return times.text();
}

// The parts a step of `steps` (steps_on) says it was cut into: "STEP, N parts", else 1.
std::size_t parts_of(const std::string& steps, const std::string& step) {
  const std::string prefix = step + ", ";
  const std::size_t at = steps.find(prefix);
  return at == std::string::npos ? 1 : std::stoul(steps.substr(at + prefix.size()));
}

// Every time sum of an aggregate, in its order: the total, each kernel's and its stages', each
// stage row's and memory operation's.
std::vector<double> time_sums(const model::Profile& p, unsigned threads) {
  set_default_threads(threads);
  const analysis::Aggregate agg = analysis::aggregate(p, test::builtin_classifier());
  set_default_threads(0);
  std::vector<double> sums = {agg.totals.kernel_time_ns.value_or(-1)};
  for (const auto& k : agg.kernels) {
    sums.push_back(k.total_ns.value_or(-1));
    for (const auto& [label, ns] : k.stage_ns) sums.push_back(ns);
  }
  for (const auto& s : agg.stages) sums.push_back(s.kernel_time_ns);
  for (const auto& m : agg.memory_ops) sums.push_back(m.total_ns.value_or(-1));
  return sums;
}

// The kernel and stage rows are summed in stretches on several threads where every time is a
// whole number of ns and the sums stay exact (their magnitudes below 2^52 together); else in
// one pass. Either way every sum is the double a single thread gives, bit for bit: here where
// the exact sums and the in-order sums of one pass differ, too.
TEST(ParallelAnalysis, RowsSummedInPartsOnlyWhereTheSumsAreExact) {
  const model::Profile whole = repeated({"nsys/llama_stages.sqlite"}, 4 * 4096);
  EXPECT_EQ(parts_of(steps_on(whole, 4), "kernel and stage rows"), 4u) << steps_on(whole, 4);
  EXPECT_EQ(parts_of(steps_on(whole, 2), "kernel and stage rows"), 4u) << steps_on(whole, 2);  // more than threads
  EXPECT_EQ(steps_on(whole, 1).find("kernel and stage rows,"), std::string::npos);
  EXPECT_EQ(time_sums(whole, 4), time_sums(whole, 1));

  model::Profile fractional = whole;
  fractional.launches[fractional.launches.size() / 2].duration_ns = 1.5;
  model::Profile large = whole;  // 2^51 + 1 ns now and then: sums in launch order lose the ones
  for (std::size_t i = 0; i < large.launches.size(); i += 997) large.launches[i].duration_ns = 0x1p51 + 1;
  double in_order = 0;
  std::int64_t exact = 0;
  for (const auto& l : large.launches) {
    if (l.kind != model::LaunchKind::kKernel || !l.duration_ns) continue;
    in_order += *l.total_duration_ns();
    exact += static_cast<std::int64_t>(*l.total_duration_ns());
  }
  ASSERT_NE(in_order, static_cast<double>(exact));  // the case under test happens
  for (const model::Profile* p : {&fractional, &large}) {
    const std::string steps = steps_on(*p, 4);
    EXPECT_NE(steps.find("kernel and stage rows "), std::string::npos) << steps;  // one pass
    const std::vector<double> one = time_sums(*p, 1);
    EXPECT_EQ(one.front(), p == &large ? in_order : one.front());
    for (unsigned threads : {2u, 4u}) EXPECT_EQ(time_sums(*p, threads), one) << threads << " threads";
    EXPECT_EQ(analysis_on(*p, 4), analysis_on(*p, 1));
  }
}

// MFU per stage and the ranks run beside the insights: their lines carry the CPU of the threads
// that worked them out (CpuTally), and the insights' step holds it in its own.
TEST(ParallelAnalysis, TheStepsBesideTheInsightsShowTheirOwnThreadsCpu) {
  const model::Profile whole = repeated({"nsys/llama_stages.sqlite"}, 4 * 4096);
  StepTimes times;
  analysis::AnalysisOptions options;
  options.step_times = &times;
  set_default_threads(4);
  ASSERT_TRUE(analysis::analyze(whole, test::builtin_classifier(), options).ok());
  set_default_threads(0);
  std::int64_t side_by_side = -1, mfu = -1, ranks = -1, aggregate = -1, rows = -1, timeline = -1;
  for (const StepTimes::Step& s : times.steps()) {
    if (s.name == "insights, MFU and ranks, side by side") side_by_side = s.cpu_ns;
    if (s.name == "MFU per stage (beside)") mfu = s.cpu_ns;
    if (s.name == "ranks (beside)") ranks = s.cpu_ns;
    if (s.name == "kernels, families, stages, timeline") aggregate = s.cpu_ns;
    if (s.name.starts_with("kernel and stage rows, ")) rows = s.cpu_ns;
    if (s.name.starts_with("timeline, ")) timeline = s.cpu_ns;
  }
  EXPECT_GT(mfu, 0) << times.text();  // the stages' MFU over 65,536 launches takes some
  EXPECT_GE(ranks, 0) << times.text();
  EXPECT_LE(mfu + ranks, side_by_side) << times.text();
  // The aggregate's two passes side by side, each on its own threads (in parts at 4 threads).
  EXPECT_GT(rows, 0) << times.text();
  EXPECT_GT(timeline, 0) << times.text();
  EXPECT_LE(rows + timeline, aggregate) << times.text();
}

// Every timeline figure of an aggregate, in order: each lane's and each stage row's busy,
// wall and gap figures, the stage rows' instances.
std::vector<double> timeline_figures(const model::Profile& p, unsigned threads) {
  set_default_threads(threads);
  const analysis::Aggregate agg = analysis::aggregate(p, test::builtin_classifier());
  set_default_threads(0);
  std::vector<double> out;
  auto add = [&](const analysis::Coverage& c) {
    out.insert(out.end(), {c.busy_ns, c.wall_ns, static_cast<double>(c.gaps.count), c.gaps.total_ns, c.gaps.largest_ns});
  };
  for (const auto& lane : agg.lane_coverages) {
    if (lane) add(*lane);
    else out.push_back(-1);
  }
  for (const auto& s : agg.stages) {
    out.insert(out.end(), {s.wall_ns.value_or(-1), s.busy_ns.value_or(-1), static_cast<double>(s.instances.value_or(0))});
    if (s.gaps) out.insert(out.end(), {static_cast<double>(s.gaps->count), s.gaps->total_ns, s.gaps->largest_ns});
  }
  return out;
}

// The timeline is swept in stretches of the kernels on several threads, up to four a thread,
// each thread taking the next: its figures are those of one pass, bit for bit, where kernels
// overlap across the stretches' ends (the repeated copies), come out of start order, last no
// time, and stages have extents of no length.
TEST(ParallelAnalysis, TimelineSweptInStretchesGivesTheFiguresOfOnePass) {
  const std::vector<std::vector<std::string>> inputs = {
      {"nsys/llama_stages.sqlite"}, {"multirank/tp_nccl_h200_rank-0.json.gz", "multirank/tp_nccl_h200_rank-1.json.gz"}};
  for (const auto& fixtures : inputs) {
    const model::Profile base = repeated(fixtures, 8 * 4096);
    model::Profile moved = base;  // a third of the kernels moved by up to 5 us, some of no length
    std::uint64_t x = 22;
    for (std::size_t i = 0; i < moved.launches.size(); ++i) {
      x = x * 6364136223846793005u + 1442695040888963407u;
      model::Launch& l = moved.launches[i];
      if (!l.start_ns || x % 3 != 0) continue;
      *l.start_ns += static_cast<std::int64_t>((x >> 33) % 10000) - 5000;
      if (x % 7 == 0) l.duration_ns = 0;
    }
    for (std::size_t r = 0, n = moved.stage_ranges.size(); r < n; r += 3) {
      model::StageRange point = moved.stage_ranges[r];
      point.start_ns = point.end_ns = moved.stage_ranges[r].end_ns + 1000;
      moved.stage_ranges.push_back(point);
    }
    for (const model::Profile* p : {&base, static_cast<const model::Profile*>(&moved)}) {
      const std::vector<double> one = timeline_figures(*p, 1);
      ASSERT_GT(one.size(), 10u) << fixtures[0];
      for (unsigned threads : {2u, 3u, 8u}) EXPECT_EQ(timeline_figures(*p, threads), one) << fixtures[0] << " on " << threads;
      EXPECT_NE(steps_on(*p, 4).find("timeline, "), std::string::npos) << steps_on(*p, 4);  // in parts
      EXPECT_GT(parts_of(steps_on(*p, 2), "timeline"), 2u) << steps_on(*p, 2);  // more stretches than threads
      EXPECT_EQ(parts_of(steps_on(*p, 1), "timeline"), 1u) << steps_on(*p, 1);  // one on one thread
    }
  }
}

// Whether the kernels come by start on each lane is checked in chunks on several threads: a
// kernel that starts before the last one of its lane in an earlier chunk (and first in its
// own) is found out, and the timeline sorts the kernels as one thread does.
TEST(ParallelAnalysis, AKernelOutOfStartOrderAcrossChunksIsFoundOut) {
  model::Profile p = repeated({"nsys/llama_stages.sqlite"}, 3 * 65536);
  for (std::size_t i = 0; i < p.launches.size(); ++i) p.launches[i].start_ns = static_cast<std::int64_t>(i) * 10000;  // by start
  const std::size_t boundary = p.launches.size() / 2;  // the second of two chunks' first launch
  ASSERT_EQ(p.launches[boundary].kind, model::LaunchKind::kKernel);
  const model::Profile in_order = p;
  p.launches[boundary].start_ns = -10000;  // before every kernel
  const std::vector<double> one = timeline_figures(p, 1);
  EXPECT_NE(one, timeline_figures(in_order, 1));  // the change is seen
  EXPECT_EQ(timeline_figures(p, 2), one);
}

// Every figure of the MFU per stage row and of the whole profile, in order.
std::vector<double> mfu_figures(const model::Profile& p, unsigned threads) {
  set_default_threads(threads);
  auto a = analysis::analyze(p, test::builtin_classifier(), {});
  set_default_threads(0);
  EXPECT_TRUE(a.ok());
  std::vector<double> out;
  if (!a.ok()) return out;
  std::vector<const analysis::StageWork*> works = {&a->whole};
  for (const auto& w : a->stages) works.push_back(&w);
  for (const analysis::StageWork* w : works) {
    for (const auto& v : {w->flops, w->flops_low, w->flops_high, w->mfu, w->mfu_low, w->mfu_high, w->coverage})
      out.push_back(v.value_or(-1));
    out.push_back(w->time_ns);
  }
  return out;
}

// The MFU's sums (each stage row's and the whole profile's FLOPs, kernel time and time with
// deep metrics) are taken in fixed stretches of the profile's launches, on any number of
// threads: the same figures, bit for bit, where FLOPs and times are fractional (FLOPs measured
// for some kernels, rate x duration for the rest; the durations made fractional) and summing
// the launches in two stretches gives other doubles than one pass.
TEST(ParallelAnalysis, MfuSumsAreTheSameOnAnyNumberOfThreads) {
  model::Profile p = repeated({"ncu/gpt2_prefill_raw.csv"}, 4 * 4096);
  auto stage = [&](std::vector<std::string> path) {
    model::StageKey key;
    for (auto& n : path) key.push_pop.push_back(model::NvtxRange{"", n, model::RangeKind::kPushPop});
    return p.intern_stage(std::move(key));
  };
  const std::vector<model::StageId> stages = {stage({"step", "prefill"}), stage({"step", "decode"}),
                                              stage({"step", "decode", "layer"}), stage({"other"}), 0};
  for (std::size_t i = 0; i < p.launches.size(); ++i) {
    model::Launch& l = p.launches[i];
    l.stage = stages[(i / 7 + i % 3) % stages.size()];
    if (l.duration_ns) *l.duration_ns *= 1 + 1e-7 * static_cast<double>(i % 5);  // fractional ns
  }
  double in_order = 0, first_half = 0, second_half = 0;
  for (std::size_t i = 0; i < p.launches.size(); ++i) {
    const double ns = p.launches[i].total_duration_ns().value_or(0);
    in_order += ns;
    (i < p.launches.size() / 2 ? first_half : second_half) += ns;
  }
  ASSERT_NE(in_order, first_half + second_half);  // the case under test happens
  const std::vector<double> one = mfu_figures(p, 1);
  ASSERT_GT(one.size(), 5u * 8);                  // the whole profile and every stage row
  ASSERT_GT(one[0], 0);                           // FLOPs known
  for (unsigned threads : {2u, 3u, 8u}) EXPECT_EQ(mfu_figures(p, threads), one) << threads << " threads";
}

// A kernel's figures over more launches than a stretch: its launches summed in stretches of
// kSumStretchLaunches, each from zero in launch order, the stretches' sums added in order, on
// any number of threads; here where that differs from one pass over the launches.
TEST(ParallelAnalysis, AKernelOfManyLaunchesIsSummedInFixedStretches) {
  model::Profile p = repeated({"ncu/gpt2_prefill_raw.csv"}, 1);
  std::vector<std::size_t> per_name(p.names.size(), 0);
  for (const auto& l : p.launches) per_name[l.name] += l.kind == model::LaunchKind::kKernel;
  const auto most = static_cast<model::NameId>(std::max_element(per_name.begin(), per_name.end()) - per_name.begin());
  p = repeated({"ncu/gpt2_prefill_raw.csv"}, p.launches.size() * (3 * analysis::kSumStretchLaunches / per_name[most] + 1));
  std::vector<double> durations;  // the kernel's, in launch order
  for (std::size_t i = 0; i < p.launches.size(); ++i) {
    model::Launch& l = p.launches[i];
    if (l.duration_ns) *l.duration_ns *= 1 + 1e-7 * static_cast<double>(i % 5);  // fractional ns
    if (l.name == most && l.kind == model::LaunchKind::kKernel) durations.push_back(*l.total_duration_ns());
  }
  ASSERT_GT(durations.size(), 3 * analysis::kSumStretchLaunches);
  double one_pass = 0, in_stretches = 0;
  for (std::size_t begin = 0; begin < durations.size(); begin += analysis::kSumStretchLaunches) {
    double stretch = 0;
    for (std::size_t i = begin; i < std::min(durations.size(), begin + analysis::kSumStretchLaunches); ++i) stretch += durations[i];
    in_stretches += stretch;
  }
  for (double d : durations) one_pass += d;
  ASSERT_NE(one_pass, in_stretches);  // the case under test happens
  for (unsigned threads : {1u, 3u}) {
    set_default_threads(threads);
    auto a = analysis::analyze(p, test::builtin_classifier(), {});
    set_default_threads(0);
    ASSERT_TRUE(a.ok());
    const auto row = std::find_if(a->agg.kernels.begin(), a->agg.kernels.end(), [&](const auto& k) { return k.name == most; });
    ASSERT_NE(row, a->agg.kernels.end());
    const analysis::KernelMetrics& m = a->kernels[static_cast<std::size_t>(row - a->agg.kernels.begin())].metrics;
    EXPECT_EQ(m.launches, durations.size());
    EXPECT_EQ(m.time_ns, in_stretches) << threads << " threads";
  }
}

}  // namespace
}  // namespace kernlens

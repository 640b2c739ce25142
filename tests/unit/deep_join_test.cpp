// Joining a deep ncu pass onto a discovery timeline: real H100 data of the same llama-like
// workload (examples/workloads/llm_stages.py), ncu on 40 decode launches, nsys timeline.
#include "kernlens/load/deep_join.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kernlens/analysis/analysis.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/ingest/reconcile.h"
#include "test_util.h"

namespace kernlens::load {
namespace {

model::Profile deep_decode() {
  model::Profile deep;
  for (const char* f : {"ncu/llama_decode_raw.csv", "ncu/llama_decode_details.csv.gz"}) {
    EXPECT_TRUE(ingest::read_input(test::fixture(f), deep).ok()) << f;
  }
  ingest::reconcile_inputs(deep);
  return deep;
}

std::size_t launches_with_metrics(const model::Profile& p) {
  return static_cast<std::size_t>(
      std::count_if(p.launches.begin(), p.launches.end(), [](const auto& l) { return l.metrics_count > 0; }));
}

TEST(DeepJoin, NcuMetricsLandOnTimelineLaunchesOfTheSameKernel) {
  auto timeline = test::read_fixture("nsys/llama_stages.sqlite");
  ASSERT_TRUE(timeline.status.ok());
  model::Profile deep = deep_decode();
  const std::size_t launches_before = timeline.profile.launches.size();
  DeepJoin join = join_deep_metrics(timeline.profile, deep);
  EXPECT_EQ(join.launches_joined + 0, launches_with_metrics(timeline.profile));
  EXPECT_EQ(timeline.profile.launches.size(), launches_before);  // no launch added: time is the timeline's
  for (const auto& name : join.unmatched) ADD_FAILURE() << "unmatched: " << name;
  EXPECT_EQ(join.launches_joined, 40u);
  // Each joined launch got the metrics of a launch of its own kernel: same base name, shape.
  auto analysis = analysis::analyze(timeline.profile, test::builtin_classifier(), {});
  ASSERT_TRUE(analysis.ok());
  std::size_t explained = 0;
  for (std::size_t k = 0; k < analysis->kernels.size(); ++k) {
    const auto& m = analysis->kernels[k].metrics;
    if (m.deep_time_ns > 0) {
      ++explained;
      EXPECT_TRUE(m.figures[static_cast<std::size_t>(analysis::Figure::kSmPct)].has_value());
    }
  }
  EXPECT_GT(explained, 10u);
  EXPECT_EQ(analysis->coverage.deep_launches, 40u);
  EXPECT_EQ(analysis->coverage.launches, 5592u);
  // The device gains what ncu knows and the timeline did not (the SM clock).
  EXPECT_TRUE(timeline.profile.find_device(0)->sm_clock_max_hz.has_value());
}

TEST(DeepJoin, KernelsTheTimelineLacksAreReportedNotGuessed) {
  auto timeline = test::read_fixture("nsys/saxpy-mpi-cuda_nsys2022.2.sqlite");
  ASSERT_TRUE(timeline.status.ok());
  model::Profile deep = deep_decode();
  DeepJoin join = join_deep_metrics(timeline.profile, deep);
  EXPECT_EQ(join.launches_joined, 0u);
  EXPECT_EQ(launches_with_metrics(timeline.profile), 0u);
  EXPECT_GT(join.unmatched.size(), 10u);
  EXPECT_EQ(std::set<std::string>(join.unmatched.begin(), join.unmatched.end()).size(), join.unmatched.size());
}

// A real `kernlens profile` run on the H100 (tests/fixtures/profile_run): discovery and deep
// pass both name kernels mangled, so every deep launch finds its kernel by name.
TEST(DeepJoin, RealProfileRunJoinsEveryDeepLaunch) {
  auto timeline = test::read_fixture("profile_run/llama_prefill/discovery/timing_raw.csv.gz");
  ASSERT_TRUE(timeline.status.ok()) << timeline.status.error().to_string();
  model::Profile deep;
  for (const char* f : {"profile_run/llama_prefill/deep/deep_1_raw.csv.gz",
                        "profile_run/llama_prefill/deep/deep_1_details.csv.gz"}) {
    ASSERT_TRUE(ingest::read_input(test::fixture(f), deep).ok()) << f;
  }
  ingest::reconcile_inputs(deep);
  DeepJoin join = join_deep_metrics(timeline.profile, deep);
  EXPECT_EQ(join.launches_joined, 27u);
  EXPECT_TRUE(join.unmatched.empty());
  auto analysis = analysis::analyze(timeline.profile, test::builtin_classifier(), {});
  ASSERT_TRUE(analysis.ok());
  EXPECT_EQ(analysis->coverage.launches, 684u);
  EXPECT_EQ(analysis->coverage.deep_launches, 27u);
  EXPECT_EQ(analysis->coverage.measured_kernels, 15u);
  EXPECT_NEAR(*analysis->coverage.measured_kernel_fraction(), 0.921, 0.001);
}

// One kernel, one grid, two problem sizes (a GEMM of another K: llama's down_proj shares
// q_proj's kernel and grid): the deep launch's counters belong on a launch of its own size,
// not on the kernel's median launch, or the same-shape FLOPs of analysis/flops.h would be
// another size's.
TEST(DeepJoin, TheMeasuredLaunchLandsOnALaunchOfItsOwnShapeAndDuration) {
  auto add = [](model::Profile& p, std::uint32_t grid, double duration_ns) -> model::Launch& {
    model::Launch l;
    l.name = p.names.intern("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT");
    l.config = p.intern_config({.grid = {grid, 1, 1}, .block = {384, 1, 1}});
    l.duration_ns = duration_ns;
    p.launches.push_back(l);
    return p.launches.back();
  };
  model::Profile timeline;
  for (int i = 0; i < 4; ++i) add(timeline, 64, 100 + i);  // q, k, v, o: the median
  add(timeline, 64, 270);                                   // down: K 2.75x
  add(timeline, 128, 300);                                  // another grid
  model::Profile deep;
  model::Launch& measured = add(deep, 64, 310);  // ncu's own duration: a little slower
  deep.add_metric(measured, {deep.metrics.intern("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"), 50});
  DeepJoin join = join_deep_metrics(timeline, deep);
  ASSERT_EQ(join.launches_joined, 1u);
  for (std::size_t i = 0; i < timeline.launches.size(); ++i) {
    EXPECT_EQ(timeline.launches[i].metrics_count > 0, i == 4) << i;
  }
}

}  // namespace
}  // namespace kernlens::load

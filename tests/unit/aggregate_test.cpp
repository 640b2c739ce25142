#include "kernlens/analysis/aggregate.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace kernlens::analysis {
namespace {

using model::NvtxRange;
using model::RangeKind;

struct ProfileBuilder {
  model::Profile p;

  model::StageId stage(std::vector<std::string> path, std::vector<std::string> start_end = {}) {
    model::StageKey key;
    for (auto& n : path) key.push_pop.push_back(NvtxRange{"", n, RangeKind::kPushPop});
    for (auto& n : start_end) key.start_end.push_back(NvtxRange{"", n, RangeKind::kStartEnd});
    return p.intern_stage(std::move(key));
  }
  void launch(const std::string& name, std::optional<double> ns, model::StageId stage = 0,
              std::uint32_t count = 1, std::int16_t device = 0) {
    model::Launch l;
    l.name = p.names.intern(name);
    l.duration_ns = ns;
    l.stage = stage;
    l.count = count;
    l.device_ordinal = device;
    p.launches.push_back(l);
  }
};

TEST(Aggregate, KernelsRankedByTotalTimeWithShares) {
  ProfileBuilder b;
  b.launch("small", 10);
  b.launch("big", 100);
  b.launch("small", 30);
  b.launch("summarised", 20, 0, 3);  // a summary row standing for 3 launches
  Aggregate a = aggregate(b.p, test::builtin_classifier());
  ASSERT_EQ(a.kernels.size(), 3u);
  EXPECT_EQ(b.p.names[a.kernels[0].name], "big");
  EXPECT_EQ(b.p.names[a.kernels[1].name], "summarised");
  EXPECT_EQ(b.p.names[a.kernels[2].name], "small");
  EXPECT_EQ(a.kernels[1].launches, 3u);
  EXPECT_EQ(*a.kernels[1].total_ns, 60);
  EXPECT_EQ(*a.kernels[1].mean_ns, 20);
  EXPECT_EQ(*a.kernels[2].mean_ns, 20);
  EXPECT_DOUBLE_EQ(*a.kernels[0].share, 0.5);
  EXPECT_EQ(*a.totals.kernel_time_ns, 200);
  EXPECT_EQ(a.totals.launches, 6u);
  EXPECT_EQ(a.totals.unique_kernels, 3u);
}

TEST(Aggregate, TiesBreakByLaunchesThenName) {
  ProfileBuilder b;
  b.launch("b", 10);
  b.launch("a", 10);
  b.launch("c", 5);
  b.launch("c", 5);
  Aggregate a = aggregate(b.p, test::builtin_classifier());
  EXPECT_EQ(b.p.names[a.kernels[0].name], "c");
  EXPECT_EQ(b.p.names[a.kernels[1].name], "a");
  EXPECT_EQ(b.p.names[a.kernels[2].name], "b");
}

TEST(Aggregate, LaunchesWithoutDurationAreCountedButNotTimed) {
  ProfileBuilder b;
  b.launch("timed", 10);
  b.launch("untimed", std::nullopt);
  b.launch("timed", std::nullopt);
  Aggregate a = aggregate(b.p, test::builtin_classifier());
  EXPECT_EQ(*a.totals.kernel_time_ns, 10);
  EXPECT_EQ(a.totals.launches, 3u);
  ASSERT_EQ(a.kernels.size(), 2u);
  EXPECT_EQ(a.kernels[0].launches, 2u);
  EXPECT_EQ(a.kernels[0].timed_launches, 1u);
  EXPECT_EQ(*a.kernels[0].mean_ns, 10);
  EXPECT_FALSE(a.kernels[1].total_ns.has_value());
  EXPECT_FALSE(a.kernels[1].share.has_value());

  ProfileBuilder none;
  none.launch("x", std::nullopt);
  EXPECT_FALSE(aggregate(none.p, test::builtin_classifier()).totals.kernel_time_ns.has_value());
}

TEST(Aggregate, StageTreeIsInclusiveAndInFirstSeenOrder) {
  ProfileBuilder b;
  auto prefill = b.stage({"prefill"});
  auto decode_attn = b.stage({"decode", "attn"});
  auto decode = b.stage({"decode"});
  auto io = b.stage({"decode"}, {"io"});
  b.launch("k", 10, prefill);
  b.launch("k", 5, decode_attn);
  b.launch("k", 2, decode);
  b.launch("j", 1, io);
  b.launch("k", 100, 0);  // outside every range
  Aggregate a = aggregate(b.p, test::builtin_classifier());
  ASSERT_EQ(a.stages.size(), 4u);
  EXPECT_EQ(a.stages[0].name, "prefill");
  EXPECT_EQ(a.stages[1].name, "decode");
  EXPECT_EQ(a.stages[1].kernel_time_ns, 8);  // 5 + 2 + 1: nested and start/end launches included
  EXPECT_EQ(a.stages[1].launches, 3u);
  EXPECT_EQ(a.stages[2].name, "decode/attn");
  EXPECT_EQ(a.stages[2].label, "attn");
  EXPECT_EQ(a.stages[2].depth, 1);
  EXPECT_EQ(a.stages[3].name, "io");
  EXPECT_EQ(a.stages[3].kernel_time_ns, 1);
  const KernelRow& k = a.kernels[0];
  ASSERT_EQ(k.stage_ns.size(), 3u);
  EXPECT_EQ(k.stage_ns[0], (std::pair<std::string, double>{"prefill", 10}));
  EXPECT_EQ(k.stage_ns[1], (std::pair<std::string, double>{"decode/attn", 5}));
  EXPECT_EQ(k.stage_ns[2], (std::pair<std::string, double>{"decode", 2}));
  const KernelRow& j = a.kernels[1];
  EXPECT_EQ(j.stage_ns, (std::vector<std::pair<std::string, double>>{{"decode", 1}, {"io", 1}}));
}

TEST(Aggregate, PrimaryDeviceRanMostLaunches) {
  ProfileBuilder b;
  b.launch("a", 1, 0, 1, 1);
  b.launch("a", 1, 0, 5, 0);
  b.launch("a", 1, 0, 2, 1);
  EXPECT_EQ(aggregate(b.p, test::builtin_classifier()).device_ordinal, 0);
  ProfileBuilder none;
  none.launch("a", 1, 0, 1, -1);
  EXPECT_FALSE(aggregate(none.p, test::builtin_classifier()).device_ordinal.has_value());
}

}  // namespace
}  // namespace kernlens::analysis

namespace kernlens::model {
namespace {

TEST(Profile, MetricsOfALaunchStayContiguous) {
  Profile p;
  Launch a, b;
  p.add_metric(a, {1, 1.0});
  p.add_metric(b, {2, 2.0});
  p.add_metric(a, {3, 3.0});  // a's samples are no longer at the pool's end: moved there
  ASSERT_EQ(a.metrics_count, 2u);
  auto sa = p.metrics_of(a);
  EXPECT_EQ(sa[0].id, 1u);
  EXPECT_EQ(sa[1].id, 3u);
  EXPECT_EQ(p.metrics_of(b)[0].value, 2.0);
  EXPECT_EQ(p.find_metric(a, 3)->value, 3.0);
  EXPECT_EQ(p.find_metric(a, 2), nullptr);
}

}  // namespace
}  // namespace kernlens::model

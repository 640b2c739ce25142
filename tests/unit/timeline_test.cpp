#include "kernlens/analysis/timeline.h"

#include <gtest/gtest.h>

#include "kernlens/analysis/aggregate.h"
#include "test_util.h"

namespace kernlens::analysis {
namespace {

using model::NvtxRange;
using model::RangeKind;

TEST(Intervals, MergeOverlappingAndTouching) {
  std::vector<Interval> v = {{10, 20}, {0, 5}, {15, 30}, {30, 31}, {40, 41}};
  merge_intervals(v);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].begin_ns, 0);
  EXPECT_EQ(v[0].end_ns, 5);
  EXPECT_EQ(v[1].begin_ns, 10);
  EXPECT_EQ(v[1].end_ns, 31);
  EXPECT_EQ(v[2].begin_ns, 40);
}

TEST(Intervals, CoverageCountsIdleGapsInsideExtentsOnly) {
  // Extent [0, 100): kernels at [10,20) and [50,60) leave gaps 10, 30 and 40.
  // Extent [200, 210): fully busy. The 100 ns between the extents is not a gap.
  std::vector<Interval> busy = {{10, 20}, {50, 60}, {200, 210}};
  std::vector<Interval> extents = {{0, 100}, {200, 210}};
  Coverage c = coverage(busy, extents);
  EXPECT_EQ(c.wall_ns, 110);
  EXPECT_EQ(c.busy_ns, 30);
  EXPECT_EQ(c.gaps.count, 3u);
  EXPECT_EQ(c.gaps.total_ns, 80);
  EXPECT_EQ(c.gaps.largest_ns, 40);
}

struct TimelineBuilder {
  model::Profile p;
  model::StageId stage(std::vector<std::string> path) {
    model::StageKey key;
    for (auto& n : path) key.push_pop.push_back(NvtxRange{"", n, RangeKind::kPushPop});
    return p.intern_stage(std::move(key));
  }
  void kernel(const std::string& name, std::int64_t start, double ns, model::StageId stage) {
    model::Launch l;
    l.name = p.names.intern(name);
    l.start_ns = start;
    l.duration_ns = ns;
    l.stage = stage;
    p.launches.push_back(l);
  }
};

TEST(Timeline, StageFiguresFromExtentsAndOverlappingKernels) {
  TimelineBuilder b;
  auto decode = b.stage({"decode"});
  auto attn = b.stage({"decode", "attn"});
  // Two decode steps (two range instances) 1000 ns apart; kernels overlap inside step one.
  b.kernel("a", 100, 50, decode);   // [100,150)
  b.kernel("b", 120, 100, attn);    // [120,220): overlaps a
  b.kernel("c", 300, 100, decode);  // [300,400): gap 80 after b
  b.kernel("a", 1100, 50, decode);  // step two
  b.p.stage_ranges.push_back({decode, 100, 400});
  b.p.stage_ranges.push_back({decode, 1100, 1150});
  b.p.stage_ranges.push_back({attn, 120, 220});
  Aggregate agg = aggregate(b.p, test::builtin_classifier());
  ASSERT_EQ(agg.stages.size(), 3u);

  const StageRow& whole = agg.stages[0];
  EXPECT_EQ(whole.name, kWholeRunStage);
  EXPECT_EQ(*whole.wall_ns, 1050);  // first start 100 to last end 1150
  EXPECT_EQ(*whole.busy_ns, 270);   // [100,220) + [300,400) + [1100,1150)
  EXPECT_EQ(whole.gaps->count, 2u);
  EXPECT_EQ(whole.gaps->largest_ns, 700);
  EXPECT_EQ(whole.launches, 4u);
  EXPECT_EQ(whole.kernel_time_ns, 300);  // kernel time counts overlaps twice, busy does not

  const StageRow& d = agg.stages[1];
  EXPECT_EQ(d.name, "decode");
  EXPECT_EQ(*d.wall_ns, 350);  // the two instances, not the 700 ns between them
  EXPECT_EQ(*d.busy_ns, 270);
  EXPECT_DOUBLE_EQ(*d.busy_fraction(), 270.0 / 350.0);
  EXPECT_EQ(d.gaps->count, 1u);
  EXPECT_EQ(d.gaps->total_ns, 80);

  const StageRow& a = agg.stages[2];
  EXPECT_EQ(a.name, "decode/attn");
  EXPECT_EQ(*a.wall_ns, 100);
  EXPECT_EQ(*a.busy_fraction(), 1.0);
  EXPECT_EQ(a.gaps->count, 0u);
}

TEST(Timeline, WithoutRangesAStageSpansItsKernels) {
  TimelineBuilder b;
  auto s = b.stage({"prefill"});
  b.kernel("k", 0, 10, s);
  b.kernel("k", 30, 10, s);
  Aggregate agg = aggregate(b.p, test::builtin_classifier());
  ASSERT_EQ(agg.stages.size(), 2u);
  EXPECT_EQ(*agg.stages[1].wall_ns, 40);
  EXPECT_EQ(agg.stages[1].gaps->total_ns, 20);
}

TEST(Timeline, NoStartTimesNoFigures) {
  model::Profile p;
  model::Launch l;
  l.name = p.names.intern("k");
  l.duration_ns = 5;
  p.launches.push_back(l);
  Aggregate agg = aggregate(p, test::builtin_classifier());
  EXPECT_TRUE(agg.stages.empty());
}

TEST(Timeline, MemoryOpsAreListedApartFromKernels) {
  TimelineBuilder b;
  b.kernel("k", 0, 10, 0);
  model::Launch copy;
  copy.name = b.p.names.intern("Memcpy HtoD (Pageable -> Device)");
  copy.kind = model::LaunchKind::kMemcpy;
  copy.bytes = 4096;
  copy.start_ns = 20;
  copy.duration_ns = 7;
  b.p.launches.push_back(copy);
  b.p.launches.push_back(copy);
  Aggregate agg = aggregate(b.p, test::builtin_classifier());
  EXPECT_EQ(agg.totals.launches, 1u);
  EXPECT_EQ(*agg.totals.kernel_time_ns, 10);
  ASSERT_EQ(agg.memory_ops.size(), 1u);
  EXPECT_EQ(agg.memory_ops[0].count, 2u);
  EXPECT_EQ(*agg.memory_ops[0].total_ns, 14);
  EXPECT_EQ(*agg.memory_ops[0].bytes, 8192);
  EXPECT_EQ(*agg.stages[0].wall_ns, 10);  // copies do not make the GPU "busy" with kernels
}

}  // namespace
}  // namespace kernlens::analysis

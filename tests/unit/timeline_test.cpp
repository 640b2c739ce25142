#include "kernlens/analysis/timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

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

// Coverage counted cell by cell over [0, 120): each 1-ns cell in an extent is wall, busy when
// an interval covers it; a gap is a run of idle cells inside one extent (extents are merged,
// so two of them never touch).
Coverage coverage_by_cells(const std::vector<Interval>& busy, const std::vector<Interval>& extents) {
  constexpr int kCells = 120;
  auto in = [](const std::vector<Interval>& v, int x) {
    return std::any_of(v.begin(), v.end(), [&](const Interval& i) { return i.begin_ns <= x && x < i.end_ns; });
  };
  Coverage c;
  double run = 0;
  auto end_run = [&] {
    if (run == 0) return;
    ++c.gaps.count;
    c.gaps.total_ns += run;
    c.gaps.largest_ns = std::max(c.gaps.largest_ns, run);
    run = 0;
  };
  for (int x = 0; x < kCells; ++x) {
    if (!in(extents, x)) {
      end_run();
      continue;
    }
    ++c.wall_ns;
    if (in(busy, x)) {
      ++c.busy_ns;
      end_run();
    } else {
      ++run;
    }
  }
  end_run();
  return c;
}

// Random intervals of 1 to 20 ns in [0, 100); `count` of them.
std::vector<Interval> random_intervals(std::mt19937& rng, int count) {
  std::vector<Interval> v;
  for (int i = 0; i < count; ++i) {
    const int begin = static_cast<int>(rng() % 100), length = 1 + static_cast<int>(rng() % 20);
    v.push_back(Interval{begin, begin + length});
  }
  return v;
}

// The sweep, fed the kernels one by one in start order (BusyUnion merges them), against
// extents or inside its own span, agrees with counting cell by cell.
TEST(Intervals, BusyUnionAsKernelsComeAgreesWithCountingCells) {
  std::mt19937 rng(7);
  for (int round = 0; round < 500; ++round) {
    std::vector<Interval> kernels = random_intervals(rng, static_cast<int>(rng() % 12));
    std::vector<Interval> extents = random_intervals(rng, static_cast<int>(rng() % 4));
    merge_intervals(extents);
    std::sort(kernels.begin(), kernels.end(), [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
    BusyUnion inside(&extents), own(nullptr);
    for (const Interval& k : kernels) {
      inside.add(k);
      own.add(k);
    }
    auto expect_same = [&](const Coverage& got, const Coverage& want, const char* what) {
      EXPECT_EQ(got.wall_ns, want.wall_ns) << what << " round " << round;
      EXPECT_EQ(got.busy_ns, want.busy_ns) << what << " round " << round;
      EXPECT_EQ(got.gaps.count, want.gaps.count) << what << " round " << round;
      EXPECT_EQ(got.gaps.total_ns, want.gaps.total_ns) << what << " round " << round;
      EXPECT_EQ(got.gaps.largest_ns, want.gaps.largest_ns) << what << " round " << round;
    };
    expect_same(inside.finish(), coverage_by_cells(kernels, extents), "inside extents");
    std::vector<Interval> span;
    if (!kernels.empty()) {
      std::int64_t end = 0;
      for (const Interval& k : kernels) end = std::max(end, k.end_ns);
      span.push_back(Interval{kernels.front().begin_ns, end});
    }
    expect_same(own.finish(), coverage_by_cells(kernels, span), "own span");
  }
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

// Kernels listed out of start order (streams of one GPU interleaved as a trace lists them)
// give the figures of the same kernels in order.
TEST(Timeline, KernelsOutOfStartOrderGiveTheFiguresOfTheSortedOnes) {
  auto figures = [](bool sorted) {
    TimelineBuilder b;
    auto decode = b.stage({"decode"});
    std::vector<std::pair<std::int64_t, double>> kernels = {{100, 50}, {120, 100}, {300, 100}, {1100, 50}, {90, 5}};
    if (sorted) std::sort(kernels.begin(), kernels.end());
    for (auto [start, ns] : kernels) b.kernel("k", start, ns, decode);
    b.p.stage_ranges.push_back({decode, 80, 400});
    b.p.stage_ranges.push_back({decode, 1100, 1150});
    Aggregate agg = aggregate(b.p, test::builtin_classifier());
    std::vector<double> out;
    for (const auto& row : agg.stages) {
      out.insert(out.end(), {*row.wall_ns, *row.busy_ns, static_cast<double>(row.gaps->count), row.gaps->total_ns, row.gaps->largest_ns});
    }
    return out;
  };
  const std::vector<double> in_order = figures(true);
  // The whole run [90, 1150): busy 5 + 120 + 100 + 50, gaps 5, 80, 700; decode inside its
  // two instances [80, 400) and [1100, 1150): gaps 10, 5, 80.
  EXPECT_EQ(in_order, (std::vector<double>{1060, 275, 3, 785, 700, 370, 275, 3, 95, 80}));
  EXPECT_EQ(figures(false), in_order);
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

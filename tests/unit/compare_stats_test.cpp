// compare_stats: medians, the bootstrap interval of a ratio of medians, split halves and the
// noise floor, on distributions whose truth is known.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernlens/analysis/compare_stats.h"

namespace kernlens {
namespace {

using analysis::BootstrapOptions;
using analysis::Clustered;

// n draws of a normal distribution (the test's own generator; only properties are checked).
std::vector<double> normal(std::mt19937_64& rng, double mean, double sd, int n) {
  std::normal_distribution<double> d(mean, sd);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(d(rng));
  return v;
}

TEST(CompareStats, Median) {
  EXPECT_EQ(analysis::median({}), 0);
  EXPECT_EQ(analysis::median({3, 1, 2}), 2);
  EXPECT_EQ(analysis::median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(analysis::median({7}), 7);
}

TEST(CompareStats, OneSampleASideHasARatioButNoInterval) {
  auto e = analysis::ratio_of_medians({{100}}, {{110}}, {});
  ASSERT_TRUE(e.ratio);
  EXPECT_DOUBLE_EQ(*e.ratio, 1.1);
  EXPECT_FALSE(e.interval);
  EXPECT_FALSE(e.significant());
  EXPECT_FALSE(analysis::ratio_of_medians({{0, 0}}, {{1, 1}}, {}).ratio);  // no ratio to a base of 0
}

TEST(CompareStats, TheSameInputGivesTheSameInterval) {
  std::mt19937_64 rng(1);
  Clustered b{normal(rng, 100, 5, 12)}, c{normal(rng, 104, 5, 12)};
  auto first = analysis::ratio_of_medians(b, c, {});
  auto second = analysis::ratio_of_medians(b, c, {});
  ASSERT_TRUE(first.interval && second.interval);
  EXPECT_EQ(first.interval->low, second.interval->low);
  EXPECT_EQ(first.interval->high, second.interval->high);
  BootstrapOptions other;
  other.seed = 7;
  auto reseeded = analysis::ratio_of_medians(b, c, other);
  EXPECT_NE(reseeded.interval->low, first.interval->low);  // the seed is what fixes it
}

// Over many trials of a true 10% change, the 95% interval holds 1.10 nearly always, and an
// interval of two identical distributions holds 1 nearly always.
TEST(CompareStats, IntervalsHoldTheTruth) {
  std::mt19937_64 rng(42);
  BootstrapOptions o;
  o.resamples = 1000;
  int held_change = 0, held_none = 0, significant_change = 0;
  const int trials = 60;
  for (int t = 0; t < trials; ++t) {
    Clustered b{normal(rng, 100, 3, 15)}, c{normal(rng, 110, 3.3, 15)}, same{normal(rng, 100, 3, 15)};
    auto e = analysis::ratio_of_medians(b, c, o);
    held_change += e.interval->contains(1.10);
    significant_change += e.significant();
    held_none += analysis::ratio_of_medians(b, same, o).interval->contains(1.0);
  }
  EXPECT_GE(held_change, trials * 85 / 100);
  EXPECT_GE(held_none, trials * 85 / 100);
  EXPECT_EQ(significant_change, trials);  // 10% against 3% noise: always found
}

// Samples from different processes vary together: resampling runs widens the interval.
TEST(CompareStats, RunsAreResampledAsRuns) {
  Clustered two_runs{{100, 100.5, 99.5, 100.2}, {110, 110.5, 109.5, 110.2}};
  Clustered one_run{analysis::pooled(two_runs)};
  auto clustered = analysis::ratio_of_medians(two_runs, two_runs, {});
  auto flat = analysis::ratio_of_medians(one_run, one_run, {});
  ASSERT_TRUE(clustered.interval && flat.interval);
  EXPECT_GT(clustered.interval->high - clustered.interval->low, flat.interval->high - flat.interval->low);
}

TEST(CompareStats, HalvesAlternate) {
  auto [a, b] = analysis::split_halves({{1, 2, 3, 4, 5}});
  EXPECT_EQ(a, (Clustered{{1, 3, 5}}));
  EXPECT_EQ(b, (Clustered{{2, 4}}));
  auto [r1, r2] = analysis::split_halves({{1}, {2, 2}, {3}});
  EXPECT_EQ(r1, (Clustered{{1}, {3}}));
  EXPECT_EQ(r2, (Clustered{{2, 2}}));
  auto [none1, none2] = analysis::split_halves({{1}});
  EXPECT_TRUE(none1.empty() && none2.empty());
}

TEST(CompareStats, NoiseFloor) {
  EXPECT_FALSE(analysis::noise_floor_pct({{5}}, {}));
  EXPECT_DOUBLE_EQ(*analysis::noise_floor_pct({{5, 5, 5, 5}}, {}), 0);
  std::mt19937_64 rng(3);
  auto quiet = analysis::noise_floor_pct({normal(rng, 100, 0.5, 20)}, {});
  auto noisy = analysis::noise_floor_pct({normal(rng, 100, 10, 20)}, {});
  ASSERT_TRUE(quiet && noisy);
  EXPECT_LT(*quiet, 2);
  EXPECT_GT(*noisy, *quiet);
}

}  // namespace
}  // namespace kernlens

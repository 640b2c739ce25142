#include "kernlens/common/step_times.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace kernlens {
namespace {

TEST(StepTimes, StepsNestInTheOrderTheyStartAndEachIsTimedWhole) {
  StepTimes times;
  const int answer = times.time("outer", [&] {
    times.time("inner", [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
    return 42;
  });
  times.time("after", [] {});
  EXPECT_EQ(answer, 42);  // what the step returns comes back
  const auto& steps = times.steps();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].name, "outer");
  EXPECT_EQ(steps[0].depth, 0);
  EXPECT_EQ(steps[1].name, "inner");
  EXPECT_EQ(steps[1].depth, 1);
  EXPECT_EQ(steps[2].depth, 0);
  EXPECT_GE(steps[1].wall_ns, 20'000'000);
  EXPECT_GE(steps[0].wall_ns, steps[1].wall_ns);  // the outer step holds the inner one
  const std::string text = times.text();
  EXPECT_NE(text.find("  outer "), std::string::npos) << text;
  EXPECT_NE(text.find("    inner "), std::string::npos) << text;
  EXPECT_NE(text.find(" s   peak "), std::string::npos) << text;
  EXPECT_NE(text.find(" MiB\n"), std::string::npos) << text;
}

TEST(StepTimes, EachStepKeepsThePeakMemorySoFarWhichOnlyRises) {
  StepTimes times;
  std::vector<char> held;
  times.time("small", [] {});
  times.time("large", [&] {
    held.assign(std::size_t{64} << 20, 1);  // 64 MiB written: resident
  });
  const auto& steps = times.steps();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_GT(steps[0].peak_rss_bytes, 0);
  EXPECT_GE(steps[1].peak_rss_bytes, steps[0].peak_rss_bytes);
  EXPECT_GE(steps[1].peak_rss_bytes, std::int64_t{64} << 20);
  EXPECT_EQ(held[12345], 1);
}

TEST(StepTimes, WithoutTimesAStepOnlyRuns) {
  int runs = 0;
  EXPECT_EQ(timed_step(nullptr, "x", [&] { return ++runs; }), 1);
  StepTimes times;
  EXPECT_EQ(timed_step(&times, "x", [&] { return ++runs; }), 2);
  EXPECT_EQ(times.steps().size(), 1u);
}

}  // namespace
}  // namespace kernlens

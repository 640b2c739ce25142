#include "kernlens/common/step_times.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <ctime>
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
  EXPECT_NE(text.find(" s  cpu "), std::string::npos) << text;
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

// The process's CPU time while a step ran: all its threads, not the wall time.
TEST(StepTimes, EachStepKeepsTheProcesssCpuTimeMeanwhile) {
  StepTimes times;
  const auto burn = [](std::int64_t cpu_ns) {  // until this thread has run that long: load-proof
    const auto thread_cpu_ns = [] {
      timespec ts{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
    };
    const std::int64_t start = thread_cpu_ns();
    volatile std::uint64_t x = 0;
    while (thread_cpu_ns() - start < cpu_ns) x = x + 1;
  };
  times.time("asleep", [] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); });
  times.time("two threads busy", [&] {
    std::thread other([&] { burn(60'000'000); });
    burn(60'000'000);
    other.join();
  });
  times.add("beside", 1'000'000);
  const auto& steps = times.steps();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_GE(steps[0].wall_ns, 50'000'000);
  EXPECT_GE(steps[0].cpu_ns, 0);
  EXPECT_LT(steps[0].cpu_ns, 25'000'000);  // a sleeping step costs (almost) no CPU
  // Two threads each 60 ms on a CPU: the step counts both, whether or not they ran at once.
  EXPECT_GE(steps[1].cpu_ns, 120'000'000);
  EXPECT_EQ(steps[2].cpu_ns, -1);  // timed on another thread: no CPU time of its own
  const std::string text = times.text();
  const auto beside = text.find("  beside ");
  ASSERT_NE(beside, std::string::npos) << text;
  EXPECT_EQ(text.find(" cpu ", beside), std::string::npos) << text;  // nothing made up
  EXPECT_NE(text.find(" MiB", beside), std::string::npos) << text;
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

#include "kernlens/common/step_times.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <thread>
#include <vector>

#include "kernlens/common/parallel_chunks.h"

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
// Runs until this thread has had that much CPU: load-proof, unlike a wall-clock loop. Reads the
// thread clock itself, not through thread_cpu_ns, which the tally tests check.
void burn(std::int64_t cpu_ns) {
  const auto own_cpu_ns = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
  };
  const std::int64_t start = own_cpu_ns();
  volatile std::uint64_t x = 0;
  while (own_cpu_ns() - start < cpu_ns) x = x + 1;
}

TEST(StepTimes, EachStepKeepsTheProcesssCpuTimeMeanwhile) {
  StepTimes times;
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

// Two threads charge one tally 40 ms each, one of them 30 ms more to a second tally inside
// its first charge, and a third thread sleeps inside a charge: the first tally holds the 80 ms
// of the first and none of the nested 30 ms, the second those 30, and a sleep costs nothing.
TEST(CpuTally, EachThreadChargesItsOwnCpuToTheInnermostTallyOpen) {
  CpuTally outer, inner, asleep;
  std::thread other([&] {
    CpuTally::Charge charge(&outer);
    burn(40'000'000);
  });
  std::thread sleeper([&] {
    CpuTally::Charge charge(&asleep);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  {
    CpuTally::Charge charge(&outer);
    burn(20'000'000);
    {
      CpuTally::Charge nested(&inner);
      burn(30'000'000);
      CpuTally::Charge nothing(nullptr);  // charges nothing: the time stays with `inner`
      burn(5'000'000);
    }
    burn(20'000'000);
  }
  other.join();
  sleeper.join();
  // A thread's clock runs on between the tallies' two readings: a few ms of slack each way.
  EXPECT_GE(outer.cpu_ns(), 80'000'000);
  EXPECT_LT(outer.cpu_ns(), 95'000'000);
  EXPECT_GE(inner.cpu_ns(), 35'000'000);
  EXPECT_LT(inner.cpu_ns(), 45'000'000);
  EXPECT_LT(asleep.cpu_ns(), 10'000'000);
  EXPECT_GE(asleep.wall_ns(), 50'000'000);  // from its first charge's start to its last's end
  EXPECT_GE(outer.wall_ns(), 75'000'000);   // at least the 75 ms one thread charged in a row
  EXPECT_TRUE(outer.charged());
}

// Work handed to run_parallel by a charged thread is charged to the same tally on every thread
// that takes it: three tasks of 20 ms on three threads are 60 ms; without a charge open, the
// threads charge nothing.
TEST(CpuTally, RunParallelChargesTheThreadsItHandsWorkToWhereTheCallersCpuGoes) {
  CpuTally tally;
  {
    CpuTally::Charge charge(&tally);
    EXPECT_EQ(CpuTally::open_on_this_thread(), &tally);
    run_parallel(3, [](std::size_t) { burn(20'000'000); });
  }
  EXPECT_EQ(CpuTally::open_on_this_thread(), nullptr);
  EXPECT_GE(tally.cpu_ns(), 60'000'000);
  EXPECT_LT(tally.cpu_ns(), 75'000'000);
  const std::int64_t before = tally.cpu_ns();
  run_parallel(3, [](std::size_t) { burn(10'000'000); });
  EXPECT_EQ(tally.cpu_ns(), before);
}

TEST(CpuTally, StepTimesRecordsATallysWallAndCpuAndNothingForOneNeverCharged) {
  CpuTally busy, never;
  {
    CpuTally::Charge charge(&busy);
    burn(10'000'000);
  }
  StepTimes times;
  times.time("step", [&] {
    times.add("busy (beside)", busy);
    times.add("never (beside)", never);
  });
  const auto& steps = times.steps();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[1].name, "busy (beside)");
  EXPECT_EQ(steps[1].depth, 1);
  EXPECT_EQ(steps[1].cpu_ns, busy.cpu_ns());
  EXPECT_EQ(steps[1].wall_ns, busy.wall_ns());
  EXPECT_GE(steps[1].cpu_ns, 10'000'000);
  const std::string text = times.text();
  EXPECT_NE(text.find("busy (beside)"), std::string::npos) << text;
  EXPECT_NE(text.find(" cpu ", text.find("busy (beside)")), std::string::npos) << text;
  EXPECT_EQ(text.find("never"), std::string::npos) << text;
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

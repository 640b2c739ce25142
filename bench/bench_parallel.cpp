// run_parallel's cost of its own, with no work: a call of N tasks on the parked threads it keeps
// (common/parallel_chunks.cpp) against the peer, N - 1 std::threads created and joined as it did
// before. An nsys export of a million kernels makes 21 calls on 16 threads, and a 1 GB read
// and its analysis dozens more.
//
//   build/bench/bench_parallel --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <atomic>
#include <thread>
#include <vector>

#include "kernlens/common/parallel_chunks.h"

namespace {

void BM_RunParallelParkedThreads(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::atomic<std::size_t> ran{0};
  for (auto _ : state) kernlens::run_parallel(n, [&](std::size_t) { ran.fetch_add(1, std::memory_order_relaxed); });
  benchmark::DoNotOptimize(ran.load());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

void BM_ThreadsCreatedAndJoined(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::atomic<std::size_t> ran{0};
  auto work = [&](std::size_t) { ran.fetch_add(1, std::memory_order_relaxed); };
  for (auto _ : state) {
    std::vector<std::thread> threads;
    threads.reserve(n - 1);
    for (std::size_t i = 1; i < n; ++i) threads.emplace_back(work, i);
    work(0);
    for (auto& t : threads) t.join();
  }
  benchmark::DoNotOptimize(ran.load());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

BENCHMARK(BM_RunParallelParkedThreads)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->UseRealTime();
BENCHMARK(BM_ThreadsCreatedAndJoined)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

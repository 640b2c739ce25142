// The run database at scale (issue 8): ingesting 1,000 runs of 400 kernels each into a fresh
// file, one transaction per run as `db ingest` does, and answering the popularity view over
// them. Runs are synthetic records (tests/unit/synthetic_runs.h): reading and analyzing real
// inputs is measured by the reader benchmarks; this measures the store alone.
//
//   build/rel/bench/bench_store [--benchmark_filter=...]   (KERNLENS_BENCH_DIR: where the file goes)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "kernlens/store/database.h"
#include "kernlens/store/query.h"
#include "synthetic_runs.h"

namespace {

namespace fs = std::filesystem;
using namespace kernlens;

constexpr std::size_t kKernelsPerRun = 400;

std::string bench_db(const std::string& name) {
  const char* dir = std::getenv("KERNLENS_BENCH_DIR");
  fs::path path = fs::path(dir ? dir : fs::temp_directory_path().string()) / name;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  return path.string();
}

bool ingest_runs(const std::string& path, std::size_t runs, benchmark::State& state) {
  auto db = store::open_for_writing(path);
  if (!db) {
    state.SkipWithError(db.error().to_string().c_str());
    return false;
  }
  for (std::size_t r = 0; r < runs; ++r) {
    auto record = test::synthetic_run(r, kKernelsPerRun);
    auto outcome = store::ingest_run(*db, record);
    if (!outcome) {
      state.SkipWithError(outcome.error().message.c_str());
      return false;
    }
  }
  return true;
}

void BM_IngestRuns(benchmark::State& state) {
  auto runs = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    std::string path = bench_db("bench_ingest.db");
    state.ResumeTiming();
    if (!ingest_runs(path, runs, state)) return;
  }
  state.counters["runs/s"] = benchmark::Counter(static_cast<double>(runs), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["kernel rows/s"] =
      benchmark::Counter(static_cast<double>(runs * kKernelsPerRun), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_IngestRuns)->Arg(1000)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

// Answers `sql` again and again over `runs` ingested runs; `rows`: the answer's row count.
void query_benchmark(benchmark::State& state, const char* file, std::size_t runs, const std::string& sql,
                     const char* rows_counter) {
  std::string path = bench_db(file);
  if (!ingest_runs(path, runs, state)) return;
  auto db = store::open_for_reading(path);
  if (!db) {
    state.SkipWithError(db.error().to_string().c_str());
    return;
  }
  std::size_t rows = 0;
  for (auto _ : state) {
    auto table = store::run_query(*db, sql);
    if (!table) {
      state.SkipWithError(table.error().message.c_str());
      return;
    }
    rows = table->rows.size();
  }
  state.counters[rows_counter] = static_cast<double>(rows);
}

void BM_PopularityView(benchmark::State& state) {
  query_benchmark(state, "bench_query.db", static_cast<std::size_t>(state.range(0)), "SELECT * FROM v_kernel_popularity",
                  "families");
}
BENCHMARK(BM_PopularityView)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The cross-model views (issue 20) over the same 1,000 runs of 400 kernels: ten times the
// kernel rows of real prefill runs (bench/sweep_ingest.sh measures those, through sweep ingest).
void BM_ScalingView(benchmark::State& state, const char* view) {
  query_benchmark(state, "bench_scaling.db", 1000, std::string("SELECT * FROM ") + view, "rows");
}
BENCHMARK_CAPTURE(BM_ScalingView, op_class, "v_op_class_scaling")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ScalingView, family, "v_family_scaling")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

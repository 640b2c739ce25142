// Throughput of the PyTorch profiler trace reader, in MB/s of uncompressed JSON. Two ways in:
// bytes already in memory (the reader alone: what a .json.gz costs once inflated), and the
// file by path (what `analyze` does with a large plain .json: streamed through a bounded
// window, page cache to parser). Input: $KERNLENS_BENCH_TRACE, else the file
// `ninja bench_big_trace` generates (scripts/bench/make_big_trace.py). Run on one CPU
// (taskset -c 0) for the one-core figure.
#include <benchmark/benchmark.h>

#include "bench_input.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/model/profile.h"

namespace kernlens::bench {
namespace {

const Input& input() {
  static const Input in =
      load_input("KERNLENS_BENCH_TRACE", KERNLENS_BENCH_DEFAULT_TRACE, "run `ninja bench_big_trace`");
  return in;
}

// Arg 0: from memory. Arg 1: from the file.
void BM_ReadPytorchTrace(benchmark::State& state) {
  const Input& in = input();
  if (!usable(state, in)) return;
  const bool from_file = state.range(0) == 1;
  state.SetLabel(from_file ? "file, streamed" : "from memory");
  ingest::ReadOptions options;
  options.all_metrics = false;  // as `analyze` reads
  std::size_t launches = 0;
  for (auto _ : state) {
    model::Profile profile;  // fresh each time; its destruction is timed, as in a CLI run
    if (!read_as(state, in, from_file, options, model::InputFormat::kPytorchTrace, profile)) return;
    launches = profile.launches.size();
    benchmark::DoNotOptimize(launches);
  }
  report_throughput(state, in, launches);
}
BENCHMARK(BM_ReadPytorchTrace)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace kernlens::bench

BENCHMARK_MAIN();

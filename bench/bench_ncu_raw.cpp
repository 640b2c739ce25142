// Throughput of the Nsight Compute raw-page reader, and of the aggregation that follows it.
// The input is loaded into memory once, before timing, so the figures measure parsing, not
// the disk. Input: $KERNLENS_BENCH_RAW_CSV, else the file `ninja bench_big_raw` generates
// (scripts/bench/make_big_raw.py).
#include <benchmark/benchmark.h>

#include <optional>

#include "bench_input.h"
#include "kernlens/analysis/aggregate.h"
#include "kernlens/analysis/analysis.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/ingest/reconcile.h"
#include "kernlens/model/profile.h"
#include "kernlens/names/classify.h"

namespace kernlens::bench {
namespace {

const Input& input() {
  static const Input in =
      load_input("KERNLENS_BENCH_RAW_CSV", KERNLENS_BENCH_DEFAULT_RAW_CSV, "run `ninja bench_big_raw`");
  return in;
}

// Arg 0: every metric column decoded (the library default). Arg 1: only what `analyze`
// reads (each launch's own fields: name, ids, dimensions, duration, registers, stage).
void BM_ReadNcuRaw(benchmark::State& state) {
  const Input& in = input();
  if (!usable(state, in)) return;
  ingest::ReadOptions options;
  options.all_metrics = state.range(0) == 0;
  state.SetLabel(options.all_metrics ? "all metrics" : "analyze: launch fields only");
  std::size_t launches = 0;
  for (auto _ : state) {
    model::Profile profile;  // fresh each time; its destruction is timed, as in a CLI run
    if (!read_as(state, in, false, options, model::InputFormat::kNcuRawCsv, profile)) return;
    launches = profile.launches.size();
    benchmark::DoNotOptimize(launches);
  }
  report_throughput(state, in, launches);
}
BENCHMARK(BM_ReadNcuRaw)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Aggregate(benchmark::State& state) {
  const Input& in = input();
  if (!usable(state, in)) return;
  static const std::optional<model::Profile> profile = [&]() -> std::optional<model::Profile> {
    model::Profile p;
    if (!ingest::read_input_bytes(in.bytes, in.path, p)) return std::nullopt;
    ingest::reconcile_inputs(p);
    return p;
  }();
  if (!profile) {
    state.SkipWithError("the input does not read: see BM_ReadNcuRaw");
    return;
  }
  auto classifier = names::KernelClassifier::load({});
  if (!classifier) {
    state.SkipWithError(classifier.error().to_string().c_str());
    return;
  }
  for (auto _ : state) {
    analysis::Aggregate agg = analysis::aggregate(*profile, *classifier);
    benchmark::DoNotOptimize(agg.kernels.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * profile->launches.size()));
}
BENCHMARK(BM_Aggregate)->Unit(benchmark::kMillisecond)->UseRealTime();

// The whole analysis of `kernlens analyze` on one thread (its per-launch "bottlenecks and
// advice" resolve ~100 figures a launch), on the launch fields and metrics analyze reads.
void BM_Analyze(benchmark::State& state) {
  const Input& in = input();
  if (!usable(state, in)) return;
  static const std::optional<model::Profile> profile = [&]() -> std::optional<model::Profile> {
    model::Profile p;
    ingest::ReadOptions options;
    options.all_metrics = false;
    options.metrics = analysis::analysis_metric_names();
    if (!read_as(state, in, false, options, model::InputFormat::kNcuRawCsv, p)) return std::nullopt;
    ingest::reconcile_inputs(p);
    return p;
  }();
  if (!profile) return;
  auto classifier = names::KernelClassifier::load({});
  if (!classifier) {
    state.SkipWithError(classifier.error().to_string().c_str());
    return;
  }
  set_default_threads(1);
  for (auto _ : state) {
    auto a = analysis::analyze(*profile, *classifier, {});
    if (!a) {
      state.SkipWithError(a.error().to_string().c_str());
      break;
    }
    benchmark::DoNotOptimize(a->kernels.data());
  }
  set_default_threads(0);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * profile->launches.size()));
}
BENCHMARK(BM_Analyze)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace kernlens::bench

BENCHMARK_MAIN();

// Ranking a million kernel launches from an Nsight Systems SQLite export, with NVTX stage
// attribution: reading the file (kernels, launch calls, NVTX ranges, the projection of the
// ranges onto the GPU) and analysis::aggregate (the kernel table and the stage figures).
// Input: $KERNLENS_BENCH_NSYS_SQLITE, else the file `ninja bench_big_nsys` generates
// (scripts/fixtures/make_nsys_fixture.py bench: 1,000,000 launches under generate > prefill|decode >
// layer_NN ranges). The file is read through read_input as `kernlens analyze` reads it; the
// first, untimed pass brings it into the page cache.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/ingest/nsys/sqlite_nvtx.h"
#include "kernlens/ingest/nsys/sqlite_schema.h"
#include "kernlens/ingest/timeline/nvtx_projection.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/model/profile.h"
#include "kernlens/names/classify.h"

namespace kernlens::bench {
namespace {

std::string input_path() {
  const char* env = std::getenv("KERNLENS_BENCH_NSYS_SQLITE");
  return env && *env ? env : KERNLENS_BENCH_DEFAULT_NSYS_SQLITE;
}

// First arg 0: reading only; 1: reading and ranking (what the 2 s target is about). Second
// arg: --threads (the kernel and launch-call tables are read in rowid ranges on that many).
void BM_ReadNsysSqlite(benchmark::State& state) {
  const std::string path = input_path();
  const bool rank = state.range(0) == 1;
  ingest::ReadOptions options;
  options.threads = static_cast<unsigned>(state.range(1));
  state.SetLabel(std::string(rank ? "read + aggregate" : "read") + ", " +
                 std::to_string(options.threads) + " threads");
  auto classifier = names::KernelClassifier::load({});
  if (!classifier) {
    state.SkipWithError(classifier.error().to_string().c_str());
    return;
  }
  std::size_t launches = 0, stages = 0;
  for (auto _ : state) {
    model::Profile profile;  // fresh each time; its destruction is timed, as in a CLI run
    if (Status s = ingest::read_input(path, profile, options); !s) {
      state.SkipWithError((s.error().to_string() + " (set KERNLENS_BENCH_NSYS_SQLITE, or run "
                                                   "`ninja bench_big_nsys`)")
                              .c_str());
      return;
    }
    if (profile.inputs[0].format != model::InputFormat::kNsysSqlite) {
      state.SkipWithError(("not an nsys export: " + std::string(model::format_id(profile.inputs[0].format))).c_str());
      return;
    }
    launches = profile.launches.size();
    if (rank) {
      analysis::Aggregate agg = analysis::aggregate(profile, *classifier);
      stages = agg.stages.size();
      benchmark::DoNotOptimize(agg.kernels.data());
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * launches));
  state.counters["launches"] = static_cast<double>(launches);
  if (rank) state.counters["stage_rows"] = static_cast<double>(stages);
}
BENCHMARK(BM_ReadNsysSqlite)
    ->ArgsProduct({{0, 1}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The NVTX ranges alone (NvtxRanges::read), as the export's reader reads them before the calls'
// ranges can be built: at 16 threads on an 8 M kernels' export, 0.16-0.17 s on one thread while
// the calls wait (BENCHMARKS.md, sixteenth session).
void BM_ReadNvtxRanges(benchmark::State& state) {
  const std::string path = input_path();
  auto db = SqliteDb::open_file(path);
  if (!db) {
    state.SkipWithError(db.error().to_string().c_str());
    return;
  }
  model::Profile profile;
  profile.inputs.push_back(model::InputInfo{path, model::InputFormat::kNsysSqlite, "", {}, {}});
  ingest::ReadContext ctx{path, profile, 0, {}};
  ingest::nsys::Schema schema(*db, ctx);
  ingest::nsys::Strings strings;
  if (Status s = schema.load(); !s || !(s = strings.open(schema))) {
    state.SkipWithError(s.error().to_string().c_str());
    return;
  }
  std::size_t ranges = 0;
  for (auto _ : state) {
    ingest::nsys::NvtxRanges nvtx(schema, strings, std::filesystem::file_size(path));
    if (Status s = nvtx.read(); !s) {
      state.SkipWithError(s.error().to_string().c_str());
      return;
    }
    ranges = nvtx.ranges().size();
    benchmark::DoNotOptimize(nvtx.ranges().data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ranges));
  state.counters["ranges"] = static_cast<double>(ranges);
}
BENCHMARK(BM_ReadNvtxRanges)->Unit(benchmark::kMillisecond)->UseRealTime();

// The projection alone: a million calls under 25,000 nested ranges on one thread.
void BM_ProjectNvtx(benchmark::State& state) {
  std::vector<ingest::ApiCall> calls;
  std::vector<ingest::RangeInstance> ranges;
  std::vector<ingest::KernelSpan> kernels;
  std::int64_t t = 0;
  for (std::uint32_t layer = 0; layer < 25'000; ++layer) {
    ranges.push_back({1, t, t + 40 * 5'000, {"", "layer", model::RangeKind::kPushPop}});
    for (int k = 0; k < 40; ++k, t += 5'000) {
      kernels.push_back({static_cast<std::uint32_t>(calls.size()), t + 6'000, t + 8'000});
      calls.push_back({1, t, t + 4'000});
    }
  }
  ranges.push_back({1, 0, t, {"", "generate", model::RangeKind::kPushPop}});
  for (auto _ : state) {
    model::Profile profile;
    auto stages = ingest::project_nvtx(calls, ranges, kernels, profile);
    benchmark::DoNotOptimize(stages.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * calls.size()));
}
BENCHMARK(BM_ProjectNvtx)->Unit(benchmark::kMillisecond)->UseRealTime();

// The projection's last step alone, StageProjection::finish, on 1, 2 and 16 threads (Arg): the
// stages of an 8 M kernels' export (make_nsys_fixture.py bench), 26,600 generate >
// prefill|decode ranges over 200,000 layer_NN ranges, one call and kernel each; the sets and
// extents are added outside the timing. On the GPU machine this step ran on one thread while 15
// CPUs waited.
void BM_StageProjectionFinish(benchmark::State& state) {
  std::vector<ingest::RangeInstance> ranges;
  std::vector<ingest::ApiCall> calls;
  std::int64_t t = 0;
  for (int generate = 0; generate < 1'563; ++generate) {
    const std::size_t outer = ranges.size();
    ranges.push_back({1, t, 0, {"", "generate", model::RangeKind::kPushPop}});
    for (int step = 0; step < 16; ++step) {
      const std::size_t stage = ranges.size();
      ranges.push_back({1, t, 0, {"", step == 0 ? "prefill" : "decode", model::RangeKind::kPushPop}});
      for (int layer = 0; layer < 8; ++layer, t += 10'000) {
        ranges.push_back({1, t, t + 9'000, {"llm", fmt::format("layer_{:02d}", layer), model::RangeKind::kPushPop}});
        calls.push_back({1, t + 100, t + 200});
      }
      ranges[stage].end_ns = t;
    }
    ranges[outer].end_ns = t++;
  }
  const auto threads = static_cast<unsigned>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    ingest::EnclosingRanges sweep(ranges);
    std::vector<std::uint32_t> set_of_call;
    for (const ingest::ApiCall& c : calls) set_of_call.push_back(*sweep.set_of(c));
    ingest::StageProjection projection(ranges, sweep.take_sets());
    for (std::size_t k = 0; k < calls.size(); ++k) {
      projection.add_call(set_of_call[k], 1, k);
      projection.add_kernel(set_of_call[k], k, calls[k].start_ns + 300, calls[k].start_ns + 900);
    }
    model::Profile profile;
    state.ResumeTiming();
    auto stages = projection.finish(profile, threads);
    benchmark::DoNotOptimize(stages.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * calls.size()));
}
BENCHMARK(BM_StageProjectionFinish)->Arg(1)->Arg(2)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace kernlens::bench

BENCHMARK_MAIN();

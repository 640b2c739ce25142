// `kernlens export --format perfetto`: tracks, names, stage slices, laid-out launches, and the
// trace read back by kernlens's own PyTorch-trace reader. (tests/schema/validate_perfetto_trace.py
// checks the exports of every committed run against the format and reads them back too.)
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "kernlens/analysis/analysis.h"
#include "kernlens/load/load.h"
#include "kernlens/report/perfetto_export.h"
#include "test_util.h"

namespace kernlens::report {
namespace {

using Json = nlohmann::json;

analysis::Analysis analyze(const model::Profile& p) {
  auto a = analysis::analyze(p, test::builtin_classifier(), {});
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().to_string());
  return std::move(a).value();
}

model::Launch kernel(model::Profile& p, const std::string& name, std::optional<std::int64_t> start, double ns,
                     model::StreamId stream = 7) {
  model::Launch l;
  l.name = p.names.intern(name);
  l.start_ns = start;
  l.duration_ns = ns;
  l.stream_id = stream;
  l.device_ordinal = 0;
  return l;
}

std::vector<Json> events(const Json& trace, const std::string& ph, const std::string& cat = "") {
  std::vector<Json> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  }
  return out;
}

model::Profile read_back(const std::string& trace) {
  auto r = test::read_bytes(trace, "trace.json");
  EXPECT_TRUE(r.status.ok()) << (r.status.ok() ? "" : r.status.error().to_string());
  return std::move(r.profile);
}

// PDL lets a kernel start before the last one on its stream ends: slices on one track must
// nest, so it moves to a track of its own, and still reads back on its stream.
TEST(PerfettoExport, OverlappingKernelsOfOneStreamGoToAnExtraTrack) {
  model::Profile p;
  p.launches.push_back(kernel(p, "first", 1000, 500));
  p.launches.push_back(kernel(p, "second", 1400, 500));
  const std::string text = perfetto_trace(p, analyze(p));
  const Json trace = Json::parse(text);
  auto kernels = events(trace, "X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0]["tid"], 7);
  EXPECT_GE(kernels[1]["tid"].get<std::uint64_t>(), 1u << 30);
  EXPECT_EQ(kernels[1]["args"]["stream"], 7);
  bool named = false;
  for (const auto& m : events(trace, "M")) named = named || (m["name"] == "thread_name" && m["tid"] == kernels[1]["tid"]);
  EXPECT_TRUE(named);
  auto back = read_back(text);
  ASSERT_EQ(back.launches.size(), 2u);
  for (const auto& l : back.launches) EXPECT_EQ(l.stream_id, 7);
  EXPECT_EQ(*back.launches[1].start_ns - *back.launches[0].start_ns, 400);
}

// Nsight Compute records no start times: the export lays the launches end to end and says so,
// and reading it back gives them no start time again (no wall time is made up), their stage kept.
TEST(PerfettoExport, LaunchesWithoutStartTimesAreLaidOutAndReadBackTimeless) {
  model::Profile p;
  model::StageKey key;
  key.push_pop.push_back(model::NvtxRange{"", "prefill", model::RangeKind::kPushPop});
  const auto stage = p.intern_stage(key);
  for (int i = 0; i < 3; ++i) {
    p.launches.push_back(kernel(p, "k" + std::to_string(i), std::nullopt, 1000.0 + i));
    p.launches.back().stage = stage;
  }
  const std::string text = perfetto_trace(p, analyze(p));
  const Json trace = Json::parse(text);
  auto kernels = events(trace, "X", "kernel");
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[1]["ts"].get<double>(), 1.0);  // right after the first
  EXPECT_EQ(kernels[1]["args"]["laid out"], true);
  auto stages = events(trace, "X", "gpu_user_annotation");
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(stages[0]["name"], "prefill");
  EXPECT_NE(trace["otherData"]["laid_end_to_end"].get<std::string>().find("3 launches had no start time"), std::string::npos);
  auto back = read_back(text);
  ASSERT_EQ(back.launches.size(), 3u);
  for (const auto& l : back.launches) {
    EXPECT_FALSE(l.start_ns.has_value());
    EXPECT_EQ(model::push_pop_path(back.stages[l.stage]), "prefill");
  }
  EXPECT_TRUE(back.stage_ranges.empty());
}

// Kernel events are named by their base name; the reader takes the kernel's own name back
// from "mangled name" (else "full name").
TEST(PerfettoExport, KernelsAreNamedByBaseNameAndReadBackByTheirOwnName) {
  model::Profile p;
  const std::string mangled = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";
  p.launches.push_back(kernel(p, mangled, 0, 2000));
  auto a = analyze(p);
  const Json trace = Json::parse(perfetto_trace(p, a));
  auto k = events(trace, "X", "kernel").at(0);
  EXPECT_EQ(k["name"], a.agg.families[0].cls.base_name);
  EXPECT_EQ(k["args"]["mangled name"], mangled);
  EXPECT_NE(k["args"]["full name"].get<std::string>().find("vectorized_elementwise_kernel<4"), std::string::npos);
  auto back = read_back(trace.dump());
  EXPECT_EQ(back.names[back.launches.at(0).name], mangled);
}

// NVTX start/end ranges need not nest: async slices of the GPU's process.
TEST(PerfettoExport, StartEndRangesAreAsyncSlices) {
  model::Profile p;
  model::StageKey key;
  key.start_end.push_back(model::NvtxRange{"llm", "step", model::RangeKind::kStartEnd});
  const auto stage = p.intern_stage(key);
  p.launches.push_back(kernel(p, "k", 5000, 1000));
  p.launches.back().stage = stage;
  p.stage_ranges.push_back(model::StageRange{stage, 5000, 6000, 0});
  const Json trace = Json::parse(perfetto_trace(p, analyze(p)));
  auto begins = events(trace, "b"), ends = events(trace, "e");
  ASSERT_EQ(begins.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(begins[0]["name"], "llm@step");
  EXPECT_EQ(begins[0]["id"], ends[0]["id"]);
  EXPECT_EQ(ends[0]["ts"].get<double>() - begins[0]["ts"].get<double>(), 1.0);
}

// Every committed run reads back with the launches, kernels and kernel time `analyze` gives.
TEST(PerfettoExport, EveryCommittedRunReadsBackTheSame) {
  const std::filesystem::path runs = std::filesystem::path(KERNLENS_FIXTURES) / "../../examples/data/runs";
  std::size_t checked = 0;
  for (const auto& dir : std::filesystem::directory_iterator(runs)) {
    auto loaded = load::load({dir.path().string()}, test::builtin_classifier());
    ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
    const model::Profile& p = loaded->profile;
    const auto a = analyze(p);
    const auto back = read_back(perfetto_trace(p, a));
    const auto b = analyze(back);
    EXPECT_EQ(b.agg.totals.launches, a.agg.totals.launches) << dir.path();
    EXPECT_EQ(b.agg.totals.unique_kernels, a.agg.totals.unique_kernels) << dir.path();
    EXPECT_EQ(b.agg.totals.kernel_time_ns, a.agg.totals.kernel_time_ns) << dir.path();
    ++checked;
  }
  EXPECT_GE(checked, 5u);
}

}  // namespace
}  // namespace kernlens::report

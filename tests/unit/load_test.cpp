// The one loading path (load/load.h): a run directory read back (tests/fixtures/profile_run/
// llama_prefill, a real H100 run) as the timeline with the deep metrics joined on, as
// `profile` made its analysis.json; export files reconciled; the readers' warnings returned,
// never printed; the workload from the run's tags.
#include "kernlens/load/load.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "kernlens/load/run_record.h"
#include "kernlens/load/timeline.h"
#include "kernlens/rundir/tags.h"
#include "test_util.h"

namespace kernlens::load {
namespace {

Result<Loaded> load_one(const std::string& path, const LoadOptions& options = {}) {
  return load({path}, test::builtin_classifier(), options);
}

TEST(Load, RealRunDirectoryIsTheTimelineWithDeepMetricsJoined) {
  const std::string dir = test::fixture("profile_run/llama_prefill");
  ASSERT_TRUE(rundir::is_run_directory(dir));
  auto loaded = load_one(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  const model::Profile& p = loaded->profile;
  ASSERT_GE(p.inputs.size(), 3u);
  EXPECT_EQ(p.inputs[0].path, dir);
  EXPECT_EQ(p.inputs[0].format, model::InputFormat::kRunDirectory);
  EXPECT_EQ(p.launches.size(), 684u);  // discovery's launches, not the deep pass's 27 again
  EXPECT_EQ(loaded->analysis.coverage.deep_launches, 27u);  // every deep launch found its timeline launch
  EXPECT_EQ(loaded->analysis.coverage.measured_kernels, 15u);
  EXPECT_NEAR(*loaded->analysis.coverage.measured_kernel_fraction(), 0.921, 0.0005);
  ASSERT_TRUE(loaded->manifest.has_value());
  EXPECT_EQ(loaded->command(), loaded->manifest->command);
  EXPECT_FALSE(loaded->command().empty());
}

TEST(Load, ARunDirectoryStandsAlone) {
  const std::string dir = test::fixture("profile_run/llama_prefill");
  const std::string csv = test::fixture("ncu/qwen_decode_raw.csv");
  for (const auto& inputs : {std::vector<std::string>{dir, csv}, std::vector<std::string>{csv, dir}}) {
    auto mixed = load(inputs, test::builtin_classifier());
    ASSERT_FALSE(mixed.ok());
    EXPECT_NE(mixed.error().message.find("a profile of its own"), std::string::npos) << mixed.error().message;
  }
  auto alone = load_one(csv);
  ASSERT_TRUE(alone.ok());
  EXPECT_FALSE(alone->manifest.has_value());
  EXPECT_TRUE(alone->command().empty());
}

TEST(Load, BrokenRunDirectoriesAreClearErrors) {
  test::TempDir tmp;
  const std::string dir = tmp.file("run");
  std::filesystem::create_directories(dir + "/discovery");
  // No manifest: not a run directory, and ingest says what it expected.
  auto plain = load_one(dir);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.error().message.find("is a directory"), std::string::npos) << plain.error().message;
  std::ofstream(dir + "/manifest.json") << "{\"schema\": \"something else\"}";
  auto foreign = load_one(dir);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("kernlens.manifest/1"), std::string::npos);
  std::ofstream(dir + "/manifest.json") << "{\"schema\": \"kernlens.manifest/1\", \"options\": {\"discovery\": \"ncu\"}}";
  auto failed = load_one(dir);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("without a discovery export (discovery/timeline.sqlite, "
                                        "discovery/timing_raw.csv or discovery/kernlens-*.kltrace)"),
            std::string::npos)
      << failed.error().message;
  std::ofstream(dir + "/manifest.json") << "{\"schema\": ";
  auto damaged = load_one(dir);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.error().message.find("not a kernlens manifest"), std::string::npos);
}

// Pages of one report are merged inside load(), and what the readers warned about comes back
// for the caller to print (the library prints nothing).
TEST(Load, NvtxIncludeMatchesTheStackOfItsOwnDomain) {
  // A real two-H200 tensor-parallel job under the tracer: NCCL's own NVTX domain opened
  // "ncclCommInitRankConfig" on the main thread and the tracer never saw it close, so it is the
  // outermost range of every stage ("NCCL@ncclCommInitRankConfig/prefill/NCCL@ncclAllReduce").
  // NVTX stacks are per domain, as ncu matches them: "prefill/" is the default domain's.
  const std::string trace = test::fixture("multirank/tp_nccl_h200-714.kltrace");
  auto kept = [&](std::vector<std::string> include) {
    model::Profile p;
    Status s = read_discovery({trace}, include, true, p, analysis_read_options());
    EXPECT_TRUE(s) << (s ? "" : s.error().to_string());
    return p;
  };
  const model::Profile all = kept({});
  const model::Profile prefill = kept({"prefill/"});
  ASSERT_GT(prefill.launches.size(), 0u);
  EXPECT_LT(prefill.launches.size(), all.launches.size());
  for (const auto& l : prefill.launches) {
    const auto& stack = prefill.stages[l.stage].push_pop;
    EXPECT_TRUE(std::any_of(stack.begin(), stack.end(), [](const model::NvtxRange& r) {
      return r.domain.empty() && r.name == "prefill";
    }));
  }
  EXPECT_EQ(kept({"prefill"}).launches.size(), prefill.launches.size());
  // The NCCL domain's own stack: every launch is inside its open init range; none is inside a
  // "prefill" of the NCCL domain.
  EXPECT_EQ(kept({"NCCL@ncclCommInitRankConfig/"}).launches.size(), all.launches.size());
  EXPECT_EQ(kept({"NCCL@prefill/"}).launches.size(), 0u);
  // Nesting is within the domain: the all-reduces inside prefill, but not "prefill/ncclAllReduce".
  EXPECT_GT(kept({"NCCL@ncclCommInitRankConfig/ncclAllReduce"}).launches.size(), 0u);
  EXPECT_EQ(kept({"prefill/ncclAllReduce"}).launches.size(), 0u);
}

TEST(Load, ReconcilesAndReturnsTheWarnings) {
  auto loaded = load({test::fixture("ncu/demo_raw_base.csv"), test::fixture("ncu/demo_summary.csv")},
                     test::builtin_classifier());
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  ASSERT_EQ(loaded->profile.inputs.size(), 2u);
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_NE(loaded->warnings[0].message.find("are not counted twice"), std::string::npos) << loaded->warnings[0].message;
  EXPECT_EQ(loaded->warnings[0].file, test::fixture("ncu/demo_summary.csv"));
}

// The committed runs carry their workload as tags (examples/data/README.md): the batch comes
// from there, the options given fill the rest, and a given option wins over a tag.
TEST(Load, WorkloadFromTheRunsTags) {
  LoadOptions options;
  options.workload.model_config = test::fixture("../../examples/workloads/configs/llm_stages_llama.json");
  options.workload.prompt_tokens = 256;
  auto tagged = load_one(test::example_run("llama_prefill"), options);
  ASSERT_TRUE(tagged.ok()) << tagged.error().to_string();
  ASSERT_TRUE(tagged->analysis.whole.analytic_flops.has_value());
  options.workload.batch = 8;
  auto given = load_one(test::example_run("llama_prefill"), options);
  ASSERT_TRUE(given.ok());
  EXPECT_NEAR(*given->analysis.whole.analytic_flops, 2 * *tagged->analysis.whole.analytic_flops,
              1e-9 * *given->analysis.whole.analytic_flops);
  // An export file has no tags: the batch must be given.
  options.workload.batch.reset();
  auto untagged = load_one(test::fixture("ncu/llama_prefill_raw_dynamic.csv"), options);
  ASSERT_FALSE(untagged.ok());
  EXPECT_NE(untagged.error().message.find("--model-config needs --batch"), std::string::npos);
}

// The database's columns come from the manifest's tags, not from the profiled script's flags.
TEST(RunRecord, ColumnsFromTheManifestsTagsThenTheGivenOnes) {
  auto run = load_run_record(test::example_run("llama_prefill_b8"), {}, test::builtin_classifier());
  ASSERT_TRUE(run.ok()) << run.error().to_string();
  EXPECT_EQ(run->meta.model, "llama");
  EXPECT_EQ(run->meta.batch, 8);
  EXPECT_EQ(run->meta.tokens, 256);
  EXPECT_EQ(run->meta.dtype, "bf16");
  EXPECT_EQ(run->meta.source_format, "kernlens-run");
  auto retagged = load_run_record(test::example_run("llama_prefill_b8"), {{"batch", "16"}, {"note", "x"}},
                                  test::builtin_classifier());
  ASSERT_TRUE(retagged.ok());
  EXPECT_EQ(retagged->meta.batch, 16);
  EXPECT_EQ(retagged->meta.run_key, run->meta.run_key);
  auto tags = rundir::parse_tags({"model=llama-8b", "note=a=b"});
  ASSERT_TRUE(tags.ok());
  auto named = load_run_record(test::example_run("qwen_prefill"), *tags, test::builtin_classifier());
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->meta.model, "llama-8b");  // the given tag wins over the manifest's
  EXPECT_EQ(named->meta.batch, 4);           // the manifest's
  auto bad = load_run_record(test::example_run("llama_prefill_b8"), {{"tokens", "many"}}, test::builtin_classifier());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("tokens must be an integer"), std::string::npos);
}

// The columns' table serves both db ingest and sweep plan's early check.
TEST(RunRecord, TagsOfIntegerColumnsMustBeIntegers) {
  EXPECT_TRUE(tag_fits_column("batch", "8"));
  EXPECT_FALSE(tag_fits_column("batch", "eight"));
  EXPECT_FALSE(tag_fits_column("tokens", "1e3"));
  EXPECT_TRUE(tag_fits_column("model", "llama-3"));
  EXPECT_TRUE(tag_fits_column("anything_else", "x"));
}

}  // namespace
}  // namespace kernlens::load

// Group compare (analysis/group_compare.h) on real runs: repetitions found on a timeline,
// intervals, verdicts, the noise floor, normalisation, runs chosen by tags; and the CLI.
//
// tests/fixtures/compare_groups/ holds run directories around a real nsys export whose
// "saxpy" range ran 5 times (one kernel each): saxpy_r5 (unchanged) and saxpy_r5_slow10 (each
// kernel's end moved so that it lasts 10% longer). README.md there says how they were made.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "kernlens/analysis/group_compare.h"
#include "kernlens/analysis/repetitions.h"
#include "kernlens/load/load.h"
#include "kernlens/store/database.h"
#include "kernlens/load/run_record.h"
#include "kernlens/store/run_select.h"
#include "test_util.h"

namespace kernlens {
namespace {

std::string group_dir(const std::string& name) {
  return test::fixture("compare_groups/" + name);
}

std::string example_dir(const std::string& name) {
  return test::fixture("../../examples/data/runs/" + name);
}

model::RunRecord read(const std::string& path) {
  auto r = load::load_run_record(path, {}, test::builtin_classifier());
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? std::move(r).value() : model::RunRecord{};
}

TEST(Repetitions, FoundByTheTopLevelRangeThatRanNTimes) {
  auto run = read(group_dir("saxpy_r5"));
  EXPECT_EQ(run.repeat, 5);
  ASSERT_EQ(run.repetitions.size(), 5u);
  double sum = 0;
  // The export's five kernels, in time order (CUPTI_ACTIVITY_KIND_KERNEL end - start).
  const double durations[] = {17704808, 17733416, 17700808, 17720488, 17713960};
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& rep = run.repetitions[i];
    EXPECT_EQ(rep.launches, 1u);
    EXPECT_EQ(rep.kernel_time_ns, durations[i]);
    ASSERT_EQ(rep.kernels.size(), 1u);
    EXPECT_EQ(rep.kernels[0].name, run.kernels[0].name);
    ASSERT_EQ(rep.stages.size(), 1u);
    EXPECT_EQ(rep.stages[0].name, "saxpy");
    sum += rep.kernel_time_ns;
  }
  EXPECT_EQ(sum, *run.kernel_time_ns);
}

TEST(Repetitions, NoRangeRanThatOftenIsAnError) {
  auto loaded = load::load({group_dir("saxpy_r5")}, test::builtin_classifier());
  ASSERT_TRUE(loaded.ok());
  const model::Profile& timeline = loaded->profile;
  const analysis::Aggregate& agg = loaded->analysis.agg;
  auto three = analysis::split_repetitions(timeline, agg, 3);
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.error().message.find("no top-level NVTX range ran 3 times"), std::string::npos);
  auto one = analysis::split_repetitions(timeline, agg, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->empty());
}

TEST(GroupCompare, ATenPercentSlowerKernelIsASignificantRegression) {
  auto base = read(group_dir("saxpy_r5")), slow = read(group_dir("saxpy_r5_slow10"));
  auto c = analysis::compare_groups({&base}, {&slow}, {});
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_TRUE(c->statistics);
  EXPECT_TRUE(c->repetitions);
  EXPECT_EQ(c->base_samples, 5u);
  EXPECT_EQ(c->verdict, analysis::CompareVerdict::kRegression);
  ASSERT_TRUE(c->total.estimate.interval);
  EXPECT_TRUE(c->total.estimate.interval->contains(1.10));
  EXPECT_FALSE(c->total.estimate.interval->contains(1.0));
  ASSERT_EQ(c->kernels.size(), 1u);
  EXPECT_TRUE(c->kernels[0].regressed);
  // Larger than the threshold but the threshold is above 10%: no regression.
  analysis::GroupCompareOptions loose;
  loose.compare.threshold_pct = 15;
  EXPECT_EQ(analysis::compare_groups({&base}, {&slow}, loose)->verdict, analysis::CompareVerdict::kNoChange);
}

TEST(GroupCompare, AGroupAgainstItselfIsNoChange) {
  auto base = read(group_dir("saxpy_r5"));
  auto c = analysis::compare_groups({&base}, {&base}, {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->verdict, analysis::CompareVerdict::kNoChange);
  EXPECT_TRUE(c->total.estimate.interval->contains(1.0));
  EXPECT_FALSE(c->total.regressed);
}

// Larger than the threshold is not enough with statistics: the interval must exclude 1.
TEST(GroupCompare, ALargeButInsignificantChangeIsNoRegression) {
  auto make = [](std::vector<double> totals) {
    model::RunRecord r;
    r.meta.source_path = "synthetic";
    r.repeat = static_cast<int>(totals.size());
    double sum = 0;
    for (double t : totals) {
      model::RunRepetition rep;
      rep.kernel_time_ns = t;
      rep.launches = 1;
      rep.kernels.push_back({"k", t, 1});
      r.repetitions.push_back(rep);
      sum += t;
    }
    model::RunKernel k;
    k.name = k.base_name = "k";
    k.total_ns = sum;
    k.launches = totals.size();
    r.kernels.push_back(k);
    r.kernel_time_ns = sum;
    return r;
  };
  auto base = make({100, 60, 140, 80, 120}), candidate = make({110, 70, 150, 90, 130});  // +10% median, noisy
  auto c = analysis::compare_groups({&base}, {&candidate}, {});
  ASSERT_TRUE(c.ok());
  EXPECT_GT(*c->total.change_pct(), 5);
  EXPECT_FALSE(c->total.estimate.significant());
  EXPECT_EQ(c->verdict, analysis::CompareVerdict::kNoChange);
  // Its noise floor is far above 5%: the default threshold is refused.
  auto floor = analysis::check_noise_floor(*c);
  ASSERT_FALSE(floor.ok());
  EXPECT_NE(floor.error().message.find("tighter than the noise floor"), std::string::npos);
}

TEST(GroupCompare, ThresholdBelowTheNoiseFloorIsRefused) {
  auto base = read(group_dir("saxpy_r5"));
  analysis::GroupCompareOptions o;
  o.compare.threshold_pct = 0.05;
  auto tight = analysis::compare_groups({&base}, {&base}, o);
  ASSERT_TRUE(tight.ok());
  ASSERT_TRUE(tight->noise_floor_pct());
  EXPECT_GT(*tight->noise_floor_pct(), 0.05);
  EXPECT_FALSE(analysis::check_noise_floor(*tight).ok());
  o.compare.threshold_pct = 1;
  EXPECT_TRUE(analysis::check_noise_floor(*analysis::compare_groups({&base}, {&base}, o)).ok());
}

TEST(GroupCompare, RepeatedAndWholeRunsDoNotMix) {
  auto repeated = read(group_dir("saxpy_r5")), whole = read(example_dir("llama_prefill"));
  auto c = analysis::compare_groups({&repeated}, {&whole}, {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("compare runs made alike"), std::string::npos);
}

TEST(GroupCompare, WholeRunsAreSamplesToo) {
  auto a = read(example_dir("llama_prefill")), b = read(example_dir("llama_prefill_b4"));
  auto c = analysis::compare_groups({&a, &b}, {&b, &a}, {});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->repetitions);
  EXPECT_TRUE(c->statistics);
  EXPECT_EQ(c->base_samples, 2u);
  EXPECT_EQ(c->verdict, analysis::CompareVerdict::kNoChange);
  EXPECT_FALSE(c->families.empty());
  EXPECT_FALSE(c->operations.empty());
}

TEST(Normalize, TokensFromLlmStagesArguments) {
  auto b4 = read(example_dir("llama_prefill_b4"));  // --batch 4, prompt 256 (default), --decode-steps 2
  auto whole = analysis::token_counts(b4, false, {});
  EXPECT_EQ(whole["prefill"], 1024);
  EXPECT_EQ(whole["decode"], 8);
  EXPECT_EQ(whole["warmup"], 1032);  // one warm-up run (the default)
  EXPECT_EQ(analysis::token_counts(b4, false, {{"prefill", 7}})["prefill"], 7);  // --tokens wins
  auto per_token = analysis::normalize_run(b4, analysis::Normalization::kToken, whole);
  ASSERT_TRUE(per_token.ok());
  EXPECT_DOUBLE_EQ(*per_token->kernel_time_ns, *b4.kernel_time_ns / 1024);  // only prefill is in the run
  auto per_launch = analysis::normalize_run(b4, analysis::Normalization::kLaunch, whole);
  EXPECT_DOUBLE_EQ(*per_launch->kernel_time_ns, *b4.kernel_time_ns / static_cast<double>(b4.launches));
  auto no_tokens = analysis::normalize_run(read(group_dir("saxpy_r5")), analysis::Normalization::kToken, {});
  ASSERT_FALSE(no_tokens.ok());
  EXPECT_NE(no_tokens.error().message.find("--tokens"), std::string::npos);
}

TEST(Normalize, ADifferentBatchIsComparedPerToken) {
  auto b4 = read(example_dir("llama_prefill_b4")), b8 = read(example_dir("llama_prefill_b8"));
  EXPECT_EQ(analysis::work_difference(b4, b8), "batch 4 -> 8");
  EXPECT_EQ(analysis::work_difference(b4, b4), "");
  std::string reason;
  EXPECT_EQ(analysis::choose_normalization(b4, b8, std::nullopt, reason), analysis::Normalization::kToken);
  EXPECT_EQ(reason, "the work differs: batch 4 -> 8");
  EXPECT_EQ(analysis::choose_normalization(b4, b4, std::nullopt, reason), analysis::Normalization::kNone);
}

TEST(RunSelect, RunsByTags) {
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("runs.db"));
  ASSERT_TRUE(db.ok());
  for (const char* name : {"llama_prefill", "llama_prefill_b4", "llama_prefill_b8"}) {
    ASSERT_TRUE(store::ingest_run(*db, read(example_dir(name))).ok());
  }
  auto batch4 = store::run_keys_with_tags(*db, {{"model", "llama"}, {"batch", "4"}});
  ASSERT_TRUE(batch4.ok());
  EXPECT_EQ(batch4->size(), 2u);
  auto batch8 = store::run_keys_with_tags(*db, {{"batch", "8"}});
  ASSERT_TRUE(batch8.ok());
  ASSERT_EQ(batch8->size(), 1u);
  EXPECT_EQ(batch8->front().rfind("llama_prefill_b8-", 0), 0u);
  auto none = store::run_keys_with_tags(*db, {{"batch", "16"}});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("batch=16"), std::string::npos);
}

TEST(CliCompareGroups, GroupsNoiseFloorAndFormats) {
  auto slow = run_cli({"compare", group_dir("saxpy_r5"), "--vs", group_dir("saxpy_r5_slow10"), "--format", "json"});
  EXPECT_EQ(slow.exit_code, 1) << slow.err;
  auto j = nlohmann::json::parse(slow.out);
  EXPECT_EQ(j["schema"], "kernlens.compare-groups/1");
  EXPECT_EQ(j["total"]["interval"].size(), 2u);
  EXPECT_TRUE(j["total"]["significant"].get<bool>());

  // --vs takes every run after it, though kernlens's options take one value each elsewhere.
  auto several = run_cli({"compare", group_dir("saxpy_r5"), group_dir("saxpy_r5"), "--vs", group_dir("saxpy_r5"),
                          group_dir("saxpy_r5"), group_dir("saxpy_r5"), "--threshold", "5"});
  EXPECT_EQ(several.exit_code, 0) << several.err;
  EXPECT_NE(several.out.find("base:      2 runs, 10 samples (repetitions)"), std::string::npos) << several.out;
  EXPECT_NE(several.out.find("candidate: 3 runs, 15 samples (repetitions)"), std::string::npos) << several.out;

  auto same = run_cli({"compare", group_dir("saxpy_r5"), "--vs", group_dir("saxpy_r5")});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find("verdict: no significant change"), std::string::npos);

  auto tight = run_cli({"compare", group_dir("saxpy_r5"), "--vs", group_dir("saxpy_r5_slow10"), "--threshold", "0.01"});
  EXPECT_EQ(tight.exit_code, 2);
  EXPECT_NE(tight.err.find("tighter than the noise floor"), std::string::npos);
  EXPECT_TRUE(tight.out.empty());

  auto html = run_cli({"compare", group_dir("saxpy_r5"), "--vs", group_dir("saxpy_r5_slow10"), "--format", "html"});
  EXPECT_EQ(html.exit_code, 1);
  EXPECT_NE(html.out.find("<svg"), std::string::npos);
  EXPECT_NE(html.out.find("[+9.9%, +10.1%]"), std::string::npos);

  auto md = run_cli({"compare", group_dir("saxpy_r5"), "--vs", group_dir("saxpy_r5_slow10"), "--format", "md"});
  EXPECT_EQ(md.out.rfind("### kernlens compare: regression", 0), 0u);
}

TEST(CliCompareGroups, SinglePairsSayNoStatisticsAndNormalise) {
  auto pair = run_cli({"compare", example_dir("llama_prefill_b4"), example_dir("llama_prefill_b8")});
  EXPECT_EQ(pair.exit_code, 0) << pair.err;  // per token, batch 8 is cheaper
  EXPECT_NE(pair.out.find("statistics: none possible"), std::string::npos);
  EXPECT_NE(pair.out.find("figures:    kernel time per token (the work differs: batch 4 -> 8)"), std::string::npos);
  auto raw = run_cli({"compare", example_dir("llama_prefill_b4"), example_dir("llama_prefill_b8"), "--normalize", "none"});
  EXPECT_EQ(raw.exit_code, 1);  // more tokens, more time
  auto bad = run_cli({"compare", example_dir("llama_prefill_b4"), example_dir("llama_prefill_b8"), "--tokens", "prefill"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--tokens prefill: expected"), std::string::npos);
  auto tokens = run_cli({"compare", group_dir("saxpy_r5"), "--vs", group_dir("saxpy_r5"), "--normalize", "token",
                         "--tokens", "saxpy=1000"});
  EXPECT_EQ(tokens.exit_code, 0) << tokens.err;
  EXPECT_NE(tokens.out.find("kernel time per token"), std::string::npos);
  auto no_db = run_cli({"compare", "--base", "batch=4", "--candidate", "batch=8"});
  EXPECT_EQ(no_db.exit_code, 2);
  EXPECT_NE(no_db.err.find("give --db"), std::string::npos);
}

TEST(CliCompareGroups, RunsChosenInTheDatabaseByTags) {
  test::TempDir dir;
  std::string db = dir.file("runs.db");
  ASSERT_EQ(run_cli({"db", "ingest", "--db", db, example_dir("llama_prefill"), example_dir("llama_prefill_b4"),
                     example_dir("llama_prefill_b8")}).exit_code, 0);
  auto r = run_cli({"compare", "--db", db, "--base", "batch=4", "--candidate", "batch=8", "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["base"]["runs"].size(), 2u);
  EXPECT_EQ(j["candidate"]["runs"].size(), 1u);
  EXPECT_EQ(j["normalization"], "token");
  EXPECT_TRUE(j["statistics"].is_null());  // one candidate sample
}

}  // namespace
}  // namespace kernlens

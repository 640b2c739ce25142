// compare keeps the rank dimension (issue 17): multi-rank runs from the real multirank
// fixtures compared rank by rank, ranks on one side only, bad rank lists, and the writers.
#include "kernlens/analysis/rank_compare.h"

#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "kernlens/analysis/compare.h"
#include "kernlens/load/load.h"
#include "kernlens/load/run_record.h"
#include "kernlens/report/compare_report.h"
#include "test_util.h"

namespace kernlens {
namespace {

std::string hta_pair() {
  return test::fixture("multirank/hta_sendrecv_rank-0.json.gz") + "," +
         test::fixture("multirank/hta_sendrecv_rank-1.json.gz");
}

model::RunRecord record(const std::string& spec) {
  auto r = load::load_run_record(spec, {}, test::builtin_classifier());
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? std::move(r).value() : model::RunRecord{};
}

const analysis::RankDelta* find_rank(const analysis::RankComparison& c, std::int64_t rank) {
  for (const auto& d : c.ranks) {
    if (d.rank == rank) return &d;
  }
  return nullptr;
}

TEST(RankCompare, AMultiRankRunKeepsEachRanksFiguresToTheNanosecond) {
  model::RunRecord run = record(hta_pair());
  ASSERT_EQ(run.ranks.size(), 2u);
  EXPECT_EQ(run.meta.run_key.rfind("ranks-", 0), 0u) << run.meta.run_key;
  // Each rank's kernel time is the sum of its input's kernel durations (HTA: rank 0 is input 0).
  auto loaded = load::load({test::fixture("multirank/hta_sendrecv_rank-0.json.gz"),
                            test::fixture("multirank/hta_sendrecv_rank-1.json.gz")},
                           test::builtin_classifier());
  ASSERT_TRUE(loaded.ok());
  std::map<std::uint32_t, double> by_input;
  for (const auto& l : loaded->profile.launches) {
    if (l.kind == model::LaunchKind::kKernel) by_input[l.input] += *l.duration_ns;
  }
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(run.ranks[r].rank, static_cast<std::int64_t>(r));
    EXPECT_EQ(run.ranks[r].kernel_time_ns, by_input[static_cast<std::uint32_t>(r)]);
    const auto& a = loaded->analysis.ranks.ranks[r];
    EXPECT_EQ(run.ranks[r].comm_ns, a.comm.comm_ns);
    EXPECT_EQ(run.ranks[r].exposed_comm_ns, a.comm.exposed_ns());
    EXPECT_GT(run.ranks[r].comm_ns, 0);
  }
}

TEST(RankCompare, TheHtaPairAgainstItselfIsNoChangeRankByRank) {
  model::RunRecord base = record(hta_pair()), candidate = record(hta_pair());
  auto c = analysis::compare_runs(base, candidate, {});
  ASSERT_EQ(c.ranks.ranks.size(), 2u);
  EXPECT_TRUE(c.ranks.notes.empty());
  for (const auto& d : c.ranks.ranks) {
    ASSERT_TRUE(d.base && d.candidate);
    for (const analysis::Delta* delta : {&d.kernel, &d.comm, &d.exposed}) {
      EXPECT_EQ(delta->delta_ns(), 0);
      ASSERT_TRUE(delta->base_ns);
    }
    EXPECT_EQ(*d.kernel.base_ns, d.base->kernel_time_ns);
    for (const auto& s : d.stages) EXPECT_EQ(s.kernel.delta_ns(), 0) << s.name;
  }
  EXPECT_EQ(c.ranks.base_straggler, c.ranks.candidate_straggler);
}

TEST(RankCompare, AChangedRankShowsItsChange) {
  model::RunRecord base = record(hta_pair()), candidate = base;
  ASSERT_EQ(candidate.ranks.size(), 2u);
  candidate.ranks[1].kernel_time_ns += 1'000'000;
  candidate.ranks[1].exposed_comm_ns += 250'000;
  candidate.ranks[1].role = "straggler";
  ASSERT_FALSE(candidate.ranks[0].stages.empty());
  candidate.ranks[0].stages[0].kernel_time_ns *= 2;
  auto c = analysis::compare_runs(base, candidate, {});
  const auto* r1 = find_rank(c.ranks, 1);
  const auto* r0 = find_rank(c.ranks, 0);
  ASSERT_TRUE(r0 && r1);
  EXPECT_EQ(r1->kernel.delta_ns(), 1'000'000);
  EXPECT_DOUBLE_EQ(*r1->kernel.delta_pct(), 1e8 / base.ranks[1].kernel_time_ns);
  EXPECT_EQ(r1->exposed.delta_ns(), 250'000);
  EXPECT_EQ(r1->comm.delta_ns(), 0);
  EXPECT_EQ(r0->kernel.delta_ns(), 0);
  EXPECT_EQ(r0->stages[0].kernel.delta_ns(), base.ranks[0].stages[0].kernel_time_ns);
  EXPECT_EQ(c.ranks.candidate_straggler, 1);

  std::string text = report::compare_text(c, {});
  EXPECT_NE(text.find("candidate rank 1"), std::string::npos) << text;
  auto j = nlohmann::json::parse(report::compare_json(c));
  ASSERT_TRUE(j.contains("ranks"));
  EXPECT_EQ(j["ranks"]["straggler"]["candidate"], 1);
  EXPECT_EQ(j["ranks"]["ranks"][1]["kernel_time"]["delta_ns"], 1'000'000);
  EXPECT_NE(report::compare_markdown(c, {}).find("| 1 | ` kernel time ` |"), std::string::npos);
}

TEST(RankCompare, ARankOnOneSideOnlyIsReportedNotDropped) {
  model::RunRecord base = record(hta_pair()), candidate = base;
  candidate.ranks.pop_back();  // rank 1 gone
  model::RunRank extra = base.ranks[0];
  extra.rank = 5;
  candidate.ranks.push_back(extra);
  auto c = analysis::compare_runs(base, candidate, {});
  ASSERT_EQ(c.ranks.ranks.size(), 3u);
  const auto* gone = find_rank(c.ranks, 1);
  const auto* added = find_rank(c.ranks, 5);
  ASSERT_TRUE(gone && added);
  EXPECT_TRUE(gone->base && !gone->candidate);
  EXPECT_EQ(gone->kernel.base_ns, base.ranks[1].kernel_time_ns);
  EXPECT_FALSE(gone->kernel.candidate_ns);
  EXPECT_TRUE(!added->base && added->candidate);
  EXPECT_EQ(c.ranks.notes, (std::vector<std::string>{"rank 1 is in the base only", "rank 5 is in the candidate only"}));
  std::string text = report::compare_text(c, {});
  EXPECT_NE(text.find("note: rank 5 is in the candidate only"), std::string::npos) << text;
  EXPECT_NE(text.find("absent"), std::string::npos);
}

TEST(RankCompare, ARankListedTwiceIsAClearNoteNotACrash) {
  model::RunRecord base = record(hta_pair()), candidate = base;
  candidate.ranks[1].rank = 0;
  auto c = analysis::compare_runs(base, candidate, {});
  EXPECT_TRUE(c.ranks.ranks.empty());
  ASSERT_EQ(c.ranks.notes.size(), 1u);
  EXPECT_EQ(c.ranks.notes[0], "not compared per rank: the candidate lists rank 0 twice");
  EXPECT_NE(report::compare_text(c, {}).find("the candidate lists rank 0 twice"), std::string::npos);
}

TEST(RankCompare, MultiRankAgainstOneRankIsANote) {
  model::RunRecord base = record(hta_pair());
  model::RunRecord one = record(test::fixture("multirank/hta_nccl_allreduce_rank-0.json.gz"));
  EXPECT_TRUE(one.ranks.empty());
  auto c = analysis::compare_runs(base, one, {});
  EXPECT_TRUE(c.ranks.ranks.empty());
  EXPECT_EQ(c.ranks.notes, (std::vector<std::string>{"not compared per rank: the base has 2 ranks, the candidate one rank"}));
  auto j = nlohmann::json::parse(report::compare_json(c));
  EXPECT_EQ(j["ranks"]["notes"][0], c.ranks.notes[0]);
}

TEST(RankCompare, SingleRankRunsHaveNoRankPart) {
  model::RunRecord a = record(test::fixture("../../examples/data/runs/llama_prefill"));
  model::RunRecord b = record(test::fixture("../../examples/data/runs/qwen_prefill"));
  auto c = analysis::compare_runs(a, b, {});
  EXPECT_TRUE(c.ranks.ranks.empty());
  EXPECT_TRUE(c.ranks.notes.empty());
  EXPECT_EQ(report::compare_text(c, {}).find("ranks ("), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(report::compare_json(c)).contains("ranks"));
}

}  // namespace
}  // namespace kernlens

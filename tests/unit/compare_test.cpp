// compare: matching kernels across runs, deltas, the verdict, and the writers.
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kernlens/analysis/compare.h"
#include "kernlens/report/compare_report.h"
#include "kernlens/load/run_record.h"
#include "test_util.h"

namespace kernlens {
namespace {

using analysis::MatchKind;
using analysis::CompareVerdict;

model::RunKernel kernel(const std::string& name, const std::string& base_name, double total_ns,
                        const std::string& grid = "128,1,1") {
  model::RunKernel k;
  k.name = name;
  k.base_name = base_name;
  k.grid = grid;
  k.block = "256,1,1";
  k.total_ns = total_ns;
  k.launches = 10;
  k.bottleneck = "memory";
  return k;
}

model::RunRecord run(const std::string& key, std::vector<model::RunKernel> kernels) {
  model::RunRecord r;
  r.meta.run_key = key;
  double total = 0;
  for (const auto& k : kernels) total += *k.total_ns;
  r.kernel_time_ns = total;
  r.kernels = std::move(kernels);
  model::RunStage s;
  s.name = "prefill";
  s.kernel_time_ns = total;
  r.stages.push_back(s);
  return r;
}

const analysis::KernelDelta& find(const analysis::Comparison& c, const std::string& name) {
  for (const auto& k : c.kernels) {
    if (k.either().name == name) return k;
  }
  static analysis::KernelDelta none;
  ADD_FAILURE() << "no row for " << name;
  return none;
}

model::RunRecord example(const std::string& name) {
  auto r = load::load_run_record(test::fixture("../../examples/data/runs/" + name), {}, test::builtin_classifier());
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? std::move(r).value() : model::RunRecord{};
}

TEST(Compare, ARunAgainstItselfIsNoChange) {
  auto llama = example("llama_prefill");
  auto c = analysis::compare_runs(llama, llama, {});
  EXPECT_EQ(c.verdict, CompareVerdict::kNoChange);
  ASSERT_EQ(c.kernels.size(), llama.kernels.size());
  for (const auto& k : c.kernels) {
    EXPECT_EQ(k.match, MatchKind::kName);
    EXPECT_EQ(k.delta_ns(), 0);
  }
}

TEST(Compare, SlowerHeavyKernelIsARegression) {
  auto base = run("a", {kernel("gemm_a<1>", "gemm_a", 800e3), kernel("norm<1>", "norm", 200e3)});
  auto slower = run("b", {kernel("gemm_a<1>", "gemm_a", 800e3 * 1.2), kernel("norm<1>", "norm", 200e3)});
  auto c = analysis::compare_runs(base, slower, {});
  EXPECT_EQ(c.verdict, CompareVerdict::kRegression);
  EXPECT_TRUE(find(c, "gemm_a<1>").regressed);
  EXPECT_FALSE(find(c, "norm<1>").regressed);
  EXPECT_NEAR(*c.total.delta_pct(), 16.0, 1e-9);
  EXPECT_EQ(c.kernels.front().either().name, "gemm_a<1>");  // the largest change first

  auto slightly = run("b", {kernel("gemm_a<1>", "gemm_a", 800e3 * 1.03), kernel("norm<1>", "norm", 200e3)});
  EXPECT_EQ(analysis::compare_runs(base, slightly, {}).verdict, CompareVerdict::kNoChange);
  analysis::CompareOptions strict;
  strict.threshold_pct = 2;
  EXPECT_EQ(analysis::compare_runs(base, slightly, strict).verdict, CompareVerdict::kRegression);
  EXPECT_EQ(analysis::compare_runs(slower, base, {}).verdict, CompareVerdict::kImprovement);
}

TEST(Compare, ALightKernelIsNotJudgedAlone) {
  auto base = run("a", {kernel("gemm<1>", "gemm", 1e6), kernel("tiny<1>", "tiny", 1e3)});
  auto cand = run("b", {kernel("gemm<1>", "gemm", 1e6), kernel("tiny<1>", "tiny", 3e3)});
  auto c = analysis::compare_runs(base, cand, {});
  EXPECT_FALSE(find(c, "tiny<1>").regressed);
  EXPECT_EQ(c.verdict, CompareVerdict::kNoChange);
}

TEST(Compare, RenamedKernelsMatchByBaseNameAndShape) {
  auto base = run("a", {kernel("void flash<64, true>(half*)", "flash", 500e3, "32,8,1"),
                        kernel("void flash<128, true>(half*)", "flash", 300e3, "16,8,1"),
                        kernel("old_kernel", "old", 100e3)});
  auto cand = run("b", {kernel("void flash<64, false>(half*)", "flash", 510e3, "32,8,1"),
                        kernel("void flash<128, false>(half*)", "flash", 290e3, "16,8,1"),
                        kernel("brand_new", "brand_new", 100e3)});
  auto c = analysis::compare_runs(base, cand, {});
  const auto& big = find(c, "void flash<64, true>(half*)");
  EXPECT_EQ(big.match, MatchKind::kShape);
  ASSERT_NE(big.candidate, nullptr);
  EXPECT_EQ(big.candidate->name, "void flash<64, false>(half*)");
  EXPECT_EQ(find(c, "void flash<128, true>(half*)").candidate->name, "void flash<128, false>(half*)");
  EXPECT_EQ(find(c, "old_kernel").match, MatchKind::kVanished);
  EXPECT_EQ(find(c, "brand_new").match, MatchKind::kNew);
}

TEST(Compare, ABaseNameWithOneKernelLeftOnEachSideMatches) {
  auto base = run("a", {kernel("gemv<4>", "gemv", 100e3, "64,1,1")});
  auto cand = run("b", {kernel("gemv<8>", "gemv", 150e3, "128,1,1")});  // batch 4 -> 8: new grid
  auto c = analysis::compare_runs(base, cand, {});
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].match, MatchKind::kBaseName);
  EXPECT_TRUE(c.kernels[0].regressed);
}

// cuBLAS changes GEMM kernels with the batch: no kernel row can judge a vanished tile against a
// new one, the operation can.
TEST(Compare, AnOperationWhoseKernelsChangedIsJudgedAsAWhole) {
  auto with_op = [](model::RunKernel k, const std::string& op) {
    k.op_class = op;
    return k;
  };
  auto base = run("a", {with_op(kernel("nvjet_128x64_TNT", "nvjet_128x64_TNT", 1.0e6), "gemm"),
                        with_op(kernel("norm<1>", "norm", 20e6), "normalization")});
  auto cand = run("b", {with_op(kernel("nvjet_128x128_TNT", "nvjet_128x128_TNT", 1.5e6), "gemm"),
                        with_op(kernel("norm<1>", "norm", 20e6), "normalization")});
  auto c = analysis::compare_runs(base, cand, {});
  EXPECT_LT(*c.total.delta_pct(), 5) << "the total alone would not call it";
  EXPECT_EQ(find(c, "nvjet_128x64_TNT").match, MatchKind::kVanished);
  ASSERT_EQ(c.operations.size(), 2u);
  const auto& gemm = c.operations[0];
  EXPECT_EQ(gemm.op_class, "gemm");
  EXPECT_NEAR(*gemm.delta_pct(), 50, 1e-9);
  EXPECT_EQ(gemm.base_kernels, 1);
  EXPECT_EQ(gemm.candidate_kernels, 1);
  EXPECT_TRUE(gemm.kernels_changed);
  EXPECT_TRUE(gemm.regressed);
  EXPECT_FALSE(c.operations[1].regressed);
  EXPECT_EQ(c.verdict, CompareVerdict::kRegression);
  ASSERT_EQ(c.reasons.size(), 1u);
  EXPECT_EQ(c.reasons[0], "op gemm +50.0% (kernels 1 -> 1, some new or vanished)");

  // The same growth on a matched kernel is that kernel's reason, not the operation's.
  auto same_kernel = run("c", {with_op(kernel("nvjet_128x64_TNT", "nvjet_128x64_TNT", 1.5e6), "gemm"),
                               with_op(kernel("norm<1>", "norm", 20e6), "normalization")});
  auto m = analysis::compare_runs(base, same_kernel, {});
  EXPECT_FALSE(m.operations[0].regressed);
  ASSERT_EQ(m.reasons.size(), 1u);
  EXPECT_EQ(m.reasons[0].rfind("nvjet_128x64_TNT", 0), 0u) << m.reasons[0];
}

// Names are the user's text: a '|' in a kernel or stage name must not end the Markdown cell,
// and a backtick must not end its code span (the names were put in backticks as they were).
TEST(Compare, MarkdownTablesKeepNamesWithPipesAndBackticksInTheirCells) {
  auto base = run("a", {kernel("select<a|b>", "select", 1e6), kernel("`quoted`", "quoted", 2e6)});
  auto candidate = run("b", {kernel("select<a|b>", "select", 3e6), kernel("`quoted`", "quoted", 2e6)});
  candidate.stages[0].name = base.stages[0].name = "pre|fill";
  const std::string md = report::compare_markdown(analysis::compare_runs(base, candidate, {}), {});
  EXPECT_NE(md.find("| `select<a\\|b>` |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `` `quoted` `` |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `pre\\|fill` |"), std::string::npos) << md;
  // Every table row has as many cells as its header.
  std::size_t rows = 0;
  std::size_t columns = 0;
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("|")) {
      columns = 0;
      continue;
    }
    std::size_t cells = 0;
    for (std::size_t i = 0; i < line.size(); ++i) cells += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    if (columns == 0) columns = cells;
    EXPECT_EQ(cells, columns) << line;
    ++rows;
  }
  EXPECT_GE(rows, 8u);
}

// The two real H100 runs: qwen's attention projections carry a bias, so cuBLAS runs the
// _bias_ GEMM variants that llama never launched, and llama's unbiased GEMM loses that time.
TEST(Compare, LlamaVersusQwenPrefillOnTheH100) {
  auto llama = example("llama_prefill"), qwen = example("qwen_prefill");
  auto c = analysis::compare_runs(llama, qwen, {});
  double expected_pct = (*qwen.kernel_time_ns - *llama.kernel_time_ns) / *llama.kernel_time_ns * 100;
  EXPECT_NEAR(*c.total.delta_pct(), expected_pct, 1e-9);
  EXPECT_EQ(c.verdict, expected_pct < -5 ? CompareVerdict::kImprovement : expected_pct > 5 ? CompareVerdict::kRegression
                                                                                     : CompareVerdict::kNoChange);
  std::size_t new_bias_gemms = 0;
  for (const auto& k : c.kernels) {
    if (k.match == MatchKind::kNew && k.candidate->op_class == "gemm") {
      EXPECT_NE(k.candidate->name.find("bias"), std::string::npos) << k.candidate->name;
      ++new_bias_gemms;
    }
  }
  EXPECT_GE(new_bias_gemms, 1u);
  ASSERT_EQ(c.stages.size(), 1u);
  EXPECT_EQ(c.stages[0].name, "prefill");

  auto json = nlohmann::json::parse(report::compare_json(c));
  EXPECT_EQ(json["schema"], "kernlens.compare/1");
  EXPECT_EQ(json["kernels"].size(), c.kernels.size());
  std::string md = report::compare_markdown(c, {});
  EXPECT_NE(md.find("| change | base | candidate |"), std::string::npos);
  std::string text = report::compare_text(c, {});
  EXPECT_NE(text.find(std::string("verdict: ") + std::string(analysis::verdict_name(c.verdict))), std::string::npos);
}

}  // namespace
}  // namespace kernlens

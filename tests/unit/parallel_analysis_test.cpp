// The analysis lists each name's launches (analysis.cpp, launches_by_name), works out kernels
// and families (insights_in_parallel) and each
// launch's measured FLOPs (flops.cpp, measure_launches) on several threads, the timeline's
// pass over the kernels beside the aggregate's rows (aggregate.cpp, TimelineSweep) and the
// ranks beside the insights (analysis.cpp): its result, written out whole as analyze's JSON,
// is the one a single thread gives, on fixtures large enough to use every thread asked for
// (the nsys export has stage rows and a timeline, its rows swept in parts on several threads).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernlens/analysis/analysis.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/report/json_report.h"
#include "test_util.h"

namespace kernlens {
namespace {

// The fixtures' launches (one profile: several ranks' traces make a multi-rank profile)
// repeated to at least `launches`, each copy sharing the first's metric samples (a profile of
// thousands of launches without reading megabytes).
model::Profile repeated(const std::vector<std::string>& fixtures, std::size_t launches) {
  model::Profile p;
  for (const auto& fixture : fixtures) EXPECT_TRUE(ingest::read_input(test::fixture(fixture), p).ok());
  const std::size_t n = p.launches.size();
  for (std::size_t c = 1; c * n < launches; ++c) {
    for (std::size_t i = 0; i < n; ++i) p.launches.push_back(p.launches[i]);
  }
  return p;
}

std::string analysis_on(const model::Profile& p, unsigned threads) {
  set_default_threads(threads);
  auto a = analysis::analyze(p, test::builtin_classifier(), {});
  set_default_threads(0);
  EXPECT_TRUE(a.ok());
  return a.ok() ? report::analysis_json(p, *a, {}) : std::string();
}

TEST(ParallelAnalysis, TheSameOnAnyNumberOfThreads) {
  // FLOPs not measured (qwen), measured for some kernels (gpt2) and for all (llama decode);
  // two ranks of tensor parallelism (the ranks' figures).
  const std::vector<std::vector<std::string>> inputs = {
      {"ncu/qwen_decode_raw.csv"}, {"ncu/gpt2_prefill_raw.csv"}, {"ncu/llama_decode_raw.csv"},
      {"nsys/llama_stages.sqlite"},
      {"multirank/tp_nccl_h200_rank-0.json.gz", "multirank/tp_nccl_h200_rank-1.json.gz"}};
  for (const auto& fixtures : inputs) {
    const model::Profile p = repeated(fixtures, 4 * 4096);
    ASSERT_GT(p.launches.size(), 3u * 4096) << fixtures[0];  // enough for several threads
    const std::string one = analysis_on(p, 1);
    ASSERT_NE(one.find("\"kernels\""), std::string::npos);
    if (fixtures.size() > 1) {
      ASSERT_NE(one.find("\"ranks\""), std::string::npos);
    }
    for (unsigned threads : {2u, 3u, 8u}) EXPECT_EQ(analysis_on(p, threads), one) << fixtures[0] << " on " << threads;
  }
}

}  // namespace
}  // namespace kernlens

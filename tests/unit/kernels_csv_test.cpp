// discovery/kernels.csv: ranked rows, running share, quoting that Python's csv module reads back.
#include "kernlens/profile/kernels_csv.h"

#include <gtest/gtest.h>

#include <sstream>

#include "kernlens/common/escape.h"
#include "test_util.h"

namespace kernlens::profile {
namespace {

TEST(KernelsCsv, FieldsAreQuotedOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"), "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT");
  EXPECT_EQ(csv_field("f<128, 4>(int)"), "\"f<128, 4>(int)\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("a\nb"), "\"a\nb\"");
}

TEST(KernelsCsv, RankedWithRunningShareAndTheDeepSelection) {
  auto r = test::read_fixture("pytorch/llama_torch_trace.json.gz");
  ASSERT_TRUE(r.status.ok());
  auto agg = analysis::aggregate(r.profile, test::builtin_classifier());
  const std::string top = r.profile.names[agg.kernels[0].name];
  std::string csv = kernels_csv(r.profile, agg, {top});
  std::istringstream in(csv);
  std::string header, first, line;
  std::getline(in, header);
  std::getline(in, first);
  EXPECT_EQ(header, "rank,total_ns,share,cumulative_share,launches,mean_ns,deep,library,op_class,base_name,name");
  // The real trace's top kernel: 720 launches, 22.1% of 14.65 ms.
  EXPECT_EQ(first.rfind("1,3235", 0), 0u) << first;
  EXPECT_NE(first.find(",720,"), std::string::npos);
  EXPECT_NE(first.find(",yes,cublas,gemm,"), std::string::npos) << first;
  std::size_t rows = 1;
  std::string last;
  while (std::getline(in, line)) {
    ++rows;
    last = line;
    EXPECT_NE(line.find(",no,"), std::string::npos);
  }
  EXPECT_EQ(rows, agg.kernels.size());
  EXPECT_NE(last.find(",1.000000,"), std::string::npos) << last;  // the running share ends at 1
}

}  // namespace
}  // namespace kernlens::profile

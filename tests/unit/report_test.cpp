#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/report/format.h"
#include "kernlens/report/json_report.h"
#include "kernlens/report/text_report.h"
#include "test_util.h"

namespace kernlens::report {
namespace {

TEST(Format, HumanDurations) {
  EXPECT_EQ(human_duration_ns(850), "850 ns");
  EXPECT_EQ(human_duration_ns(5056), "5.056 us");
  EXPECT_EQ(human_duration_ns(244416), "244.4 us");
  EXPECT_EQ(human_duration_ns(1623264), "1.623 ms");
  EXPECT_EQ(human_duration_ns(2.5e9), "2.500 s");
  EXPECT_EQ(human_percent(0.1506), "15.1%");
}

TEST(Format, EllipsizeCountsCodePoints) {
  EXPECT_EQ(ellipsize("abcdef", 0), "abcdef");
  EXPECT_EQ(ellipsize("abcdef", 6), "abcdef");
  EXPECT_EQ(ellipsize("abcdef", 4), "abc\xE2\x80\xA6");
  EXPECT_EQ(ellipsize("\xC3\xA9\xC3\xA9\xC3\xA9", 2), "\xC3\xA9\xE2\x80\xA6");
}

TEST(Format, LaneLabelsAbbreviateTheMiddleAndKeepTheLeaf) {
  EXPECT_EQ(lane_label_lines("prefill", 10), (std::vector<std::string>{"prefill"}));
  EXPECT_EQ(lane_label_lines("step/decode/layer0/attn", 30), (std::vector<std::string>{"step/decode/layer0/attn"}));
  EXPECT_EQ(lane_label_lines("step/decode/layer0/attn", 16), (std::vector<std::string>{"step/\xE2\x80\xA6/attn"}));
  // Two ranges: nothing left out, so no "…"; the leaf moves to its own line.
  EXPECT_EQ(lane_label_lines("prefill/CCCL@cub::DeviceReduce", 20),
            (std::vector<std::string>{"prefill/", "CCCL@cub::", "DeviceReduce"}));
  EXPECT_EQ(lane_label_lines("a_very_long_single_range_name", 10),
            (std::vector<std::string>{"a_very_", "long_", "single_", "range_name"}));
  EXPECT_EQ(display_width("\xC3\xA9t\xC3\xA9"), 3u);
}

TEST(Format, JsonNumbersPrintIntegersWithoutFraction) {
  EXPECT_EQ(json_number(12128.0).dump(), "12128");
  EXPECT_EQ(json_number(0.25).dump(), "0.25");
  EXPECT_EQ(json_number(-3.0).dump(), "-3");
  EXPECT_EQ(json_number(1e300).dump(), "1e+300");
}

TEST(JsonReport, SchemaFieldsAndAbsentValues) {
  auto r = test::read_fixture("ncu/demo_raw_base.csv");
  ASSERT_TRUE(r.status.ok());
  // One launch without a duration: its kernel keeps launches but no time fields.
  model::Launch untimed;
  untimed.name = r.profile.names.intern("untimed_kernel");
  r.profile.launches.push_back(untimed);
  auto a = analysis::analyze(r.profile, test::builtin_classifier(), {});
  ASSERT_TRUE(a.ok());
  auto doc = nlohmann::json::parse(analysis_json(r.profile, *a, JsonOptions{}));
  EXPECT_EQ(doc["schema"], "kernlens.analysis/1");
  EXPECT_EQ(doc["inputs"][0]["format"], "ncu-raw-csv");
  EXPECT_FALSE(doc["inputs"][0].contains("warnings"));
  EXPECT_EQ(doc["device"]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(doc["device"]["cc"], "9.0");
  EXPECT_EQ(doc["device"]["sm_count"], 132);
  EXPECT_EQ(doc["totals"]["kernel_time_ns"], 277760);
  EXPECT_EQ(doc["totals"]["launches"], 19);
  EXPECT_EQ(doc["totals"]["unique_kernels"], 5);
  const auto& last = doc["kernels"].back();
  EXPECT_EQ(last["name"], "untimed_kernel");
  EXPECT_EQ(last["launches"], 1);
  for (auto key : {"total_ns", "mean_ns", "share", "metrics", "coverage"}) EXPECT_FALSE(last.contains(key)) << key;
  EXPECT_EQ(last["bottleneck"], "unknown");
  EXPECT_EQ(last["bottleneck_reason"], "no duration and no throughput measured");
  const auto& first = doc["kernels"][0];
  EXPECT_EQ(first["name"], "scale(int, float, float *)");
  EXPECT_EQ(first["stages"]["step/decode/layer0"], 54816);
  EXPECT_EQ(first["stages"]["io"], 39232);
  EXPECT_EQ(doc["stages"][2]["name"], "step/kernlens_demo@prefill");
  EXPECT_EQ(doc["stages"][2]["depth"], 1);

  auto top = nlohmann::json::parse(analysis_json(r.profile, *a, JsonOptions{2}));
  EXPECT_EQ(top["kernels"].size(), 2u);
}

TEST(JsonReport, InvalidUtf8InANameIsReplacedNotThrown) {
  auto r = test::read_fixture("regressions/json_invalid_utf8_raw.csv");  // found by fuzz_read_any
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  auto a = analysis::analyze(r.profile, test::builtin_classifier(), {});
  ASSERT_TRUE(a.ok());
  std::string json = analysis_json(r.profile, *a, JsonOptions{});
  auto doc = nlohmann::json::parse(json);
  EXPECT_NE(doc["kernels"][0]["name"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(TextReport, HeaderTableAndStages) {
  auto r = test::read_fixture("ncu/demo_raw_base.csv");
  ASSERT_TRUE(r.status.ok());
  auto a = analysis::analyze(r.profile, test::builtin_classifier(), {});
  ASSERT_TRUE(a.ok());
  std::string text = analysis_text(r.profile, *a, TextOptions{2, 20});
  EXPECT_NE(text.find("gpu     NVIDIA H100 80GB HBM3, cc 9.0, 132 SMs"), std::string::npos) << text;
  EXPECT_NE(text.find("kernels 18 launches of 4 kernels, 277.8 us of GPU time"), std::string::npos) << text;
  EXPECT_NE(text.find("Top 2 of 4 kernels by GPU time"), std::string::npos);
  EXPECT_NE(text.find("scale(int, float, f\xE2\x80\xA6"), std::string::npos) << text;
  EXPECT_NE(text.find("(2 more kernels)"), std::string::npos);
  EXPECT_NE(text.find("    kernlens_demo@prefill"), std::string::npos) << text;
}

}  // namespace
}  // namespace kernlens::report

#include "kernlens/ingest/ncu/nvtx.h"

#include <gtest/gtest.h>

namespace kernlens::ingest {
namespace {

using model::NvtxRange;
using model::RangeKind;

NcuNvtxCell parse(std::string_view cell, RangeKind kind) {
  std::string why;
  auto c = parse_ncu_nvtx_cell(cell, kind, why);
  EXPECT_TRUE(c.has_value()) << why;
  return c.value_or(NcuNvtxCell{});
}

TEST(NcuNvtx, PushPopCellFromARealExport) {
  auto c = parse("10249  \"<default domain>:decode:none:none:none:none:none:none\" ", RangeKind::kPushPop);
  EXPECT_EQ(c.thread_id, 10249);
  ASSERT_EQ(c.ranges.size(), 1u);
  EXPECT_EQ(c.ranges[0], (NvtxRange{"", "decode", RangeKind::kPushPop}));
}

TEST(NcuNvtx, NestedRangesAndDomainsInOrder) {
  auto c = parse(
      "649  \"<default domain>:step:none:none:none:none:none:none\"  "
      "\"kernlens_demo:prefill:none:none:none:none:ASCII:prefill\" ",
      RangeKind::kPushPop);
  ASSERT_EQ(c.ranges.size(), 2u);
  EXPECT_EQ(c.ranges[0], (NvtxRange{"", "step", RangeKind::kPushPop}));
  EXPECT_EQ(c.ranges[1], (NvtxRange{"kernlens_demo", "prefill", RangeKind::kPushPop}));
}

TEST(NcuNvtx, StartEndCellLeadsWithTheRangeId) {
  auto c = parse(" \"2:<default domain>:io:none:none:none:none:none:none\" ", RangeKind::kStartEnd);
  EXPECT_EQ(c.thread_id, model::kUnknown);
  ASSERT_EQ(c.ranges.size(), 1u);
  EXPECT_EQ(c.ranges[0], (NvtxRange{"", "io", RangeKind::kStartEnd}));
}

TEST(NcuNvtx, EmptyCellHasNoRanges) {
  EXPECT_TRUE(parse("", RangeKind::kPushPop).ranges.empty());
  EXPECT_TRUE(parse("   ", RangeKind::kStartEnd).ranges.empty());
}

TEST(NcuNvtx, NamesWithColons) {
  auto plain = parse_ncu_nvtx_entry("<default domain>:layer:0:none:none:none:none:none:none", RangeKind::kPushPop);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->name, "layer:0");
  auto messaged = parse_ncu_nvtx_entry("dom:a:b:none:none:none:none:ASCII:a:b", RangeKind::kPushPop);
  ASSERT_TRUE(messaged);
  EXPECT_EQ(messaged->domain, "dom");
  EXPECT_EQ(messaged->name, "a:b");
  auto payload = parse_ncu_nvtx_entry("d:x:UINT64:42:ARGB:0xff00ff00:UNICODE:x", RangeKind::kPushPop);
  ASSERT_TRUE(payload);
  EXPECT_EQ(payload->name, "x");
}

TEST(NcuNvtx, MalformedCells) {
  std::string why;
  EXPECT_FALSE(parse_ncu_nvtx_cell("abc \"d:n:none:none:none:none:none:none\"", RangeKind::kPushPop, why));
  EXPECT_NE(why.find("thread id"), std::string::npos);
  EXPECT_FALSE(parse_ncu_nvtx_cell("1 \"d:n:none:none:none:none:none:none", RangeKind::kPushPop, why));
  EXPECT_NE(why.find("unterminated"), std::string::npos);
  EXPECT_FALSE(parse_ncu_nvtx_cell("1 \"too:few:fields\"", RangeKind::kPushPop, why));
  EXPECT_NE(why.find("too:few:fields"), std::string::npos);
  EXPECT_FALSE(parse_ncu_nvtx_cell("\"x:<default domain>:io:none:none:none:none:none:none\"", RangeKind::kStartEnd, why));
  EXPECT_FALSE(parse_ncu_nvtx_cell("1 \"ok:n:none:none:none:none:none:none\" junk", RangeKind::kPushPop, why));
}

}  // namespace
}  // namespace kernlens::ingest

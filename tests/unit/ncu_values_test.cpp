#include "kernlens/ingest/ncu/values.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kernlens::ingest {
namespace {

double number(std::string_view cell, int pow10 = 0) {
  NcuNumber n = parse_ncu_number(cell, pow10);
  EXPECT_EQ(n.kind, CellKind::kNumber) << cell;
  return n.value;
}

CellKind kind(std::string_view cell) { return parse_ncu_number(cell).kind; }

TEST(NcuNumber, PlainAndGroupedNumbers) {
  EXPECT_EQ(number("0"), 0);
  EXPECT_EQ(number("132"), 132);
  EXPECT_EQ(number("1,024"), 1024);
  EXPECT_EQ(number("2,147,483,647"), 2147483647.0);
  EXPECT_EQ(number("85,017,493,504"), 85017493504.0);
  EXPECT_EQ(number("2,589,629,629.63"), 2589629629.63);
  EXPECT_EQ(number("-0.12"), -0.12);
  EXPECT_EQ(number("+7"), 7);
  EXPECT_EQ(number("  41.91 "), 41.91);
  EXPECT_EQ(number(".5"), 0.5);
}

TEST(NcuNumber, UnitScalingIsExact) {
  // Dynamic units print durations in us with six decimals; scaling must land on whole ns.
  EXPECT_EQ(number("12.128000", 3), 12128.0);
  EXPECT_EQ(number("5.344000", 3), 5344.0);
  EXPECT_EQ(number("7.19", 3), 7190.0);
  EXPECT_EQ(number("0.1", 3), 100.0);
  EXPECT_EQ(number("2.61", 9), 2610000000.0);           // Ghz -> hz
  EXPECT_EQ(number("32.77", 3), 32770.0);               // Kbyte -> byte
  EXPECT_EQ(number("2.614", 3), 2614.0);               // %/Kbyte -> %/byte (ncu's scaling)
  EXPECT_EQ(number("1,980,000", 3), 1980000000.0);      // kHz device clock
  // Every value 0.001 .. 99.999 us with three decimals becomes an exact integer of ns.
  for (int i = 1; i < 100000; i += 7) {
    std::string cell = std::to_string(i / 1000) + "." + std::to_string(1000 + i % 1000).substr(1);
    ASSERT_EQ(number(cell, 3), static_cast<double>(i)) << cell;
  }
}

TEST(NcuNumber, ExponentsAndLongMantissasUseTheSlowPath) {
  EXPECT_EQ(number("1.5e3"), 1500);
  EXPECT_EQ(number("1.5E+3", 3), 1500000);
  EXPECT_EQ(number("2e-3", 3), 2);
  EXPECT_EQ(number("12345678901234567890"), 12345678901234567890.0);
  EXPECT_EQ(number("1,032,850,364,963.50"), 1032850364963.5);
  EXPECT_DOUBLE_EQ(number("0.000000000000000000000001", 24), 1.0);
}

TEST(NcuNumber, InstanceListsKeepTheAggregate) {
  // --print-metric-instances values / details, from real exports.
  EXPECT_EQ(number("2,490,368 (524,288; 393,216; 393,216; 262,144)"), 2490368);
  EXPECT_EQ(number("0 (0)"), 0);
  EXPECT_EQ(number("9.83 (0: 9.83)", 6), 9830000);
  EXPECT_EQ(kind("(0: scale)"), CellKind::kNoValue);
}

TEST(NcuNumber, NoValueTokens) {
  for (auto cell : {"", "  ", "\t", " \t ", "n/a", "N/A", "no data", "nan", "-nan", "inf", "-"}) {
    EXPECT_EQ(kind(cell), CellKind::kNoValue) << cell;
  }
}

TEST(NcuNumber, NotNumbers) {
  for (auto cell : {"abc", "PolicySpread", "1.2.3", "12us", "1,5", "0,5", "1234,567", "1,23,456",
                    "1,", ",1", "--5", "1e", "0x10", "1 2", "."}) {
    EXPECT_EQ(kind(cell), CellKind::kInvalid) << cell;
  }
}

TEST(Dim3, ParsesNcuDimensions) {
  EXPECT_EQ(parse_dim3("(128, 1, 1)"), (model::Dim3{128, 1, 1}));
  EXPECT_EQ(parse_dim3("(2, 63, 1)"), (model::Dim3{2, 63, 1}));
  EXPECT_EQ(parse_dim3("(16384,1,1)"), (model::Dim3{16384, 1, 1}));
  EXPECT_EQ(parse_dim3("256"), (model::Dim3{256, 1, 1}));
  for (auto bad : {"", "()", "(1, 2)", "(1, 2, 3, 4)", "(a, 1, 1)", "(0, 1, 1)", "(1, 1, 1", "1, 2"}) {
    EXPECT_FALSE(parse_dim3(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace kernlens::ingest

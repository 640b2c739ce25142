#include "kernlens/model/units.h"

#include <gtest/gtest.h>

namespace kernlens::model {
namespace {

struct Case {
  const char* unit;
  const char* base;
  int pow10;
};

// Every unit seen in the H100 exports (dynamic and base), plus older ncu spellings.
TEST(Units, ConvertsToBaseUnits) {
  const Case cases[] = {
      {"ns", "ns", 0},          {"us", "ns", 3},           {"usecond", "ns", 3},
      {"msecond", "ns", 6},     {"ms", "ns", 6},           {"second", "ns", 9},
      {"nsecond", "ns", 0},     {"byte", "byte", 0},       {"Kbyte", "byte", 3},
      {"Mbyte", "byte", 6},     {"Gbyte", "byte", 9},      {"hz", "hz", 0},
      {"Ghz", "hz", 9},         {"Mhz", "hz", 6},          {"byte/s", "byte/s", 0},
      {"Gbyte/s", "byte/s", 9}, {"Tbyte/second", "byte/s", 12}, {"byte/second", "byte/s", 0},
      {"Kbyte/block", "byte/block", 3}, {"byte/block", "byte/block", 0},
      {"%/Kbyte", "%/byte", 3},  // ncu scales the number, not the unit {"%/byte", "%/byte", 0}, {"%/register", "%/register", 0},
      {"cycle/nsecond", "cycle/s", 9}, {"cycle/usecond", "cycle/s", 6},
      {"inst/cycle", "inst/cycle", 0}, {"%", "%", 0},    {"register/thread", "register/thread", 0},
      {"SM", "SM", 0},          {"warp", "warp", 0},       {"pass", "pass", 0},
      {"cycle", "cycle", 0},    {"sector", "sector", 0},   {"Msector", "sector", 6},
  };
  for (const auto& c : cases) {
    UnitScale s = to_base_unit(c.unit);
    EXPECT_EQ(s.base_unit, c.base) << c.unit;
    EXPECT_EQ(s.pow10, c.pow10) << c.unit;
    EXPECT_TRUE(s.known) << c.unit;
  }
}

TEST(Units, UnknownUnitsPassThroughUnscaled) {
  UnitScale s = to_base_unit("furlong/fortnight");
  EXPECT_EQ(s.base_unit, "furlong/fortnight");
  EXPECT_EQ(s.pow10, 0);
  EXPECT_FALSE(s.known);
  UnitScale empty = to_base_unit("");
  EXPECT_EQ(empty.base_unit, "");
  EXPECT_TRUE(empty.known);
}

}  // namespace
}  // namespace kernlens::model

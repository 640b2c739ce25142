// The pipeline's model (model/profile.h): a launch kept small (its optional times in the size
// of their values, its launch configuration and ncu rule results held once in the profile),
// and what merging a part read on another thread does with them.
#include "kernlens/model/profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernlens/ingest/part_merge.h"

namespace kernlens::model {
namespace {

TEST(PackedOptional, BehavesAsStdOptionalForEveryValueASourceGives) {
  PackedOptional<std::int64_t> start;
  EXPECT_FALSE(start.has_value());
  EXPECT_FALSE(start);
  EXPECT_EQ(start.value_or(-7), -7);
  EXPECT_TRUE(start == std::nullopt);
  EXPECT_THROW((void)start.value(), std::bad_optional_access);
  start = 0;  // zero is a value, not "none"
  EXPECT_TRUE(start.has_value());
  EXPECT_EQ(*start, 0);
  start = std::int64_t{4480540436238493};
  EXPECT_EQ(start, std::int64_t{4480540436238493});
  EXPECT_EQ(std::optional<std::int64_t>(start), std::optional<std::int64_t>(4480540436238493));
  start = std::optional<std::int64_t>();
  EXPECT_FALSE(start);
  start = -5;
  start.reset();
  EXPECT_FALSE(start);

  PackedOptional<double> duration;
  EXPECT_FALSE(duration);
  EXPECT_EQ(std::optional<double>(duration), std::nullopt);
  duration = 0.0;
  EXPECT_TRUE(duration);
  duration = 3072;
  EXPECT_EQ(*duration, 3072.0);
  *duration *= 2;
  EXPECT_EQ(duration.value(), 6144.0);
  EXPECT_TRUE(duration == PackedOptional<double>(6144.0));
  EXPECT_FALSE(duration == PackedOptional<double>());
  EXPECT_TRUE(PackedOptional<double>() == PackedOptional<double>());
  duration = std::numeric_limits<double>::quiet_NaN();  // no duration a GPU measures
  EXPECT_FALSE(duration);
}

// A launch's id and thread in 4 bytes each: every value from 0 to 2^32 - 2 reads back as it
// was; unknown, negative and wider values read as unknown, never as a wrapped number.
TEST(Id32, HoldsThirtyTwoBitIdsAndNothingWrapped) {
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{727}, std::int64_t{2147483648}, std::int64_t{4294967294}}) {
    EXPECT_TRUE(Id32::fits(v));
    EXPECT_EQ(std::int64_t{Id32(v)}, v);
  }
  for (std::int64_t v : {kUnknown, std::int64_t{-5}, std::int64_t{4294967295}, std::int64_t{1} << 40}) {
    EXPECT_FALSE(Id32::fits(v));
    EXPECT_EQ(std::int64_t{Id32(v)}, kUnknown) << v;
  }
  EXPECT_EQ(std::int64_t{Id32()}, kUnknown);
  Launch l;
  EXPECT_EQ(l.id, kUnknown);
  EXPECT_EQ(l.thread_id, kUnknown);
}

TEST(Profile, LaunchesOfOneConfigurationShareItsOneCopy) {
  Profile p;
  ASSERT_EQ(p.configs.size(), 1u);  // [0]: nothing known
  Launch unknown;
  EXPECT_FALSE(p.config_of(unknown).grid.known());
  EXPECT_EQ(p.config_of(unknown).registers_per_thread, -1);
  EXPECT_EQ(p.config_of(unknown).static_shared_bytes, kUnknown);

  const LaunchConfig gemm{.grid = {132, 1, 1}, .block = {384, 1, 1}, .registers_per_thread = 168,
                          .static_shared_bytes = 0, .dynamic_shared_bytes = 232448};
  const ConfigId a = p.intern_config(gemm);
  LaunchConfig other = gemm;
  other.grid.x = 264;
  const ConfigId b = p.intern_config(other);
  EXPECT_NE(a, 0u);
  EXPECT_NE(a, b);
  EXPECT_EQ(p.intern_config(gemm), a);
  EXPECT_EQ(p.configs.size(), 3u);

  Launch l;
  l.config = a;
  p.edit_config(l, [](LaunchConfig& c) { c.grid.x = 264; });
  EXPECT_EQ(l.config, b);  // the edited configuration is the one already held
  EXPECT_EQ(p.configs.size(), 3u);
}

TEST(Profile, RuleResultsAreHeldPerLaunchThatHasAny) {
  Profile p;
  Launch with, without;
  p.rules_to_add_to(with).push_back(RuleResult{"SpeedOfLight", "SOLBottleneck", "OPT", "text", "", 12.5});
  p.rules_to_add_to(with).push_back(RuleResult{"Occupancy", "AchievedOccupancy", "OPT", "more", "local", {}});
  ASSERT_EQ(p.rules_of(with).size(), 2u);
  EXPECT_EQ(p.rules_of(with)[1].rule, "AchievedOccupancy");
  EXPECT_TRUE(p.rules_of(without).empty());
  EXPECT_EQ(without.rules, 0u);
  // rewrite_text reaches the rule results too.
  p.rewrite_text([](std::string_view s) -> std::optional<std::string> {
    return s == "text" ? std::optional<std::string>("fixed") : std::nullopt;
  });
  EXPECT_EQ(p.rules_of(with)[0].text, "fixed");
}

// A part read on another thread numbers its configurations and rule sets in its own profile:
// merged, every launch keeps its own.
TEST(Profile, AMergedPartKeepsEachLaunchsConfigurationAndRules) {
  Profile into, part;
  into.inputs.emplace_back();
  part.inputs.emplace_back();
  const LaunchConfig first{.grid = {8, 1, 1}, .block = {128, 1, 1}};
  const LaunchConfig second{.grid = {1, 4, 4}, .block = {256, 1, 1}, .registers_per_thread = 32};
  Launch seen_before;
  seen_before.config = into.intern_config(second);
  into.launches.push_back(seen_before);

  for (const LaunchConfig& c : {first, second, first}) {
    Launch l;
    l.name = part.names.intern("k");
    l.config = part.intern_config(c);
    part.launches.push_back(l);
  }
  part.rules_to_add_to(part.launches[1]).push_back(RuleResult{"S", "R", "OPT", "t", "", {}});

  ingest::append_part(into, part, 0);
  ASSERT_EQ(into.launches.size(), 4u);
  EXPECT_EQ(into.config_of(into.launches[1]), first);
  EXPECT_EQ(into.config_of(into.launches[2]), second);
  EXPECT_EQ(into.launches[2].config, into.launches[0].config);  // one copy of `second`
  EXPECT_EQ(into.config_of(into.launches[3]), first);
  EXPECT_TRUE(into.rules_of(into.launches[1]).empty());
  ASSERT_EQ(into.rules_of(into.launches[2]).size(), 1u);
  EXPECT_EQ(into.rules_of(into.launches[2])[0].rule, "R");
  EXPECT_TRUE(into.rules_of(into.launches[3]).empty());
}

}  // namespace
}  // namespace kernlens::model

// The exact ncu argv kernlens runs: discovery, the deep pass for every tier (golden argv,
// pinned here on purpose: a change to them is a change to what users' runs measure), exports,
// NVTX filter expressions and the shell quoting of --dry-run.
#include "kernlens/profile/ncu_command.h"

#include <gtest/gtest.h>

#include "kernlens/common/shell.h"

namespace kernlens::profile {
namespace {

using Argv = std::vector<std::string>;
const Argv kProgram = {"python3", "llm.py", "--model", "llama"};

DeepInvocation one_kernel() {
  return {"demangled", "regex:^nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT$", "", 7, 1, "run/deep/k0"};
}

Argv deep_prefix(std::string_view replay = "kernel", std::string_view clocks = "none") {
  return {"ncu",
          "--target-processes",
          "all",
          "--replay-mode",
          std::string(replay),
          "--clock-control",
          std::string(clocks)};
}

Argv deep_suffix() {
  return {"--kernel-name-base",
          "demangled",
          "--kernel-name",
          "regex:^nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT$",
          "--launch-skip",
          "7",
          "--launch-count",
          "1",
          "-o",
          "run/deep/k0",
          "python3",
          "llm.py",
          "--model",
          "llama"};
}

Argv concat(Argv a, const Argv& b, const Argv& c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

TEST(DeepArgv, GoldenPerTier) {
  NcuSettings s;
  const std::vector<std::pair<Tier, Argv>> golden = {
      {Tier::kQuick, {"--section", "SpeedOfLight"}},
      {Tier::kMemory, {"--section", "SpeedOfLight", "--section", "MemoryWorkloadAnalysis"}},
      {Tier::kOccupancy,
       {"--section", "SpeedOfLight", "--section", "MemoryWorkloadAnalysis", "--section",
        "Occupancy", "--section", "LaunchStats", "--section", "SchedulerStats", "--section",
        "WarpStateStats"}},
      {Tier::kRoofline, {"--section", "SpeedOfLight",
                         "--section", "MemoryWorkloadAnalysis",
                         "--section", "Occupancy",
                         "--section", "LaunchStats",
                         "--section", "SchedulerStats",
                         "--section", "WarpStateStats",
                         "--section", "SpeedOfLight_RooflineChart",
                         "--section", "SpeedOfLight_HierarchicalTensorRooflineChart",
                         "--section", "SpeedOfLight_HierarchicalSingleRooflineChart",
                         "--section", "SpeedOfLight_HierarchicalDoubleRooflineChart"}},
      {Tier::kDetailed, {"--set", "detailed"}},
      {Tier::kFull, {"--set", "full"}},
  };
  for (const auto& [tier, sections] : golden) {
    EXPECT_EQ(deep_argv(s, tier, ReplayMode::kKernel, one_kernel(), kProgram),
              concat(deep_prefix(), sections, deep_suffix()))
        << tier_spec(tier).name;
  }
}

TEST(DeepArgv, ApplicationReplayBaseClocksAndNvtxFilters) {
  NcuSettings s;
  s.clock_control = ClockControl::kBase;
  s.nvtx_include = {"decode/", "kernlens_demo@prefill/"};
  EXPECT_EQ(deep_argv(s, Tier::kQuick, ReplayMode::kApplication, one_kernel(), kProgram),
            concat(deep_prefix("application", "base"),
                   {"--section", "SpeedOfLight", "--nvtx", "--nvtx-include", "decode/",
                    "--nvtx-include", "kernlens_demo@prefill/"},
                   deep_suffix()));
}

// --kernel-id counts each kernel's launches apart: it replaces --kernel-name and --launch-skip,
// and --launch-count (one per kernel) is what --kill waits for.
TEST(DeepArgv, KernelIdReplacesNameAndSkipAndKillEndsTheProgram) {
  NcuSettings s;
  s.kill_after_last = true;
  DeepInvocation d{"mangled", "regex:^(_Z1av|_Z1bv)$", "::regex:^(_Z1av|_Z1bv)$:3", 0, 2, "run/deep/deep_1"};
  EXPECT_EQ(deep_argv(s, Tier::kQuick, ReplayMode::kKernel, d, kProgram),
            concat(deep_prefix(), {"--section", "SpeedOfLight"},
                   {"--kernel-name-base", "mangled", "--kernel-id", "::regex:^(_Z1av|_Z1bv)$:3",
                    "--launch-count", "2", "--kill", "1", "-o", "run/deep/deep_1", "python3",
                    "llm.py", "--model", "llama"}));
}

// An ncu without a tier's section (an older release) gets the others, not a failing run.
TEST(DeepArgv, SectionsTheInstalledNcuLacksAreLeftOut) {
  NcuSettings s;
  s.available_sections = {"SpeedOfLight", "Occupancy"};
  EXPECT_FALSE(section_available(s, "MemoryWorkloadAnalysis"));
  EXPECT_EQ(deep_argv(s, Tier::kMemory, ReplayMode::kKernel, one_kernel(), kProgram),
            concat(deep_prefix(), {"--section", "SpeedOfLight"}, deep_suffix()));
  EXPECT_TRUE(section_available(NcuSettings{}, "Anything"));  // unknown: pass everything
}

TEST(DiscoveryArgv, TimingOnlyIntoAReport) {
  NcuSettings s;
  s.ncu = "/usr/local/cuda/bin/ncu";
  s.nvtx_include = {"prefill/"};
  EXPECT_EQ(discovery_argv(s, "run/discovery/timing", kProgram),
            (Argv{"/usr/local/cuda/bin/ncu", "--target-processes", "all", "--clock-control", "none",
                  "--cache-control", "none", "--metrics", "gpu__time_duration.sum", "--nvtx",
                  "--nvtx-include", "prefill/", "-o", "run/discovery/timing", "python3", "llm.py",
                  "--model", "llama"}));
}

TEST(ExportArgvs, RawInBaseUnitsAndDetailsWithMangledNames) {
  auto argvs = export_argvs("ncu", "run/deep/k0.ncu-rep");
  ASSERT_EQ(argvs.size(), 2u);
  EXPECT_EQ(argvs[0], (Argv{"ncu", "--import", "run/deep/k0.ncu-rep", "--page", "raw", "--csv",
                            "--print-units", "base", "--print-kernel-base", "mangled"}));
  EXPECT_EQ(argvs[1], (Argv{"ncu", "--import", "run/deep/k0.ncu-rep", "--page", "details", "--csv",
                            "--print-kernel-base", "mangled"}));
}

TEST(Tiers, ParseEveryNameAndRejectOthers) {
  for (const auto& spec : tier_table()) {
    auto t = parse_tier(spec.name);
    ASSERT_TRUE(t.ok()) << spec.name;
    EXPECT_EQ(*t, spec.tier);
    // Each tier names a set or sections, never both, never neither.
    EXPECT_NE(spec.set.empty(), spec.sections.empty()) << spec.name;
  }
  EXPECT_EQ(tier_table().size(), 6u);
  EXPECT_FALSE(parse_tier("Quick").ok());
  EXPECT_TRUE(parse_clock_control("base").ok());
  EXPECT_FALSE(parse_clock_control("boost").ok());  // kernlens never asks ncu to lock boost
}

TEST(NvtxFilter, PushPopStartEndAndDomains) {
  const std::vector<std::string> decode = {"decode"};
  const std::vector<std::string> path = {"step", "decode", "layer0"};
  EXPECT_EQ(nvtx_push_pop_filter("", decode), "decode/");  // single range: trailing '/'
  EXPECT_EQ(nvtx_push_pop_filter("", path), "step/decode/layer0");
  EXPECT_EQ(nvtx_push_pop_filter("kernlens_demo", decode), "kernlens_demo@decode/");
  const std::vector<std::string> io = {"io"};
  const std::vector<std::string> two = {"io", "load weights"};
  EXPECT_EQ(nvtx_start_end_filter("", io), "io");  // no delimiter: start/end
  EXPECT_EQ(nvtx_start_end_filter("", two), "io,load weights");
  EXPECT_EQ(nvtx_start_end_filter("Domain B", two), "Domain B@io,load weights");
}

TEST(NvtxFilter, QuantifiersInNamesAreEscaped) {
  const std::vector<std::string> at_slash = {"user@host/step"};
  EXPECT_EQ(nvtx_push_pop_filter("", at_slash), "user\\@host\\/step/");
  const std::vector<std::string> brackets = {"A_range[i]", "x*y+z,w"};
  EXPECT_EQ(nvtx_push_pop_filter("", brackets), "A_range\\[i\\]/x\\*y\\+z\\,w");
  const std::vector<std::string> plain = {"decode"};
  EXPECT_EQ(nvtx_push_pop_filter("my@domain", plain), "my\\@domain@decode/");
  EXPECT_EQ(nvtx_escape("C:\\path"), "C:\\\\path");      // a backslash is doubled
  EXPECT_EQ(nvtx_escape("prefill 512"), "prefill 512");  // whitespace is allowed as is
}

TEST(ShellQuote, OnlyWhereNeeded) {
  EXPECT_EQ(shell_quote("--launch-skip"), "--launch-skip");
  EXPECT_EQ(shell_quote("run/deep/k0"), "run/deep/k0");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("regex:^(a|b)$"), "'regex:^(a|b)$'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("load weights"), "'load weights'");
  const Argv argv = {"ncu", "--kernel-name", "regex:^void f\\(int\\)$", "--nvtx-include",
                     "decode/"};
  EXPECT_EQ(shell_join(argv), "ncu --kernel-name 'regex:^void f\\(int\\)$' --nvtx-include decode/");
}

}  // namespace
}  // namespace kernlens::profile

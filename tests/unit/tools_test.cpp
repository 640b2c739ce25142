#include "kernlens/profile/tools.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test_util.h"

namespace kernlens::profile {
namespace {

std::string fake_tools_text(const std::string& name) {
  return test::fixture_bytes("fake_tools/" + name);
}

TEST(ParseToolVersion, ReadsRealNcuOutput) {
  auto version = parse_tool_version(fake_tools_text("ncu_version.txt"));
  ASSERT_TRUE(version.ok()) << version.error().to_string();
  EXPECT_EQ(version->text, "2025.3.1.0");  // not the build number, not the copyright years
  EXPECT_EQ(version->year, 2025);
  EXPECT_EQ(version->minor, 3);
  EXPECT_EQ(version->patch, 1);
  EXPECT_EQ(version->build, 0);
  EXPECT_TRUE(version->at_least(2025, 3));
  EXPECT_TRUE(version->at_least(2024, 9));
  EXPECT_FALSE(version->at_least(2025, 4));
}

TEST(ParseToolVersion, ReadsRealNsysOutputAndBuildSuffixes) {
  auto version = parse_tool_version(fake_tools_text("nsys_version.txt"));
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->text, "2025.3.1.0");
  // Older nsys releases append a build tag after '-'.
  auto tagged = parse_tool_version("NVIDIA Nsight Systems version 2023.4.4.54-234433681190v0\n");
  ASSERT_TRUE(tagged.ok());
  EXPECT_EQ(tagged->text, "2023.4.4.54");
  EXPECT_EQ(tagged->build, 54);
  auto short_form = parse_tool_version("Version 2024.1\n");
  ASSERT_TRUE(short_form.ok());
  EXPECT_EQ(short_form->minor, 1);
  EXPECT_EQ(short_form->patch, 0);
}

TEST(ParseToolVersion, RejectsTextWithoutAVersion) {
  auto version = parse_tool_version("==ERROR== the profiler could not start\n");
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.error().message.find("could not start"), std::string::npos);
  EXPECT_FALSE(parse_tool_version("").ok());
}

TEST(ParseNcuSections, ReadsTheRealTable) {
  auto sections = parse_ncu_sections(fake_tools_text("ncu_list_sections.txt"));
  ASSERT_TRUE(sections.ok()) << sections.error().to_string();
  ASSERT_EQ(sections->size(), 24u);
  EXPECT_EQ(sections->front().identifier, "C2CLink");
  EXPECT_EQ(sections->back().identifier, "WorkloadDistribution");
  EXPECT_EQ(sections->back().display_name, "GPU and Memory Workload Distribution");
  EXPECT_TRUE(sections->back().enabled);

  auto find = [&](const std::string& id) {
    return std::find_if(sections->begin(), sections->end(),
                        [&](const NcuSection& s) { return s.identifier == id; });
  };
  // The widest display name fills its column to the last character before "Enabled".
  auto tensor = find("SpeedOfLight_HierarchicalTensorRooflineChart");
  ASSERT_NE(tensor, sections->end());
  EXPECT_EQ(tensor->display_name, "GPU Speed Of Light Hierarchical Roofline Chart (Tensor Core)");
  EXPECT_FALSE(tensor->enabled);
  auto dbl = find("SpeedOfLight_HierarchicalDoubleRooflineChart");
  ASSERT_NE(dbl, sections->end());
  EXPECT_EQ(dbl->display_name, "GPU Speed Of Light Hierarchical Roofline Chart (Double Precision)");
  auto sol = find("SpeedOfLight");
  ASSERT_NE(sol, sections->end());
  EXPECT_TRUE(sol->enabled);
  EXPECT_EQ(sol->filename, "... Compute/2025.3.1/Sections/SpeedOfLight.section");
  auto warp = find("PmSampling_WarpStates");
  ASSERT_NE(warp, sections->end());
  EXPECT_EQ(warp->display_name, "PM Sampling: Warp States");

  int enabled = static_cast<int>(std::count_if(sections->begin(), sections->end(),
                                               [](const NcuSection& s) { return s.enabled; }));
  EXPECT_EQ(enabled, 4);  // LaunchStats, Occupancy, SpeedOfLight, WorkloadDistribution
}

TEST(ParseNcuSections, RejectsOtherText) {
  auto no_header = parse_ncu_sections("==ERROR== unknown option '--list-sections'\n");
  ASSERT_FALSE(no_header.ok());
  EXPECT_NE(no_header.error().message.find("Identifier"), std::string::npos);
  auto no_rows = parse_ncu_sections(
      "---------- ------------ ------- --------\n"
      "Identifier Display Name Enabled Filename\n"
      "---------- ------------ ------- --------\n");
  EXPECT_FALSE(no_rows.ok());
}

TEST(ParseNcuMetricNames, ReadsTheRealQueryOutput) {
  auto names = parse_ncu_metric_names(fake_tools_text("ncu_query_metrics_trimmed.txt"));
  ASSERT_TRUE(names.ok()) << names.error().to_string();
  EXPECT_TRUE(std::is_sorted(names->begin(), names->end()));
  for (const char* expected :
       {"dram__bytes", "dram__bytes_read", "gpu__time_duration", "sm__throughput",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on"}) {
    EXPECT_TRUE(std::binary_search(names->begin(), names->end(), std::string(expected)))
        << expected;
  }
  for (const std::string& name : *names) {
    // Neither wrapped description lines, header words, nor the ==PROF== note become names.
    EXPECT_NE(name.find("__"), std::string::npos) << name;
    EXPECT_EQ(name.find('.'), std::string::npos) << name;
  }
  EXPECT_EQ(names->size(), 9u);
}

TEST(ParseNcuMetricNames, RejectsOtherText) {
  EXPECT_FALSE(parse_ncu_metric_names("==ERROR== No supported devices found.\n").ok());
}

TEST(UnknownMetrics, ChecksBaseNamesWithRollupsAndSuffixes) {
  EXPECT_EQ(metric_base_name("dram__bytes_read.sum.per_second"), "dram__bytes_read");
  EXPECT_EQ(metric_base_name("gpu__time_duration"), "gpu__time_duration");
  std::vector<std::string> known = {"dram__bytes", "gpu__time_duration", "sm__throughput"};
  std::vector<std::string> requested = {
      "gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__pipe_tensor_op_hmma_cycles_active.avg", "dram__bytes.sum", "dram__bytes_read.sum"};
  EXPECT_EQ(unknown_metrics(requested, known),
            (std::vector<std::string>{"sm__pipe_tensor_op_hmma_cycles_active.avg",
                                      "dram__bytes_read.sum"}));
}

TEST(LocateTool, FindsToolsOnPathFirst) {
  std::string bin = test::fixture("fake_tools/bin");
  ToolSearchOptions options;
  options.path_env = "/nonexistent:" + bin;
  auto ncu = locate_tool(ProfilerTool::kNcu, options);
  ASSERT_TRUE(ncu.ok()) << ncu.error().to_string();
  EXPECT_EQ(*ncu, bin + "/ncu");
  auto nsys = locate_tool(ProfilerTool::kNsys, options);
  ASSERT_TRUE(nsys.ok());
  EXPECT_EQ(*nsys, bin + "/nsys");
}

TEST(LocateTool, ListsTheSystemDirsInOrder) {
  ToolSearchOptions options;
  options.path_env = "/a:/b";
  auto ncu = tool_candidates(ProfilerTool::kNcu, options);
  ASSERT_GE(ncu.size(), 3u);
  EXPECT_EQ(ncu[0], "/a/ncu");
  EXPECT_EQ(ncu[1], "/b/ncu");
  EXPECT_EQ(ncu[2], "/usr/local/cuda/bin/ncu");
  options.search_system_dirs = false;
  EXPECT_EQ(tool_candidates(ProfilerTool::kNsys, options),
            (std::vector<std::string>{"/a/nsys", "/b/nsys"}));
}

TEST(LocateTool, ExplicitPathIsTheOnlyCandidate) {
  ToolSearchOptions options;
  options.explicit_path = "/nonexistent/ncu";
  options.path_env = test::fixture("fake_tools/bin");  // would match, but was not asked for
  auto ncu = locate_tool(ProfilerTool::kNcu, options);
  ASSERT_FALSE(ncu.ok());
  EXPECT_NE(ncu.error().message.find("/nonexistent/ncu"), std::string::npos);
}

TEST(LocateTool, NotFoundSaysWhereItLooked) {
  ToolSearchOptions options;
  options.path_env = "/nonexistent-a";
  options.search_system_dirs = false;
  auto ncu = locate_tool(ProfilerTool::kNcu, options);
  ASSERT_FALSE(ncu.ok());
  EXPECT_EQ(ncu.error().message, "ncu not found (looked in: /nonexistent-a)");
}

TEST(ProbeTool, RunsTheFakeProfilers) {
  std::string bin = test::fixture("fake_tools/bin");
  auto ncu = probe_tool(bin + "/ncu");
  ASSERT_TRUE(ncu.ok()) << ncu.error().to_string();
  EXPECT_EQ(ncu->version.text, "2025.3.1.0");
  EXPECT_EQ(ncu->path, bin + "/ncu");
  EXPECT_NE(ncu->version_output.find("Nsight Compute Command Line Profiler"), std::string::npos);
  auto nsys = probe_tool(bin + "/nsys");
  ASSERT_TRUE(nsys.ok());
  EXPECT_EQ(nsys->version.year, 2025);

  auto ncu_probe = start_ncu_probe(bin + "/ncu");
  auto facts = finish_ncu_probe(ncu_probe);
  ASSERT_TRUE(facts.info.ok());
  EXPECT_EQ(facts.info->version.text, "2025.3.1.0");
  auto& sections = facts.sections;
  ASSERT_TRUE(sections.ok());
  EXPECT_EQ(sections->size(), 24u);
  auto metrics = query_ncu_metrics(bin + "/ncu");
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->size(), 9u);
  // nsys does not know --list-sections: a failed run is an Error naming the command.
  auto nsys_probe = start_ncu_probe(bin + "/nsys");
  auto not_ncu = finish_ncu_probe(nsys_probe).sections;
  ASSERT_FALSE(not_ncu.ok());
  EXPECT_NE(not_ncu.error().message.find("--list-sections' failed: exit code 1"),
            std::string::npos);
}

TEST(ProbeTool, MissingToolIsAnError) {
  auto missing = probe_tool("/nonexistent/ncu");
  ASSERT_FALSE(missing.ok());
}

}  // namespace
}  // namespace kernlens::profile

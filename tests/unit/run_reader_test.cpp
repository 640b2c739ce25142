// Reading a run directory back (tests/fixtures/profile_run/llama_prefill, a real H100 run):
// the timeline with the deep metrics joined on, as `profile` made its analysis.json.
#include "kernlens/profile/run_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kernlens/analysis/analysis.h"
#include "test_util.h"

namespace kernlens::profile {
namespace {

TEST(RunReader, RealRunDirectoryIsTheTimelineWithDeepMetricsJoined) {
  const std::string dir = test::fixture("profile_run/llama_prefill");
  ASSERT_TRUE(is_run_directory(dir));
  model::Profile p;
  ASSERT_TRUE(read_profile_input(dir, p, analysis_read_options()).ok());
  ASSERT_GE(p.inputs.size(), 3u);
  EXPECT_EQ(p.inputs[0].path, dir);
  EXPECT_EQ(p.inputs[0].format, kRunDirectoryFormat);
  EXPECT_EQ(p.launches.size(), 684u);  // discovery's launches, not the deep pass's 27 again
  auto result = analysis::analyze(p, test::builtin_classifier(), {});
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  EXPECT_EQ(result->coverage.deep_launches, 27u);  // every deep launch found its timeline launch
  EXPECT_EQ(result->coverage.measured_kernels, 15u);
  EXPECT_NEAR(*result->coverage.measured_kernel_fraction(), 0.921, 0.0005);
}

TEST(RunReader, ARunDirectoryStandsAlone) {
  const std::string dir = test::fixture("profile_run/llama_prefill");
  model::Profile p;
  ASSERT_TRUE(read_profile_input(dir, p, analysis_read_options()).ok());
  auto again = read_profile_input(test::fixture("ncu/qwen_decode_raw.csv"), p, analysis_read_options());
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("a profile of its own"), std::string::npos);
  model::Profile q;
  ASSERT_TRUE(read_profile_input(test::fixture("ncu/qwen_decode_raw.csv"), q, analysis_read_options()).ok());
  EXPECT_FALSE(read_profile_input(dir, q, analysis_read_options()).ok());
}

TEST(RunReader, BrokenRunDirectoriesAreClearErrors) {
  test::TempDir tmp;
  const std::string dir = tmp.file("run");
  std::filesystem::create_directories(dir + "/discovery");
  model::Profile p;
  // No manifest: not a run directory, and ingest says what it expected.
  auto plain = read_profile_input(dir, p, analysis_read_options());
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.error().message.find("is a directory"), std::string::npos) << plain.error().message;
  std::ofstream(dir + "/manifest.json") << "{\"schema\": \"something else\"}";
  auto foreign = read_profile_input(dir, p, analysis_read_options());
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("kernlens.manifest/1"), std::string::npos);
  std::ofstream(dir + "/manifest.json") << "{\"schema\": \"kernlens.manifest/1\", \"options\": {\"discovery\": \"ncu\"}}";
  auto failed = read_profile_input(dir, p, analysis_read_options());
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("without a discovery export"), std::string::npos);
  std::ofstream(dir + "/manifest.json") << "{\"schema\": ";
  EXPECT_FALSE(read_profile_input(dir, p, analysis_read_options()).ok());
}

}  // namespace
}  // namespace kernlens::profile

// The run directory and its manifest: ids, layout, no overwriting, the recorded environment.
#include "kernlens/profile/run_dir.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_util.h"

namespace kernlens::profile {
namespace {

std::chrono::system_clock::time_point at_utc(std::int64_t seconds) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

TEST(RunDir, IdIsUtcTimeThenTheProgramName) {
  // 2026-11-22 18:15:03 UTC.
  EXPECT_EQ(make_run_id(at_utc(1795371303), "/usr/bin/python3"), "20261122-181503-python3");
  EXPECT_EQ(make_run_id(at_utc(1795371303), "./my app;rm -rf"), "20261122-181503-my_app_rm_-rf");
  EXPECT_EQ(make_run_id(at_utc(0), ""), "19700101-000000-run");
  EXPECT_EQ(make_run_id(at_utc(0), "dir/.."), "19700101-000000-run");
}

TEST(RunDir, CreatesTheLayoutAndNeverOverwrites) {
  test::TempDir tmp;
  auto dir = create_run_dir(tmp.path() / "runs", "r1");
  ASSERT_TRUE(dir.ok()) << dir.error().to_string();
  EXPECT_TRUE(std::filesystem::is_directory(tmp.path() / "runs/r1/discovery"));
  EXPECT_TRUE(std::filesystem::is_directory(tmp.path() / "runs/r1/deep"));
  EXPECT_EQ(dir->manifest(), tmp.path() / "runs/r1/manifest.json");
  auto again = create_run_dir(tmp.path() / "runs", "r1");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("exists already"), std::string::npos);
  tmp.write("file", "x");
  auto under_a_file = create_run_dir(tmp.path() / "file", "r1");
  ASSERT_FALSE(under_a_file.ok());
  EXPECT_NE(under_a_file.error().message.find("cannot create the output directory"), std::string::npos);
}

TEST(RunDir, EnvironmentSubsetKeepsGpuVariablesAndDropsSecrets) {
  std::string entries[] = {"CUDA_VISIBLE_DEVICES=0,1", "HF_TOKEN=abc", "NCCL_DEBUG=INFO", "HOME=/root",
                           "RANK=3", "CUDA_API_KEY=x", "TORCH_LOGS=+dynamo", "NOEQUALS"};
  std::vector<char*> list;
  for (auto& e : entries) list.push_back(e.data());
  list.push_back(nullptr);
  auto env = env_subset(list.data());
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "0,1"},
                                                      {"NCCL_DEBUG", "INFO"},
                                                      {"RANK", "3"},
                                                      {"TORCH_LOGS", "+dynamo"}}));
}

TEST(RunDir, ManifestRecordsEveryRunAndHowItEnded) {
  test::TempDir tmp;
  auto dir = create_run_dir(tmp.path(), "r");
  ASSERT_TRUE(dir.ok());
  Manifest m;
  m.run_id = "r";
  m.command = {"python3", "run.py", "--model", "llama"};
  m.clock_control = "none";
  m.status = "interrupted";
  m.status_reason = "Ctrl-C during the deep pass";
  ToolRun discovery;
  discovery.step = "discovery";
  discovery.argv = {"ncu", "--metrics", "gpu__time_duration.sum"};
  discovery.exit_code = 0;
  discovery.wall_ns = 1500000000;
  discovery.stdout_log = "discovery/ncu.stdout.log";
  discovery.stderr_log = "discovery/ncu.stderr.log";
  m.runs.push_back(discovery);
  ToolRun deep;
  deep.step = "deep 1/1";
  deep.argv = {"ncu", "--section", "SpeedOfLight"};
  deep.signal = 2;
  deep.interrupted = true;
  deep.wall_ns = 7;
  m.runs.push_back(deep);
  ASSERT_TRUE(write_manifest(*dir, m).ok());
  std::ifstream in(dir->manifest());
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["schema"], "kernlens.manifest/1");
  EXPECT_EQ(j["status"], "interrupted");
  EXPECT_EQ(j["status_reason"], "Ctrl-C during the deep pass");
  EXPECT_EQ(j["clock_control"], "none");
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["argv"][2], "gpu__time_duration.sum");
  EXPECT_EQ(j["runs"][0]["exit_code"], 0);
  EXPECT_EQ(j["runs"][0]["wall_ns"], 1500000000);
  EXPECT_TRUE(j["runs"][1]["exit_code"].is_null());
  EXPECT_EQ(j["runs"][1]["signal"], 2);
  EXPECT_EQ(j["runs"][1]["interrupted"], true);
  EXPECT_FALSE(j["runs"][1].contains("stdout_log"));
}

}  // namespace
}  // namespace kernlens::profile

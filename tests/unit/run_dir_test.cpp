// The run directory and its manifest: ids, layout, no overwriting, the recorded environment.
#include "kernlens/rundir/manifest.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>

#include "kernlens/rundir/run_key.h"
#include "kernlens/rundir/tags.h"
#include "test_util.h"

namespace kernlens::rundir {
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

// What a reader needs comes back typed; tags may be an object (a number is its text) or the
// list of KEY=VALUE strings as given.
TEST(Manifest, ReadsBackWhatItWrote) {
  test::TempDir tmp;
  auto dir = create_run_dir(tmp.path(), "r");
  ASSERT_TRUE(dir.ok());
  Manifest m;
  m.run_id = "r";
  m.command = {"python3", "run.py"};
  m.env = {{"CUDA_VERSION", "13.0"}};
  m.tools["gpu"] = "NVIDIA H100 80GB HBM3";
  m.options["discovery"] = "tracer";
  m.options["nvtx_include"] = {"prefill", "llm@decode"};
  m.tags = {{"model", "llama"}, {"batch", "4"}};
  ASSERT_TRUE(write_manifest(*dir, m).ok());
  auto back = read_manifest(dir->root.string());
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->run_id, "r");
  EXPECT_EQ(back->command, m.command);
  EXPECT_EQ(back->env, m.env);
  EXPECT_EQ(back->tool("/gpu"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(back->tool("/ncu/version"), "");
  EXPECT_EQ(back->discovery_method(), "tracer");
  EXPECT_EQ(back->nvtx_include(), (std::vector<std::string>{"prefill", "llm@decode"}));
  EXPECT_EQ(back->tags, m.tags);
  EXPECT_EQ(back->tag("batch"), "4");
  EXPECT_EQ(back->tag("tokens"), std::nullopt);
  std::ofstream(dir->manifest()) << R"({"schema": "kernlens.manifest/1", "tags": {"batch": 8, "model": "qwen"}})";
  EXPECT_EQ(read_manifest(dir->root.string())->tags, (Tags{{"batch", "8"}, {"model", "qwen"}}));
  std::ofstream(dir->manifest()) << R"({"schema": "kernlens.manifest/1", "tags": ["batch=8", "batch=16", "x"]})";
  EXPECT_EQ(read_manifest(dir->root.string())->tags, (Tags{{"batch", "16"}}));
  std::ofstream(dir->manifest()) << R"({"schema": "kernlens.manifest/2"})";
  EXPECT_NE(read_manifest(dir->root.string()).error().message.find("schema kernlens.manifest/1 expected"),
            std::string::npos);
}

TEST(Tags, AreCheckedAsGiven) {
  EXPECT_FALSE(parse_tags({"novalue"}).ok());
  EXPECT_FALSE(parse_tags({"=x"}).ok());
  EXPECT_FALSE(parse_tags({"a b=x"}).ok());
  EXPECT_FALSE(parse_tags({"a=1", "a=2"}).ok());
  auto tags = parse_tags({"model=llama-8b", "batch=8", "note=a=b"});
  ASSERT_TRUE(tags.ok());
  EXPECT_EQ(*tags, (Tags{{"model", "llama-8b"}, {"batch", "8"}, {"note", "a=b"}}));
}

TEST(RunKey, FollowsTheMeasurementsNotTheAnalysisNorTheTags) {
  test::TempDir dir;
  auto copy = dir.path() / "run";
  std::filesystem::copy(test::example_run("llama_prefill"), copy, std::filesystem::copy_options::recursive);
  auto original = run_key(test::example_run("llama_prefill"));
  ASSERT_TRUE(original.ok());
  EXPECT_EQ(original->rfind("llama-", 0), 0u);
  EXPECT_EQ(*run_key(copy.string()), *original);
  std::ofstream(copy / "analysis.json", std::ios::app) << "\n";
  EXPECT_EQ(*run_key(copy.string()), *original);
  // Tags label a run: retagging it (by hand, as examples/data's were) is the same run.
  auto manifest = read_manifest(copy.string());
  ASSERT_TRUE(manifest.ok());
  auto j = nlohmann::ordered_json::parse(std::ifstream(copy / "manifest.json"));
  j["tags"] = {{"model", "llama-1b"}, {"batch", "2"}};
  std::ofstream(copy / "manifest.json") << manifest_text(j);
  EXPECT_EQ(*run_key(copy.string()), *original);
  j["run_id"] = "other";
  std::ofstream(copy / "manifest.json") << manifest_text(j);
  EXPECT_NE(*run_key(copy.string()), *original);
  std::ofstream(copy / "discovery" / "kernels.csv", std::ios::app) << "\n";
  EXPECT_NE(*run_key(copy.string()), *original);
  auto file_key = run_key(test::fixture("ncu/gpt2_prefill_raw.csv"));
  ASSERT_TRUE(file_key.ok());
  EXPECT_EQ(file_key->rfind("file-xxh3.", 0), 0u) << *file_key;
}

// The committed runs keep their keys: the current form (the compare goldens print them), and
// the first form (FNV-1a), which databases written before XXH3 hold, exactly as it was then
// (tags added since do not change either).
TEST(RunKey, CommittedRunsKeepTheirKeys) {
  auto b4 = run_keys(test::example_run("llama_prefill_b4"), true);
  auto b8 = run_keys(test::example_run("llama_prefill_b8"), true);
  ASSERT_TRUE(b4.ok() && b8.ok());
  EXPECT_EQ(b4->key, "llama_prefill_b4-xxh3.9f982a1678af9e4f");
  EXPECT_EQ(b8->key, "llama_prefill_b8-xxh3.d62e074e742a8f96");
  EXPECT_EQ(b4->legacy_key, "llama_prefill_b4-8674d6a48f78f8da");
  EXPECT_EQ(b8->legacy_key, "llama_prefill_b8-7377f4a3589be883");
  EXPECT_EQ(*run_key(test::example_run("llama_prefill_b4")), b4->key);
  EXPECT_EQ(run_keys(test::example_run("llama_prefill_b4"), false)->legacy_key, "");  // not computed
}

// SQLite's GLOB, as the store applies current_key_glob() (store::has_run_key_not_matching).
bool glob_matches(std::string_view glob, const std::string& text) {
  return sqlite3_strglob(std::string(glob).c_str(), text.c_str()) == 0;
}

// No key of one form can equal a key of the other: the GLOB that picks the current form
// matches every current key (run directories and files) and no first-form key, even one whose
// run_id looks like the current form's tail.
TEST(RunKey, TheTwoFormsCannotCollide) {
  test::TempDir dir;
  dir.write("x.csv", "bytes\n");
  for (const std::string& path : {test::example_run("llama_prefill"), dir.file("x.csv")}) {
    auto keys = run_keys(path, true);
    ASSERT_TRUE(keys.ok());
    EXPECT_TRUE(glob_matches(current_key_glob(), keys->key)) << keys->key;
    EXPECT_FALSE(glob_matches(current_key_glob(), keys->legacy_key)) << keys->legacy_key;
    EXPECT_NE(keys->key.substr(keys->key.rfind('-')), keys->legacy_key.substr(keys->legacy_key.rfind('-')));
  }
  EXPECT_FALSE(glob_matches(current_key_glob(), "a-xxh3.0123456789abcdef-0123456789abcdef"));
  EXPECT_TRUE(glob_matches(current_key_glob(), "a-0123456789abcdef-xxh3.0123456789abcdef"));
}

// discovery/ as each method leaves it, and the order a manifest that names no method is read in.
TEST(RunDirLayout, DiscoveryExportsByMethod) {
  test::TempDir tmp;
  const std::string run = tmp.file("run");
  std::filesystem::create_directories(run + "/discovery");
  std::ofstream(run + "/discovery/kernlens-7.kltrace") << "x";
  EXPECT_EQ(discovery_exports(run, "nsys"), std::vector<std::string>{});
  EXPECT_EQ(discovery_exports(run, ""), std::vector<std::string>{run + "/discovery/kernlens-7.kltrace"});
  std::ofstream(run + "/discovery/timing_raw.csv.gz") << "x";
  EXPECT_EQ(discovery_exports(run, "auto"), std::vector<std::string>{run + "/discovery/timing_raw.csv.gz"});
  EXPECT_EQ(discovery_exports(run, "tracer"), std::vector<std::string>{run + "/discovery/kernlens-7.kltrace"});
  EXPECT_EQ(discovery_export_names(),
            "discovery/timeline.sqlite, discovery/timing_raw.csv or discovery/kernlens-*.kltrace");
  std::filesystem::create_directories(run + "/deep");
  for (const char* f : {"deep_2_raw.csv", "deep_1_details.csv.gz", "deep_1_raw.csv", "deep_1.ncu-rep", "x.log"}) {
    std::ofstream(run + "/deep/" + f) << "x";
  }
  EXPECT_EQ(deep_exports(run), (std::vector<std::string>{run + "/deep/deep_1_details.csv.gz", run + "/deep/deep_1_raw.csv",
                                                          run + "/deep/deep_2_raw.csv"}));
}

}  // namespace
}  // namespace kernlens::rundir

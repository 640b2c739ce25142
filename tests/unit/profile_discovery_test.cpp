// `kernlens profile` beyond the happy path (issue 15): discovery that falls back when a profiler
// fails (a fake nsys that cannot make its report, as on the H100 machine), reusing an earlier
// discovery, a dry run without ncu, -f, tags, where the time went, and Ctrl-C while kernlens
// itself works.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kernlens/profile/interrupt.h"
#include "kernlens/profile/run_context.h"
#include "kernlens/load/load.h"
#include "profile_test_util.h"

namespace kernlens::profile {
namespace {

using test::kFakeNsys;
using test::options;
using test::read_json;
using test::run;

std::vector<std::string> attempt_outcomes(const nlohmann::json& manifest) {
  std::vector<std::string> outcomes;
  for (const auto& a : manifest["discovery"]["attempts"]) {
    outcomes.push_back(a["method"].get<std::string>() + " " + a["outcome"].get<std::string>());
  }
  return outcomes;
}

// --discovery auto with every method there: a "tracer" that is a text file (a program that
// loads no CUDA never loads it), the fake nsys, the fake ncu.
ProfileRunOptions auto_options(const test::TempDir& dir, std::vector<std::string> command) {
  dir.write("libkernlens_tracer.so", "not a library: CUDA never loads it here");
  auto o = options(dir, std::move(command));
  o.discovery = std::nullopt;
  o.nsys_path = kFakeNsys;
  o.tracer_path = dir.file("libkernlens_tracer.so");
  return o;
}

// The tracer writes nothing (the "library" is a text file and `true` loads no CUDA), nsys cannot
// import its capture and its export exits 1: auto goes on to ncu's timing mode, warns at each
// step, and the manifest says what happened to each method.
TEST(ProfileDiscovery, AutoFallsBackThroughEveryProfilerThatFails) {
  test::TempDir dir;
  auto r = run(auto_options(dir, {"true"}));
  ASSERT_EQ(r.result.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: discovery with the kernlens tracer failed (discovery (tracer): the tracer wrote no "
                       "kernlens-*.kltrace"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("warning: discovery with Nsight Systems failed (discovery (nsys profile): nsys wrote no report"),
            std::string::npos)
      << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["status"], "complete");
  EXPECT_EQ(manifest["discovery"]["requested"], "auto");
  EXPECT_EQ(manifest["discovery"]["method"], "ncu");
  EXPECT_EQ(manifest["options"]["discovery"], "ncu");
  EXPECT_EQ(attempt_outcomes(manifest), (std::vector<std::string>{"tracer failed", "nsys failed", "ncu ran"}));
  const std::string nsys_why = manifest["discovery"]["attempts"][1]["why"];
  EXPECT_NE(nsys_why.find("Importer error status: An unknown error occurred."), std::string::npos) << nsys_why;
  EXPECT_EQ(manifest["tools"]["nsys"]["version"], "2025.3.1.0");
  // The run directory reads back from the method that ran, not a failed one's leftovers.
  auto again = load::load({dir.file("runs") + "/r1"}, test::builtin_classifier());
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(again->profile.launches.size(), 396u);
}

// Asked for by name, nsys fails clearly: no other method runs, and the error quotes nsys.
TEST(ProfileDiscovery, ExplicitNsysFailsClearly) {
  test::TempDir dir;
  auto o = options(dir, {"true"});
  o.discovery = rundir::DiscoveryMethod::kNsys;
  o.nsys_path = kFakeNsys;
  auto r = run(o);
  EXPECT_EQ(r.result.exit_code, 3);
  EXPECT_NE(r.err.find("kernlens: error: discovery (nsys profile): nsys wrote no report (discovery/timeline.nsys-rep)"
                       "\n    Importer error status: An unknown error occurred."),
            std::string::npos)
      << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["status"], "failed");
  EXPECT_EQ(attempt_outcomes(manifest), (std::vector<std::string>{"nsys failed"}));
}

// A program that fails on its own fails under every profiler: it is not run twice more.
TEST(ProfileDiscovery, AFailingProgramIsNotRunAgainUnderAnotherProfiler) {
  test::TempDir dir;
  auto r = run(auto_options(dir, {"false"}));
  EXPECT_EQ(r.result.exit_code, 3);
  EXPECT_NE(r.err.find("error: discovery (tracer): the program under the kernlens tracer: exit code 1"), std::string::npos)
      << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(attempt_outcomes(manifest), (std::vector<std::string>{"tracer failed", "nsys not tried", "ncu not tried"}));
  EXPECT_EQ(manifest["runs"].size(), 1u);
}

// --discovery-from: the second run profiles with the first one's discovery, linked into its
// own run directory, and runs no discovery of its own.
TEST(ProfileDiscovery, ReusesAnEarlierRunsDiscovery) {
  test::TempDir dir;
  auto first = run(options(dir, {"true"}));
  ASSERT_EQ(first.result.exit_code, 0) << first.err;
  auto o = options(dir, {"true"});
  o.run_id = "r2";
  o.discovery = std::nullopt;
  o.discovery_from = dir.file("runs") + "/r1";
  auto second = run(o);
  ASSERT_EQ(second.result.exit_code, 0) << second.err;
  auto manifest = read_json(dir.file("runs") + "/r2/manifest.json");
  EXPECT_EQ(manifest["discovery"]["requested"], "from");
  EXPECT_EQ(manifest["discovery"]["from_run_id"], "r1");
  EXPECT_EQ(manifest["discovery"]["method"], "ncu");
  EXPECT_EQ(manifest["runs"][0]["step"], "deep 1/2");
  EXPECT_TRUE(std::filesystem::exists(dir.file("runs") + "/r2/discovery/timing_raw.csv"));
  EXPECT_EQ(read_json(dir.file("runs") + "/r2/analysis.json")["totals"],
            read_json(dir.file("runs") + "/r1/analysis.json")["totals"]);
}

TEST(ProfileDiscovery, DiscoveryFromRefusesWhatItCannotUse) {
  test::TempDir dir;
  auto o = options(dir, {"true"});
  o.discovery_from = dir.path().string();
  auto r = run(o);  // with --discovery ncu
  EXPECT_EQ(r.result.exit_code, 2);
  EXPECT_NE(r.err.find("give it without --discovery"), std::string::npos) << r.err;
  o.discovery = std::nullopt;
  r = run(o);  // not a run directory
  EXPECT_EQ(r.result.exit_code, 2);
  EXPECT_NE(r.err.find("--discovery-from: not a kernlens run directory"), std::string::npos) << r.err;
  ASSERT_EQ(run(options(dir, {"true"})).result.exit_code, 0);
  // ncu's timing discovery kept only the ranges it was given: others are not in it.
  o.discovery_from = dir.file("runs") + "/r1";
  o.run_id = "r2";
  o.nvtx_include = {"prefill"};
  r = run(o);
  EXPECT_EQ(r.result.exit_code, 2);
  EXPECT_NE(r.err.find("its ncu discovery kept only --nvtx-include []"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs") + "/r2"));
}

// Issue 15: a dry run on a machine without ncu prints the plan all the same, saying what it
// could not find.
TEST(ProfileDiscovery, DryRunWithoutNcuPrintsThePlanAndMarksWhatIsMissing) {
  test::TempDir dir;
  auto o = options(dir, {"python3", "run.py"});
  o.ncu_path = dir.file("no-ncu-here");
  o.dry_run = true;
  auto r = run(o);
  EXPECT_EQ(r.result.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# NOT FOUND: cannot run ncu at '" + o.ncu_path + "'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# discovery: ncu (NOT FOUND: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'<ncu: not found>' --target-processes all --replay-mode kernel"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("python3 run.py\n"), std::string::npos) << r.out;
  // Without --dry-run it is still a usage error.
  o.dry_run = false;
  EXPECT_EQ(run(o).result.exit_code, 2);
}

TEST(ProfileDiscovery, ForceOverwriteReplacesOnlyARunDirectory) {
  test::TempDir dir;
  ASSERT_EQ(run(options(dir, {"true"})).result.exit_code, 0);
  auto o = options(dir, {"true"});
  EXPECT_EQ(run(o).result.exit_code, 2);  // it exists
  o.force_overwrite = true;
  o.tags = {{"try", "2"}};
  auto again = run(o);
  ASSERT_EQ(again.result.exit_code, 0) << again.err;
  EXPECT_EQ(read_json(dir.file("runs") + "/r1/manifest.json")["tags"]["try"], "2");
  // A directory that is not a run directory is never removed.
  std::filesystem::create_directories(dir.file("runs/notes"));
  dir.write("runs/notes/keep.txt", "mine");
  o.run_id = "notes";
  auto refused = run(o);
  EXPECT_EQ(refused.result.exit_code, 2);
  EXPECT_NE(refused.err.find("is not a kernlens run directory"), std::string::npos) << refused.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("runs/notes/keep.txt")));
}

TEST(ProfileDiscovery, TagsGoIntoTheManifestInTheirOrder) {
  test::TempDir dir;
  auto o = options(dir, {"true"});
  o.tags = {{"sweep", "batch"}, {"batch", "16"}, {"prompt_tokens", "512"}};
  ASSERT_EQ(run(o).result.exit_code, 0);
  std::ifstream in(dir.file("runs") + "/r1/manifest.json");
  auto manifest = nlohmann::ordered_json::parse(in);
  EXPECT_EQ(manifest["tags"].dump(), R"({"sweep":"batch","batch":"16","prompt_tokens":"512"})");
}

// ncu's --version and --list-sections and the environment probe run while discovery does: the
// fake ncu answers --version only once the program under discovery has made its file (asked
// before discovery, as before, it gave up after 10 s and the version was "unknown").
TEST(ProfileDiscovery, ToolProbesRunBesideDiscovery) {
  test::TempDir dir;
  const std::string made_by_program = dir.file("program-ran");
  auto o = options(dir, {"sh", "-c", "touch " + made_by_program});
  setenv("FAKE_NCU_VERSION_AFTER", made_by_program.c_str(), 1);
  auto r = run(o);
  unsetenv("FAKE_NCU_VERSION_AFTER");
  ASSERT_EQ(r.result.exit_code, 0) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["tools"]["ncu"]["version"], "2025.3.1.0");
  EXPECT_TRUE(manifest["tools"]["environment"].is_object());
  // The sections came too: the deep pass asked for the tier's sections this ncu lists.
  bool asked_for_sections = false;
  for (const auto& tool_run : manifest["runs"]) {
    for (const auto& arg : tool_run["argv"]) asked_for_sections |= arg == "--section";
  }
  EXPECT_TRUE(asked_for_sections);
}

// Where the time went: kernlens's own steps and every child's run, in order, in the manifest
// and (with --verbose) on stderr; an ncu run's start-up and profiling apart.
TEST(ProfileDiscovery, TimingsSayWhereTheTimeWent) {
  test::TempDir dir;
  auto o = options(dir, {"true"});
  o.verbose = true;
  auto r = run(o);
  ASSERT_EQ(r.result.exit_code, 0) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  std::vector<std::string> steps;
  std::int64_t sum_ns = 0;
  for (const auto& t : manifest["timings"]["steps"]) {
    steps.push_back(t["step"]);
    sum_ns += t["wall_ns"].get<std::int64_t>();
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"find tools", "discovery (ncu)", "discovery export (ncu)",
                                             "read discovery", "probe ncu and the environment", "select kernels", "deep 1/2",
                                             "deep 1/2 exports", "deep 2/2", "deep 2/2 exports", "join the deep pass",
                                             "analyze", "write analysis.json"}));
  EXPECT_GT(sum_ns, 0);
  EXPECT_LE(sum_ns, manifest["timings"]["total_ns"].get<std::int64_t>());
  const auto& deep = manifest["runs"][2];
  ASSERT_EQ(deep["step"], "deep 1/2");
  EXPECT_EQ(deep["kernels_profiled"], 32);  // the first run's window of launches
  EXPECT_LE(deep["first_kernel_ns"].get<std::int64_t>(), deep["last_kernel_ns"].get<std::int64_t>());
  EXPECT_NE(r.err.find("kernlens: where the time went ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("  discovery (ncu) "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("  deep 1/2: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" to the first profiled kernel, "), std::string::npos) << r.err;
}

// Issue 15, item 6: Ctrl-C while kernlens itself reads or analyzes, between two profiler runs.
// Without the guard, SIGINT's default action ended kernlens there and the manifest kept saying
// "running". SIGHUP (an ssh session that dropped) is an interrupt too.
TEST(ProfileDiscovery, CtrlCBetweenProfilerRunsEndsAsInterruptedWithWhatWasKept) {
  for (int sig : {SIGINT, SIGHUP}) {
    test::TempDir dir;
    ProfileRunOptions o = options(dir, {"true"});
    std::ostringstream out, err;
    RunContext ctx(o, test::builtin_classifier(), out, err);
    auto run_dir = rundir::create_run_dir(o.out, "r1");
    ASSERT_TRUE(run_dir.ok());
    ctx.dir = *run_dir;
    dir.write("runs/r1/discovery/timing_raw.csv", "kept\n");
    InterruptGuard guard;
    ctx.guard = &guard;
    ctx.save();
    ASSERT_FALSE(ctx.stop_requested());
    ::raise(sig);  // as if the user pressed Ctrl-C (or closed the terminal) while kernlens read the discovery
    ASSERT_TRUE(ctx.stop_requested());
    auto result = ctx.finish_interrupted("reading the discovery");
    EXPECT_EQ(result.exit_code, 3);
    auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
    EXPECT_EQ(manifest["status"], "interrupted");
    EXPECT_EQ(manifest["status_reason"], "interrupted by " + signal_name(sig) + " while reading the discovery");
    EXPECT_EQ(manifest["kept"], nlohmann::json::array({"discovery/timing_raw.csv"}));
    EXPECT_NE(err.str().find("kept 1 files: discovery/timing_raw.csv"), std::string::npos) << err.str();
  }
}

// A second Ctrl-C while kernlens works does not wait for the step to end: the manifest
// prepared for it says "interrupted", and kernlens exits 3 at once.
TEST(ProfileDiscovery, ASecondCtrlCWritesTheInterruptedManifestAndExits) {
  test::TempDir dir;
  const std::string path = dir.file("manifest.json");
  dir.write("manifest.json", R"({"status": "running"})");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    InterruptGuard guard;
    guard.prepare_last_words(path, R"({"status": "interrupted"})");
    ::raise(SIGINT);
    ::raise(SIGINT);
    _exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), R"({"status": "interrupted"})");
}

}  // namespace
}  // namespace kernlens::profile

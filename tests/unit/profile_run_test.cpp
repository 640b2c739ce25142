// `kernlens profile` end to end against a fake ncu (tests/fixtures/fake_tools/fake_ncu.py) that
// profiles and exports like ncu 2025.3.1 with a real H100 export's launches: the run
// directory, the manifest, the dry run, and failures (program, profiler, timeout).
#include "kernlens/profile/profile_run.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "kernlens/profile/early_start.h"
#include "profile_test_util.h"

namespace kernlens::profile {
namespace {

using test::options;
using test::read_json;
using test::run;
using test::without_environment_line;
using test::kFakeNcu;

TEST(ProfileRun, DryRunPrintsEveryCommandAndRunsNothing) {
  test::TempDir dir;
  auto o = options(dir, {"python3", "run.py", "--prompt", "it's"});
  o.dry_run = true;
  o.nvtx_include = {"prefill"};
  auto r = run(o);
  EXPECT_EQ(r.result.exit_code, 0) << r.err;
  const std::string runs = dir.file("runs") + "/r1";
  const std::string expected =
      "# kernlens profile --dry-run: the commands a run would use; nothing is run\n"
      "# ncu: " + kFakeNcu + " (2025.3.1.0)\n"
      "# run directory: " + runs + "\n"
      "# discovery: ncu (found)\n" +
      kFakeNcu + " --target-processes all --clock-control none --cache-control none --metrics "
      "gpu__time_duration.sum --nvtx --nvtx-include prefill/ -o " + runs + "/discovery/timing python3 run.py "
      "--prompt 'it'\\''s'\n" +
      kFakeNcu + " --import " + runs + "/discovery/timing.ncu-rep --page raw --csv --print-units base --print-kernel-base mangled\n"
      "# deep pass: 2 copies of its program start beside discovery under ncu --mode launch and wait at\n"
      "# their first CUDA call; the first 2 ncu runs attach to them, one each, once discovery has chosen the\n"
      "# kernels (copies not needed are ended then; --no-early-start: the program starts after discovery)\n"
      "# deep pass: one ncu run per group of the kernels discovery selects (shown for the first; the\n"
      "# kernels, the launch number they share and --launch-count, one per kernel, come from discovery)\n" +
      kFakeNcu + " --mode launch --target-processes application-only --nvtx --port '<A FREE PORT>' "
      "--max-connections 4 python3 run.py --prompt 'it'\\''s'\n" +
      kFakeNcu + " --mode attach --hostname 127.0.0.1 --port '<A FREE PORT>' --max-connections 4 --replay-mode kernel "
      "--clock-control none --section SpeedOfLight "
      "--section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats "
      "--section WarpStateStats --section SpeedOfLight_RooflineChart --section "
      "SpeedOfLight_HierarchicalTensorRooflineChart --section SpeedOfLight_HierarchicalSingleRooflineChart "
      "--section SpeedOfLight_HierarchicalDoubleRooflineChart --nvtx-include prefill/ "
      "--kernel-name-base mangled --kernel-id '::regex:<THE KERNELS DISCOVERY SELECTS>:<LAUNCH NUMBER>' "
      "--launch-count 1 --kill 1 -o " + runs + "/deep/deep_1\n" +
      kFakeNcu + " --import " + runs + "/deep/deep_1.ncu-rep --page raw --csv --print-units base --print-kernel-base mangled\n" +
      kFakeNcu + " --import " + runs + "/deep/deep_1.ncu-rep --page details --csv --print-kernel-base mangled\n";
  // The environment line depends on this machine (its Python; nvidia-smi when there is one).
  const auto env_at = r.out.find("# environment: {");
  ASSERT_NE(env_at, std::string::npos) << r.out;
  const auto env_end = r.out.find('\n', env_at);
  EXPECT_NE(r.out.substr(env_at, env_end - env_at).find("\"python_version\":"), std::string::npos);
  EXPECT_EQ(without_environment_line(r.out), expected);
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs")));
  // --no-early-start: one ncu command that starts the program after discovery.
  o.early_programs = 0;
  auto after = run(o);
  EXPECT_EQ(after.result.exit_code, 0) << after.err;
  EXPECT_EQ(after.out.find("--mode"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("\n" + kFakeNcu + " --target-processes all --replay-mode kernel --clock-control none "),
            std::string::npos)
      << after.out;
}

TEST(ProfileRun, RunDirectoryHoldsDiscoveryDeepPassAndAnalysis) {
  test::TempDir dir;
  auto r = run(options(dir, {"echo", "hello from the program"}));
  ASSERT_EQ(r.result.exit_code, 0) << r.err;
  const std::string root = dir.file("runs") + "/r1";
  EXPECT_EQ(r.result.run_dir, root);
  // The program's output reaches the user (stderr: stdout is the report's).
  EXPECT_NE(r.err.find("hello from the program\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("deep pass: 18 kernels, 90.8% of 1.623 ms of kernel time, in 2 ncu runs"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ncu: 34/34 kernels"), std::string::npos) << r.err;
  // The report: every discovered launch ranked; the deep pass's windows (a function-name
  // filter, as the fixture's names are demangled) also caught 2 kernels it did not aim at.
  EXPECT_NE(r.out.find("kernels 396 launches of 30 kernels, 1.623 ms of GPU time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ncu throughput metrics for 20 of 30 kernels, 93.8% of kernel time (measured on 34 of "
                       "396 launches)"),
            std::string::npos)
      << r.out;
  auto manifest = read_json(root + "/manifest.json");
  EXPECT_EQ(manifest["status"], "complete");
  EXPECT_EQ(manifest["clock_control"], "none");
  EXPECT_EQ(manifest["command"], nlohmann::json::array({"echo", "hello from the program"}));
  std::vector<std::string> steps;
  for (const auto& run_record : manifest["runs"]) {
    steps.push_back(run_record["step"]);
    EXPECT_EQ(run_record["exit_code"], 0);
    EXPECT_TRUE(std::filesystem::exists(root + "/" + run_record["stderr_log"].get<std::string>()));
  }
  // Both deep runs attached to copies of the program started beside discovery (early_start.h).
  EXPECT_EQ(steps, (std::vector<std::string>{"discovery (ncu)", "discovery export (ncu)", "deep 1/2",
                                             "deep 1/2 program (started beside discovery under ncu --mode launch)",
                                             "deep 1/2 export raw", "deep 1/2 export details", "deep 2/2",
                                             "deep 2/2 program (started beside discovery under ncu --mode launch)",
                                             "deep 2/2 export raw", "deep 2/2 export details"}));
  EXPECT_EQ(manifest["options"]["early_start"]["used"], true);
  EXPECT_EQ(manifest["options"]["early_start"]["programs"], 2);
  EXPECT_EQ(manifest["options"]["early_start"]["attached"], 2);
  EXPECT_EQ(manifest["options"]["selection"]["kernels"], 18);
  auto analysis = read_json(root + "/analysis.json");
  EXPECT_EQ(analysis["totals"]["launches"], 396);
  EXPECT_EQ(analysis["coverage"]["measured_kernels"], 20);
  EXPECT_EQ(analysis["coverage"]["deep_launches"], 34);
  // kernels.csv: 30 kernels ranked, the 18 measured marked.
  std::ifstream csv(root + "/discovery/kernels.csv");
  std::string line;
  int rows = 0, deep = 0;
  std::getline(csv, line);
  while (std::getline(csv, line)) {
    ++rows;
    deep += line.find(",yes,") != std::string::npos;
  }
  EXPECT_EQ(rows, 30);
  EXPECT_EQ(deep, 18);
}

// --repeat N: the program gets KERNLENS_REPEAT=N (llm_stages.py's --repeat) and the manifest
// records N; --discovery-only runs no deep pass.
TEST(ProfileRun, RepeatReachesTheProgramAndTheManifest) {
  test::TempDir dir;
  auto o = options(dir, {"sh", "-c", "echo program sees KERNLENS_REPEAT=$KERNLENS_REPEAT"});
  o.repeat = 3;
  o.discovery_only = true;
  auto r = run(o);
  ASSERT_EQ(r.result.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("program sees KERNLENS_REPEAT=3\n"), std::string::npos) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["options"]["repeat"], 3);
  EXPECT_EQ(manifest["options"]["discovery_only"], true);
  std::vector<std::string> steps;
  for (const auto& run_record : manifest["runs"]) steps.push_back(run_record["step"]);
  EXPECT_EQ(steps, (std::vector<std::string>{"discovery (ncu)", "discovery export (ncu)"}));
  EXPECT_TRUE(std::filesystem::exists(dir.file("runs") + "/r1/analysis.json"));
  // Without --repeat the program's environment is left alone.
  test::TempDir plain;
  auto once = run(options(plain, {"sh", "-c", "echo program sees KERNLENS_REPEAT=${KERNLENS_REPEAT:-unset}"}));
  EXPECT_NE(once.err.find("program sees KERNLENS_REPEAT=unset\n"), std::string::npos) << once.err;
}

// A discovery with mangled names (the real llama prefill run): each ncu run of the deep pass
// profiles one launch of each of its kernels through --kernel-id, and --kill ends the
// program after the last one.
TEST(ProfileRun, MangledDiscoveryProfilesOneLaunchPerKernelThroughKernelId) {
  test::TempDir dir;
  setenv("FAKE_NCU_DATA", "llama_prefill", 1);
  auto r = run(options(dir, {"echo", "hello from the program"}));
  unsetenv("FAKE_NCU_DATA");
  ASSERT_EQ(r.result.exit_code, 0) << r.err;
  // The lm_head GEMM (2 launches) cannot share an invocation number with the rest (launch 3
  // represents most of them best): rather than a second run for 4.8% of the time, the next
  // kernels by time take its place and coverage stays above 90%.
  EXPECT_NE(r.err.find("deep pass: 16 kernels, 91.4% of 4.209 ms of kernel time, in 1 ncu runs"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("left out nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT (4.8% of kernel time)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ncu: 16/16 kernels"), std::string::npos) << r.err;
  const std::string root = dir.file("runs") + "/r1";
  std::ifstream log(root + "/deep/deep_1.stdout.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("==PROF== Trying to shutdown target application"), std::string::npos) << text;
  EXPECT_EQ(text.find("hello from the program"), std::string::npos) << "--kill 1 should end the program";
  auto manifest = read_json(root + "/manifest.json");
  EXPECT_EQ(manifest["options"]["selection"]["kernel_name_base"], "mangled");
  const auto& deep_argv = manifest["runs"][2]["argv"];
  EXPECT_NE(std::find(deep_argv.begin(), deep_argv.end(), "--kernel-id"), deep_argv.end()) << deep_argv;
  auto analysis = read_json(root + "/analysis.json");
  EXPECT_EQ(analysis["totals"]["launches"], 684);
  // The fake serves the real deep pass's rows, which hold 14 of the 16 (the two that took
  // the GEMM's place were not measured on the H100).
  EXPECT_EQ(analysis["coverage"]["measured_kernels"], 14);
  EXPECT_EQ(analysis["coverage"]["deep_launches"], 14);
}

// Issue 15's cost: the deep pass's program starts beside discovery under `ncu --mode launch` and
// the first deep run attaches to it. What it measures is what the same run measures when the
// program starts after discovery, and nothing of it is left running.
std::string without_run_id(std::string text, const std::string& run_id) {
  for (std::size_t at; (at = text.find("/" + run_id + "/")) != std::string::npos;) text.replace(at, run_id.size() + 2, "/");
  return text;
}

// Live processes whose command line holds `needle` (arguments joined by spaces).
std::vector<int> processes_running(const std::string& needle) {
  std::vector<int> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    try {  // a process that exits while it is read fails the read (ESRCH: "No such process")
      std::ifstream in(entry.path() / "cmdline");
      std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
      std::ifstream stat(entry.path() / "stat");
      std::string line;
      std::getline(stat, line);
      const bool zombie = line.find(") Z ") != std::string::npos;
      if (!zombie && cmdline.find(needle) != std::string::npos) found.push_back(std::stoi(pid));
    } catch (const std::ios_base::failure&) {
      continue;  // gone
    }
  }
  return found;
}

std::string early_launch_needle(const nlohmann::json& manifest) {
  return "--mode launch --target-processes application-only --nvtx --port " +
         std::to_string(manifest["options"]["early_start"]["port"].get<int>()) + " ";
}

TEST(ProfileRun, EarlyStartMeasuresWhatAStartAfterDiscoveryMeasures) {
  test::TempDir dir;
  setenv("FAKE_NCU_DATA", "llama_prefill", 1);
  auto early = run(options(dir, {"echo", "hello from the program"}));
  auto o = options(dir, {"echo", "hello from the program"});
  o.run_id = "r2";
  o.early_programs = 0;
  auto after = run(o);
  unsetenv("FAKE_NCU_DATA");
  ASSERT_EQ(early.result.exit_code, 0) << early.err;
  ASSERT_EQ(after.result.exit_code, 0) << after.err;
  const std::string root = dir.file("runs") + "/r1";
  auto manifest = read_json(root + "/manifest.json");
  const auto& started = manifest["options"]["early_start"];
  EXPECT_EQ(started["started"], true);
  EXPECT_EQ(started["used"], true);
  EXPECT_GT(started["port"].get<int>(), 0);
  // The attach, then the program it measured (ended by --kill 1 after the last launch).
  const auto& attach = manifest["runs"][2];
  EXPECT_EQ(attach["argv"][1], "--mode");
  EXPECT_EQ(attach["argv"][2], "attach");
  const auto& program = manifest["runs"][3];
  EXPECT_EQ(program["argv"][1], "--mode");
  EXPECT_EQ(program["argv"][2], "launch");
  EXPECT_EQ(program["exit_code"], 0);
  EXPECT_TRUE(std::filesystem::exists(root + "/" + program["stdout_log"].get<std::string>()));
  EXPECT_EQ(read_json(dir.file("runs") + "/r2/manifest.json")["options"]["early_start"]["why_not"], "--no-early-start");
  // The same measurements, whichever way the program started.
  std::ifstream a(root + "/analysis.json"), b(dir.file("runs") + "/r2/analysis.json");
  std::string early_text((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
  std::string after_text((std::istreambuf_iterator<char>(b)), std::istreambuf_iterator<char>());
  EXPECT_EQ(without_run_id(early_text, "r1"), without_run_id(after_text, "r2"));
  EXPECT_NE(early_text.find("\"measured_kernels\": 14"), std::string::npos);
  EXPECT_TRUE(processes_running(early_launch_needle(manifest)).empty());
}

// An attach that fails (ncu could not connect) costs a run, not the measurements: the early
// program is ended and the deep pass starts the program the usual way.
TEST(ProfileRun, AFailedAttachEndsTheEarlyProgramAndRunsTheDeepPassAsUsual) {
  test::TempDir dir;
  auto o = options(dir, {"true"});
  o.attach_patience_s = 2;
  auto r = run(o, "attach-fails");
  ASSERT_EQ(r.result.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: the deep pass's program started early: deep 1/2: exit code 1"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ncu: No attachable process found."), std::string::npos) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["options"]["early_start"]["used"], false);
  EXPECT_NE(manifest["options"]["early_start"]["why_not"].get<std::string>().find("exit code 1"), std::string::npos);
  // ncu found no process each time; the attach tried for its patience, then gave up.
  std::size_t attaches = 0, usual = 0;
  for (const auto& record : manifest["runs"]) {
    if (record["step"] != "deep 1/2") continue;
    if (record["argv"][1] == "--mode") {
      ++attaches;
      EXPECT_EQ(record["exit_code"], 1);
      EXPECT_EQ(record["stdout_log"], "deep/deep_1.stdout.log");
    } else {
      ++usual;
      EXPECT_EQ(record["stdout_log"], "deep/deep_1_again.stdout.log");
    }
  }
  EXPECT_GE(attaches, 2u);
  EXPECT_EQ(usual, 1u);
  EXPECT_EQ(manifest["status"], "complete");
  EXPECT_TRUE(processes_running(early_launch_needle(manifest)).empty());
}

// ncu said "No attachable process found" while the early program had not reached its first
// CUDA call: the attach tries again and then measures it.
TEST(ProfileRun, AnAttachTooEarlyTriesAgain) {
  test::TempDir dir;
  auto r = run(options(dir, {"true"}), "attach-not-yet");
  ASSERT_EQ(r.result.exit_code, 0) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["options"]["early_start"]["used"], true);
  EXPECT_EQ(manifest["runs"][2]["exit_code"], 1);
  EXPECT_EQ(manifest["runs"][3]["argv"][2], "attach");
  EXPECT_EQ(manifest["runs"][3]["exit_code"], 0);
  EXPECT_TRUE(processes_running(early_launch_needle(manifest)).empty());
}

// The report's pages are exported at once; one that fails, still running when the other is
// done, is waited for and fails the run, and the manifest keeps both exports in page order.
TEST(ProfileRun, AnExportThatFailsBesideTheOtherFailsTheRun) {
  test::TempDir dir;
  auto r = run(options(dir, {"true"}), "details-export-fails");
  EXPECT_EQ(r.result.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("deep 1/2 export: exit code 1 (logs in the run directory)"), std::string::npos) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["status"], "failed");
  std::vector<std::string> exports;
  for (const auto& run_record : manifest["runs"]) {
    const std::string step = run_record["step"];
    if (!step.starts_with("deep ") || step.find(" export ") == std::string::npos) continue;
    exports.push_back(step + " " + std::to_string(run_record["exit_code"].get<int>()));
  }
  EXPECT_EQ(exports, (std::vector<std::string>{"deep 1/2 export raw 0", "deep 1/2 export details 1"}));
  std::vector<std::string> timed;
  for (const auto& t : manifest["timings"]["steps"]) timed.push_back(t["step"]);
  EXPECT_NE(std::find(timed.begin(), timed.end(), "deep 1/2 exports"), timed.end());
}

// Once the attach wrote its report, the program started early is not waited for: its group is
// ended (ncu's teardown of the killed program took 2 s on the H100), without a warning.
TEST(ProfileRun, TheEarlyProgramIsEndedOnceTheAttachWroteItsReport) {
  test::TempDir dir;
  auto r = run(options(dir, {"true"}), "linger-after-report");
  ASSERT_EQ(r.result.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["options"]["early_start"]["used"], true);
  EXPECT_EQ(manifest["options"]["early_start"]["ended_after_report"], true);
  const auto& program = manifest["runs"][3];
  ASSERT_EQ(program["argv"][2], "launch");
  EXPECT_EQ(program["signals_sent"], nlohmann::json::array({SIGTERM}));
  // Ended on purpose, and the manifest says so: not a timeout of the user's program.
  EXPECT_EQ(program["stopped"], true);
  EXPECT_FALSE(program.contains("timed_out")) << program.dump();
  EXPECT_LT(program["wall_ns"].get<std::int64_t>(), 20'000'000'000);  // not the 30 s it would have lingered
  EXPECT_TRUE(processes_running(early_launch_needle(manifest)).empty());
}

// A kernlens killed with SIGKILL cannot end its children, but the program waiting for its
// attach (which would wait for ever, holding the model in memory) is ended all the same, by the
// watchdog in its group.
TEST(ProfileRun, AKernlensKilledBySigkillLeavesNoEarlyProgramWaiting) {
  test::TempDir dir;
  const std::string token = "kernlens-sigkill-test-" + std::to_string(::getpid());
  const std::string runs = dir.file("runs");
  std::vector<std::string> args = {KERNLENS_BIN, "profile", "--ncu", test::kFakeNcu, "--discovery", "ncu",
                                   "--clock-control", "none", "-o", runs, "--run-id", "r1", "--quiet",
                                   "--", "echo", token};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  setenv("FAKE_NCU_MODE", "hang", 1);  // discovery hangs: kernlens is killed while it runs
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, dir.file("out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, dir.file("err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, KERNLENS_BIN, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  unsetenv("FAKE_NCU_MODE");
  const std::string early = "--mode launch";
  auto early_programs = [&] {  // the fake ncu --mode launch holding this test's program
    std::vector<int> found;
    const std::vector<int> launched = processes_running(early);
    for (int p : processes_running(token)) {
      if (std::find(launched.begin(), launched.end(), p) != launched.end()) found.push_back(p);
    }
    return found;
  };
  auto wait_for = [](auto done) {
    for (int i = 0; i < 200 && !done(); ++i) ::usleep(50'000);
    return done();
  };
  EXPECT_TRUE(wait_for([&] { return !early_programs().empty(); })) << "no program was started early";
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(wait_for([&] { return early_programs().empty(); })) << "the early program still waits";
  for (int p : processes_running(token)) ::kill(p, SIGKILL);  // discovery's hanging ncu, not watched
}

// Discovery fails (the program exits 3): the program waiting for its attach is ended too.
TEST(ProfileRun, AFailedDiscoveryEndsTheEarlyProgram) {
  test::TempDir dir;
  auto r = run(options(dir, {"sh", "-c", "exit 3"}));
  EXPECT_EQ(r.result.exit_code, 3) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["options"]["early_start"]["started"], true);
  EXPECT_EQ(manifest["options"]["early_start"]["why_not"], "discovery failed");
  EXPECT_TRUE(processes_running(early_launch_needle(manifest)).empty());
}

// ncu launches only the program's own process: a discovery that saw kernels of two processes
// does not use the early program.
TEST(ProfileRun, EarlyProgramServesOnlyAOneProcessTimeline) {
  model::Profile timeline;
  model::ProcessInfo first, second;
  first.pid = 10;
  second.pid = 11;
  const std::uint32_t a = timeline.intern_process(first);
  const std::uint32_t b = timeline.intern_process(second);
  model::Launch launch;
  launch.process = a;
  timeline.launches.push_back(launch);
  EXPECT_EQ(early_program_unusable(timeline), "");
  launch.process = 0;  // unknown: no evidence of a second process
  timeline.launches.push_back(launch);
  EXPECT_EQ(early_program_unusable(timeline), "");
  launch.process = b;
  timeline.launches.push_back(launch);
  EXPECT_EQ(early_program_unusable(timeline), "discovery saw kernels of 2 processes: ncu launched only the program's own");
}

TEST(ProfileRun, AFailingProgramFailsTheRunWithExitCode3) {
  test::TempDir dir;
  auto r = run(options(dir, {"false"}));
  EXPECT_EQ(r.result.exit_code, 3);
  EXPECT_NE(r.err.find("kernlens: error: discovery (ncu): ncu in timing mode: exit code 1"), std::string::npos) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["status"], "failed");
  EXPECT_EQ(manifest["runs"][0]["exit_code"], 1);
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs") + "/r1/analysis.json"));
}

// Issue 23: ncu exits 0 having profiled nothing. kernlens says so, quotes ncu's own lines and
// the kernels it listed, and names the usual causes.
TEST(ProfileRun, NoKernelProfiledIsAnErrorThoughNcuExitsZero) {
  test::TempDir dir;
  auto r = run(options(dir, {"true"}), "no-kernels");
  EXPECT_EQ(r.result.exit_code, 3);
  EXPECT_NE(r.err.find("discovery (ncu): ncu profiled no kernels (it exits 0 all the same); ncu said:"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\n    ==WARNING== No kernels were profiled."), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\n    ==PROF== Connected to process"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Available Kernels\" list): 1. reduce_kernel  2. vectorized_elementwise_kernel"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("usual causes:\n  - the --nvtx-include/--nvtx-range filter matches no range"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("a process ncu did not follow"), std::string::npos) << r.err;
}

// What the H100 showed: filters that match nothing still exit 0. The run keeps the discovery
// analysis but fails.
TEST(ProfileRun, ADeepPassThatMeasuresNothingFailsTheRun) {
  test::TempDir dir;
  auto r = run(options(dir, {"true"}), "deep-no-kernels");
  EXPECT_EQ(r.result.exit_code, 3);
  EXPECT_NE(r.err.find("the deep pass measured no kernel: deep 2/2: ncu profiled no kernels"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("    ==WARNING== No kernels were profiled."), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the launch numbers chosen from discovery are past the end of this run"), std::string::npos)
      << r.err;
  // Issue 24: the progress line does not call a pass that profiled nothing "done".
  EXPECT_NE(r.err.find("ncu: 0/34 kernels"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(nothing profiled)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("(done)"), std::string::npos) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["status"], "failed");
  EXPECT_TRUE(std::filesystem::exists(dir.file("runs") + "/r1/analysis.json"));
}

// Issue 23: ncu exits 0 with neither a report nor "No kernels were profiled". kernlens used to
// export the missing report and then call its own export "unrecognised format".
TEST(ProfileRun, ADeepRunThatWritesNoReportIsNotExported) {
  test::TempDir dir;
  auto r = run(options(dir, {"true"}), "deep-no-report");
  EXPECT_EQ(r.result.exit_code, 3);
  const auto said = r.err.find("deep 1/2: ncu profiled no kernels (it exits 0 all the same); ncu said:\n");
  ASSERT_NE(said, std::string::npos) << r.err;
  EXPECT_LT(r.err.find("    ==PROF== Disconnected from process", said), r.err.find("usual causes", said)) << r.err;
  EXPECT_EQ(r.err.find("unrecognised format"), std::string::npos) << r.err;
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  for (const auto& run_record : manifest["runs"]) {
    EXPECT_EQ(run_record["step"].get<std::string>().find("export raw"), std::string::npos) << run_record["step"];
  }
}

TEST(ProfileRun, TimeoutStopsAHangingProfilerAndTheManifestSaysSo) {
  test::TempDir dir;
  auto o = options(dir, {"true"});
  o.timeout_s = 0.5;
  auto r = run(o, "hang");
  EXPECT_EQ(r.result.exit_code, 3);
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["status"], "failed");
  EXPECT_EQ(manifest["runs"][0]["timed_out"], true);
}

// Ctrl-C while ncu runs: forwarded to it, the run ends, and the manifest says interrupted.
TEST(ProfileRun, CtrlCEndsTheRunAsInterrupted) {
  test::TempDir dir;
  std::thread ctrl_c([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));  // the fake ncu is sleeping
    kill(getpid(), SIGINT);
  });
  auto r = run(options(dir, {"true"}), "hang");
  ctrl_c.join();
  EXPECT_EQ(r.result.exit_code, 3);
  auto manifest = read_json(dir.file("runs") + "/r1/manifest.json");
  EXPECT_EQ(manifest["status"], "interrupted");
  EXPECT_EQ(manifest["runs"].back()["interrupted"], true);
}

TEST(ProfileRun, AProfilerThatCrashesIsReported) {
  test::TempDir dir;
  auto r = run(options(dir, {"true"}), "crash");
  EXPECT_EQ(r.result.exit_code, 3);
  EXPECT_NE(r.err.find("signal 11"), std::string::npos) << r.err;
}

TEST(ProfileRun, MissingNcuAndExistingRunDirectoryAreUsageErrors) {
  test::TempDir dir;
  auto o = options(dir, {"true"});
  o.ncu_path = dir.file("no-such-ncu");
  auto r = run(o);
  EXPECT_EQ(r.result.exit_code, 2);
  EXPECT_NE(r.err.find("give its path with --ncu"), std::string::npos) << r.err;
  std::filesystem::create_directories(dir.file("runs") + "/r1");
  auto again = run(options(dir, {"true"}));
  EXPECT_EQ(again.result.exit_code, 2);
  EXPECT_NE(again.err.find("exists already"), std::string::npos) << again.err;
}

TEST(ProfileRun, NvtxPathsBecomeNcuExpressions) {
  EXPECT_EQ(*nvtx_include_expression("prefill"), "prefill/");
  EXPECT_EQ(*nvtx_include_expression("decode/layer_0"), "decode/layer_0");
  EXPECT_EQ(*nvtx_include_expression("llm@decode/layer_0"), "llm@decode/layer_0");
  // '\' makes '@' and '/' part of a name; ncu's own escaping is applied to what results.
  EXPECT_EQ(*nvtx_include_expression("step 1\\/2"), "step 1\\/2/");
  EXPECT_EQ(*nvtx_include_expression("a\\@b"), "a\\@b/");
  EXPECT_FALSE(nvtx_include_expression("decode//x").ok());
  // ncu's own spelling, as its documentation and the LLM profiling guides write it: the
  // trailing '/' marks a push/pop range (it used to be refused as "an empty range name").
  EXPECT_EQ(*nvtx_include_expression("LLM@prefill/"), "LLM@prefill/");
  EXPECT_EQ(*nvtx_include_expression("prefill/"), "prefill/");
  EXPECT_EQ(*nvtx_include_expression("decode/layer_0/"), "decode/layer_0");
  EXPECT_FALSE(nvtx_include_expression("/").ok());
  EXPECT_FALSE(nvtx_include_expression("LLM@/").ok());
  EXPECT_EQ(*nvtx_range_expression("llm@warmup"), "llm@warmup");
  EXPECT_FALSE(nvtx_range_expression("llm@").ok());
}

TEST(ProfileRun, LauncherRankFromTheUsualVariables) {
  auto rank = [](std::vector<std::string> env) {
    std::vector<char*> list;
    for (auto& e : env) list.push_back(e.data());
    list.push_back(nullptr);
    return launcher_rank(list.data());
  };
  EXPECT_EQ(rank({"RANK=3", "LOCAL_RANK=1"}), 3);
  EXPECT_EQ(rank({"LOCAL_RANK=1", "OMPI_COMM_WORLD_RANK=5"}), 5);
  EXPECT_EQ(rank({"SLURM_PROCID=7"}), 7);
  EXPECT_EQ(rank({"PMI_RANK=2"}), 2);
  EXPECT_EQ(rank({"RANKS=9", "HOME=/"}), std::nullopt);
  EXPECT_EQ(rank({"RANK=x"}), std::nullopt);
}

}  // namespace
}  // namespace kernlens::profile

namespace kernlens::profile {
namespace {

using test::options;
using test::run;
using test::without_environment_line;
using test::kFakeNcu;

TEST(ProfileRun, TracerDryRunPrintsTheEnvironmentTheProgramRunsWith) {
  test::TempDir dir;
  dir.write("libkernlens_tracer.so", "not a real library: the dry run only names it");
  auto o = options(dir, {"python3", "run.py"});
  o.discovery = rundir::DiscoveryMethod::kTracer;
  o.tracer_path = dir.file("libkernlens_tracer.so");
  o.dry_run = true;
  auto r = run(o);
  EXPECT_EQ(r.result.exit_code, 0) << r.err;
  const std::string runs = dir.file("runs") + "/r1";
  const std::string expected_head =
      "# kernlens profile --dry-run: the commands a run would use; nothing is run\n"
      "# ncu: " + kFakeNcu + " (2025.3.1.0)\n"
      "# tracer: " + o.tracer_path + " (" KERNLENS_VERSION ")\n"
      "# run directory: " + runs + "\n"
      "# discovery: tracer (found)\n"
      "env CUDA_INJECTION64_PATH=" + o.tracer_path + " NVTX_INJECTION64_PATH=" + o.tracer_path + " "
      "KERNLENS_TRACE_DIR=" + runs + "/discovery python3 run.py\n"
      "# deep pass";
  EXPECT_NE(r.out.find("# environment: {"), std::string::npos) << r.out;
  EXPECT_EQ(without_environment_line(r.out).substr(0, expected_head.size()), expected_head);
}

TEST(ProfileRun, TracerDiscoveryWithoutTheLibraryIsAUsageError) {
  test::TempDir dir;
  auto o = options(dir, {"python3", "run.py"});
  o.discovery = rundir::DiscoveryMethod::kTracer;
  o.tracer_path = dir.file("missing.so");
  auto r = run(o);
  EXPECT_EQ(r.result.exit_code, 2);
  EXPECT_NE(r.err.find("--discovery tracer: the kernlens tracer (libkernlens_tracer.so) was not found"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace kernlens::profile

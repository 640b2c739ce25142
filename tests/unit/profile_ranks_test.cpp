// `kernlens profile` under a launcher (issues 24 and 17), without a GPU: the documented command
// line `torchrun --nproc-per-node 2 --no-python kernlens profile --ranks 0 -- PROGRAM`, with a
// fake torchrun (tests/fixtures/fake_tools/fake_torchrun.sh: the variables torchrun gives its
// workers), the fake ncu, and a fake tensor-parallel program (rank_program.sh) whose every run
// meets the other ranks in a "collective" keyed as torch's store is. Lockstep (every rank runs
// its program the same number of times), a rank that dies, a rank that hangs; the launcher's
// variables; the session's files; communication kernels left out of the selection.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/profile/comm_kernels.h"
#include "kernlens/profile/process.h"
#include "kernlens/profile/progress.h"
#include "kernlens/profile/rank_lockstep.h"
#include "kernlens/profile/rank_sync.h"
#include "kernlens/profile/selection.h"
#include "profile_test_util.h"

namespace kernlens::profile {
namespace {

using test::read_json;

const std::string kFakeTorchrun = test::fixture("fake_tools/fake_torchrun.sh");
const std::string kRankProgram = test::fixture("fake_tools/rank_program.sh");

std::vector<std::string> lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

struct Job {
  CapturedOutput captured;
  double wall_s = 0;
  std::string err(int rank) const { return test::file_text(logs + "/rank-" + std::to_string(rank) + ".err"); }
  std::string out(int rank) const { return test::file_text(logs + "/rank-" + std::to_string(rank) + ".out"); }
  std::string logs;
};

// The documented command line, with the fake torchrun, ncu and program; `env` for the program
// (RANK_DIES, RANK_HANGS).
Job run_job(const test::TempDir& dir, std::vector<std::string> kernlens_options,
            const std::vector<std::pair<std::string, std::string>>& env = {}) {
  std::filesystem::create_directories(dir.file("logs"));
  std::filesystem::create_directories(dir.file("program"));
  setenv("FAKE_TORCHRUN_LOGS", dir.file("logs").c_str(), 1);
  setenv("RANK_DIR", dir.file("program").c_str(), 1);
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
  std::vector<std::string> argv = {kFakeTorchrun, "--nproc-per-node", "2", "--no-python", KERNLENS_BIN, "profile"};
  argv.insert(argv.end(), kernlens_options.begin(), kernlens_options.end());
  for (const std::string& o : {std::string("--discovery"), std::string("ncu"), std::string("--ncu"), test::kFakeNcu,
                               std::string("--out"), dir.file("runs"), std::string("--run-id"), std::string("job"),
                               std::string("--"), std::string("sh"), kRankProgram}) {
    argv.push_back(o);
  }
  const auto started = std::chrono::steady_clock::now();
  auto captured = run_and_capture(argv, 120'000'000'000);
  Job job;
  job.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_TRUE(captured.ok()) << captured.error().to_string();
  if (captured) job.captured = *captured;
  job.logs = dir.file("logs");
  for (const auto& [name, value] : env) unsetenv(name.c_str());
  unsetenv("FAKE_TORCHRUN_LOGS");
  unsetenv("RANK_DIR");
  return job;
}

// Every program run of a rank, as its log says: "run ATTEMPT".
std::vector<std::string> program_runs(const test::TempDir& dir, int rank) {
  return lines(dir.file("program") + "/rank-" + std::to_string(rank) + ".log");
}

const std::vector<std::string> kThreeRuns = {"run 0", "run 1000", "run 2000"};

TEST(ProfileRanks, OnlyRankZeroProfiledBothRanksRunTheirProgramInStep) {
  test::TempDir dir;
  Job job = run_job(dir, {"--ranks", "0"});
  ASSERT_EQ(job.captured.result.exit_code, 0) << job.err(0) << job.err(1);
  // Discovery and the deep pass's 2 ncu runs on rank 0; rank 1 ran its program as many times,
  // untouched, each run with the same fresh key space in the launcher's store as rank 0's.
  EXPECT_EQ(program_runs(dir, 0), kThreeRuns);
  EXPECT_EQ(program_runs(dir, 1), kThreeRuns);
  // Each deep run has a store of its own, on a port rank 0 chose, never the launcher's store
  // again (torch 2.11 read a stale NCCL id from it on two H100s): the same for both ranks.
  const auto stores = lines(dir.file("program") + "/store-0.log");
  EXPECT_EQ(lines(dir.file("program") + "/store-1.log"), stores);
  ASSERT_EQ(stores.size(), 3u);
  EXPECT_TRUE(stores[0].starts_with("True ")) << stores[0];
  EXPECT_TRUE(stores[1].starts_with("False ")) << stores[1];
  EXPECT_TRUE(stores[2].starts_with("False ")) << stores[2];
  EXPECT_NE(stores[1], stores[2]);
  EXPECT_NE(stores[0].substr(5), stores[1].substr(6));
  EXPECT_NE(job.err(1).find("rank 1 is not in --ranks: its program runs untouched"), std::string::npos) << job.err(1);
  EXPECT_NE(job.out(0).find("ncu throughput metrics for 20 of 30 kernels"), std::string::npos) << job.out(0);
  EXPECT_EQ(job.out(1), "");  // the report is the profiled ranks'; rank 1's times are in its analysis.json

  const std::string top = dir.file("runs") + "/job";
  auto job_manifest = read_json(top + "/manifest.json");
  EXPECT_EQ(job_manifest["schema"], "kernlens.ranks/1");
  EXPECT_EQ(job_manifest["status"], "complete");
  EXPECT_EQ(job_manifest["world_size"], 2);
  EXPECT_EQ(job_manifest["profiled_ranks"], nlohmann::json::array({0}));
  EXPECT_EQ(job_manifest["deep_runs"]["runs"], 2);
  EXPECT_EQ(job_manifest["deep_runs"]["store_ports"].size(), 2u);
  ASSERT_EQ(job_manifest["ranks"].size(), 2u);
  EXPECT_EQ(job_manifest["ranks"][0]["deep_ncu_runs"], 2);
  EXPECT_EQ(job_manifest["ranks"][0]["deep_untouched_runs"], 0);
  EXPECT_EQ(job_manifest["ranks"][1]["deep_ncu_runs"], 0);
  EXPECT_EQ(job_manifest["ranks"][1]["deep_untouched_runs"], 2);
  EXPECT_EQ(job_manifest["ranks"][1]["profiled"], false);
  // Each rank's folder is a whole run directory.
  for (int rank : {0, 1}) {
    const std::string rank_dir = top + "/rank-" + std::to_string(rank);
    auto m = read_json(rank_dir + "/manifest.json");
    EXPECT_EQ(m["status"], "complete");
    EXPECT_EQ(m["run_id"], "job-rank-" + std::to_string(rank));
    EXPECT_EQ(m["options"]["rank"]["rank"], rank);
    EXPECT_EQ(m["options"]["rank"]["profiled"], rank == 0);
    EXPECT_TRUE(std::filesystem::exists(rank_dir + "/discovery/timing_raw.csv"));
    EXPECT_TRUE(std::filesystem::exists(rank_dir + "/analysis.json"));
    EXPECT_EQ(std::filesystem::exists(rank_dir + "/deep/deep_1_raw.csv"), rank == 0);
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs") + "/.kernlens-ranks"));  // the session is closed
  // The job's folder is not one profile: analyze says which to give.
  auto analyze = run_and_capture({KERNLENS_BIN, "analyze", top}, 10'000'000'000);
  ASSERT_TRUE(analyze.ok());
  EXPECT_EQ(analyze->result.exit_code, 2);
  EXPECT_NE(analyze->stderr_text.find("a multi-rank run: give one rank's run directory"), std::string::npos)
      << analyze->stderr_text;
  auto rank0 = run_and_capture({KERNLENS_BIN, "analyze", top + "/rank-0"}, 10'000'000'000);
  ASSERT_TRUE(rank0.ok());
  EXPECT_EQ(rank0->result.exit_code, 0) << rank0->stderr_text;
}

TEST(ProfileRanks, AllRanksProfiled) {
  test::TempDir dir;
  Job job = run_job(dir, {"--ranks", "all"});
  ASSERT_EQ(job.captured.result.exit_code, 0) << job.err(0) << job.err(1);
  EXPECT_EQ(program_runs(dir, 0), kThreeRuns);
  EXPECT_EQ(program_runs(dir, 1), kThreeRuns);
  auto job_manifest = read_json(dir.file("runs") + "/job/manifest.json");
  EXPECT_EQ(job_manifest["profiled_ranks"], nlohmann::json::array({0, 1}));
  for (int rank : {0, 1}) {
    EXPECT_EQ(job_manifest["ranks"][rank]["deep_ncu_runs"], 2);
    EXPECT_NE(job.err(rank).find("ncu: 34/34 kernels"), std::string::npos) << job.err(rank);
  }
}

// Rank 1 dies (SIGKILL) at the start of its second program run; rank 0's program waits in its
// collective for it. Rank 0 stops its program at once and names rank 1, instead of waiting for
// the collective's own timeout (30 s here, 10 min in torch).
TEST(ProfileRanks, ARankWhosePartnerDiedStopsAtOnceWithAClearError) {
  test::TempDir dir;
  Job job = run_job(dir, {"--ranks", "0"}, {{"RANK_DIES", "1:2"}});
  EXPECT_NE(job.captured.result.exit_code, 0);
  EXPECT_LT(job.wall_s, 20.0);
  EXPECT_NE(job.err(0).find("kernlens: error: deep 1/2: stopped: rank 1 (pid "), std::string::npos) << job.err(0);
  EXPECT_NE(job.err(0).find(") died before deep run 2"), std::string::npos) << job.err(0);
  auto rank0 = read_json(dir.file("runs") + "/job/rank-0/manifest.json");
  EXPECT_EQ(rank0["status"], "failed");
  EXPECT_NE(rank0["status_reason"].get<std::string>().find("rank 1 (pid"), std::string::npos);
  auto job_manifest = read_json(dir.file("runs") + "/job/manifest.json");
  EXPECT_EQ(job_manifest["status"], "failed");
  EXPECT_EQ(job_manifest["ranks"][0]["exit_code"], 3);
  EXPECT_NE(job_manifest["ranks"][1]["lost"].get<std::string>().find("died before the end of its run"),
            std::string::npos);
}

// Rank 0's program hangs in its second run: the deep-run timeout ends it, and rank 1 (its
// program waiting in the collective) stops too, at its own timeout or when rank 0 says it
// stopped, whichever comes first (the same moment here).
TEST(ProfileRanks, ADeepRunPastItsTimeoutStopsEveryRank) {
  test::TempDir dir;
  Job job = run_job(dir, {"--ranks", "0", "--deep-timeout", "2"}, {{"RANK_HANGS", "0:2"}});
  EXPECT_NE(job.captured.result.exit_code, 0);
  EXPECT_LT(job.wall_s, 25.0);
  EXPECT_NE(job.err(0).find("timed out after 2."), std::string::npos) << job.err(0);
  EXPECT_NE(job.err(0).find("that is the deep-run timeout (--deep-timeout)"), std::string::npos) << job.err(0);
  EXPECT_NE(job.err(1).find("kernlens: error: program run 1/2"), std::string::npos) << job.err(1);
  auto job_manifest = read_json(dir.file("runs") + "/job/manifest.json");
  EXPECT_EQ(job_manifest["ranks"][0]["status"], "failed");
  EXPECT_EQ(job_manifest["ranks"][1]["status"], "failed");
  EXPECT_EQ(job_manifest["ranks"][1]["exit_code"], 3);
}

TEST(ProfileRanks, RanksTheJobDoesNotHaveAreAUsageError) {
  test::TempDir dir;
  Job job = run_job(dir, {"--ranks", "2"});
  EXPECT_EQ(job.captured.result.exit_code, 2);
  EXPECT_NE(job.err(0).find("--ranks 2: the job has ranks 0 to 1"), std::string::npos) << job.err(0);
}

// torchrun without --no-python runs its first argument as a Python script (issue 24's
// "SyntaxError: source code cannot contain null bytes"); the fake refuses the same way, and
// `kernlens profile --help` shows the form that works.
TEST(ProfileRanks, HelpShowsTheTorchrunCommandThatWorks) {
  auto help = run_and_capture({KERNLENS_BIN, "profile", "--help"}, 10'000'000'000);
  ASSERT_TRUE(help.ok());
  EXPECT_NE(help->stdout_text.find("torchrun --nproc-per-node 2 --no-python kernlens profile --ranks 0 -- python3 "
                                   "train.py"),
            std::string::npos)
      << help->stdout_text;
  auto without = run_and_capture({kFakeTorchrun, "--nproc-per-node", "2", KERNLENS_BIN, "profile", "--", "true"},
                                 10'000'000'000);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->result.exit_code, 2);
}

// --- the launcher's variables and the session -----------------------------------------------

Result<std::optional<LauncherInfo>> info_of(std::vector<std::string> env) {
  std::vector<char*> list;
  for (auto& e : env) list.push_back(e.data());
  list.push_back(nullptr);
  return launcher_info(list.data());
}

TEST(LauncherInfo, EachLaunchersVariables) {
  auto torchrun = info_of({"RANK=1", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500",
                           "TORCHELASTIC_RUN_ID=none", "TORCHELASTIC_RESTART_COUNT=0", "LOCAL_RANK=1"});
  ASSERT_TRUE(torchrun.ok() && torchrun->has_value());
  EXPECT_EQ((*torchrun)->rank, 1);
  EXPECT_EQ((*torchrun)->world_size, 2);
  EXPECT_EQ((*torchrun)->launcher, "torchrun");
  EXPECT_EQ((*torchrun)->job, "torchrun-none-127.0.0.1-29500-0");
  auto mpi = info_of({"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4", "PMIX_NAMESPACE=prterun-host-1234@1"});
  ASSERT_TRUE(mpi.ok() && mpi->has_value());
  EXPECT_EQ((*mpi)->rank, 3);
  EXPECT_EQ((*mpi)->job, "mpirun-prterun-host-1234_1");
  auto slurm = info_of({"SLURM_PROCID=0", "SLURM_NTASKS=8", "SLURM_JOB_ID=77", "SLURM_STEP_ID=2"});
  ASSERT_TRUE(slurm.ok() && slurm->has_value());
  EXPECT_EQ((*slurm)->launcher, "srun");
  EXPECT_EQ((*slurm)->job, "srun-77-2");
  auto none = info_of({"PATH=/usr/bin"});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(LauncherInfo, BadValuesAreErrors) {
  EXPECT_FALSE(info_of({"RANK=x", "WORLD_SIZE=2"}).ok());     // not a number
  EXPECT_FALSE(info_of({"RANK=2", "WORLD_SIZE=2"}).ok());     // outside the world
  EXPECT_NE(info_of({"RANK=2", "WORLD_SIZE=2"}).error().message.find("WORLD_SIZE=2 with RANK=2: not a world size"),
            std::string::npos);
  // An sbatch script's one process: SLURM_PROCID=0 without SLURM_NTASKS is a world of one (the
  // sweep's Slurm tasks run `kernlens profile` so).
  auto batch = info_of({"SLURM_PROCID=0", "SLURM_JOB_ID=7"});
  ASSERT_TRUE(batch.ok() && batch->has_value());
  EXPECT_EQ((*batch)->world_size, 1);
}

// A session an earlier job of the same identity left, whose rank 0 is gone, is not joined: rank
// 1 waits for this job's rank 0, and gives up at the deadline saying what it waited for.
TEST(RankSync, AStaleSessionIsNotJoined) {
  test::TempDir dir;
  LauncherInfo one{1, 2, "torchrun", "job"};
  std::filesystem::create_directories(dir.file("out/.kernlens-ranks/job"));
  // pid 2^22 + 1 is above Linux's pid_max limit: no process has it.
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  dir.write("out/.kernlens-ranks/job/leader.json",
            nlohmann::json({{"pid", 4194305}, {"host", host}, {"run_id", "old"}, {"world_size", 2}}).dump());
  auto joined = RankSync::join(dir.file("out"), one, "", 300'000'000, {});
  ASSERT_FALSE(joined.ok());
  EXPECT_NE(joined.error().message.find("timed out after 0 s waiting for rank 0 to open the session"),
            std::string::npos)
      << joined.error().message;
  // This job's rank 0 replaces it; rank 1 then joins and takes its run id.
  LauncherInfo zero{0, 2, "torchrun", "job"};
  auto leader = RankSync::join(dir.file("out"), zero, "new", 0, {});
  ASSERT_TRUE(leader.ok()) << leader.error().to_string();
  auto follower = RankSync::join(dir.file("out"), one, "", 1'000'000'000, {});
  ASSERT_TRUE(follower.ok()) << follower.error().to_string();
  EXPECT_EQ(follower->run_id(), "new");
  // Words go both ways; a rank that stops makes the others' waits fail with its reason.
  ASSERT_TRUE(leader->say("selected", {{"n", 0}}).ok());
  ASSERT_TRUE(follower->say("selected", {{"n", 1}}).ok());
  auto all = leader->gather("selected", 1'000'000'000);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  EXPECT_EQ((*all)[1]["n"], 1);
  follower->abort("discovery failed");
  auto plan = leader->gather("plan", 1'000'000'000);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().message, "rank 1 stopped: discovery failed");
  EXPECT_EQ(leader->partner_lost("run-1"), "rank 1 stopped: discovery failed");
  auto late = follower->hear_leader("run-1", 100'000'000);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().message, "timed out after 0 s waiting for rank 0 (for deep run 1)");
  leader->close();
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/.kernlens-ranks")));
}

TEST(Lockstep, DefaultRunTimeoutFollowsDiscoveryAndKernels) {
  constexpr std::int64_t s = 1'000'000'000;
  EXPECT_EQ(default_run_timeout_ns(4 * s, 0), 60 * s);        // at least a minute
  EXPECT_EQ(default_run_timeout_ns(30 * s, 0), 150 * s);      // 5x discovery
  EXPECT_EQ(default_run_timeout_ns(30 * s, 4), 190 * s);      // + 10 s per kernel profiled
}

// --- communication kernels ------------------------------------------------------------------

// A tensor-parallel step's kernels (names from the H200 capture of issue 24): NCCL's
// all-reduce is the largest, but the deep pass never replays it alone.
TEST(CommKernels, LeftOutOfTheSelectionAndCoverageIsOfComputeTime) {
  model::Profile p;
  auto add = [&](const char* name, double ns, int n) {
    for (int i = 0; i < n; ++i) {
      model::Launch l;
      l.name = p.names.intern(name);
      l.id = static_cast<std::int64_t>(p.launches.size());
      l.start_ns = static_cast<std::int64_t>(p.launches.size()) * 100000;
      l.duration_ns = ns;
      p.launches.push_back(l);
    }
  };
  add("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 50000, 4);  // 200 us
  add("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_NNT", 20000, 4);    // 80 us
  add("nvshmemi_transfer_kernel", 10000, 1);                  // 10 us
  add("flash_fwd_kernel", 10000, 2);                          // 20 us
  const auto& classifier = test::builtin_classifier();
  auto agg = analysis::aggregate(p, classifier);
  auto split = split_communication(p, agg);
  EXPECT_EQ(split.comm_names,
            (std::vector<std::string>{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "nvshmemi_transfer_kernel"}));
  EXPECT_DOUBLE_EQ(split.comm_ns, 210000);
  EXPECT_DOUBLE_EQ(*split.compute.totals.kernel_time_ns, 100000);
  ASSERT_EQ(split.compute.kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(*split.compute.kernels[0].share, 0.8);
  SelectionOptions o;
  o.coverage = 0.9;
  auto sel = select_kernels(p, split.compute, o);
  ASSERT_TRUE(sel.ok()) << sel.error().to_string();
  ASSERT_EQ(sel->picks.size(), 2u);  // 80% of compute time is short of 90%: both compute kernels
  for (const auto& pick : sel->picks) EXPECT_EQ(pick.shown_name.find("nccl"), std::string::npos);
  EXPECT_DOUBLE_EQ(sel->total_kernel_ns, 100000);
  EXPECT_DOUBLE_EQ(sel->covered_ns, 100000);
  for (const auto& inv : sel->invocations) EXPECT_EQ(inv.kernel_name.find("nccl"), std::string::npos);
}

// Issue 24's "ncu: 0/4 kernels ... (nothing profiled)": a pass that profiled nothing never says
// "(done)", whether it ended early or ran to its end, or planned nothing.
TEST(DeepProgressRanks, NothingProfiledIsNeverDone) {
  DeepProgress stopped(3, /*tty=*/false);
  EXPECT_EQ(stopped.finish(116, /*ended_early=*/true), "ncu: 0/3 kernels, 1:56 (nothing profiled)\n");
  DeepProgress empty(0, /*tty=*/true);
  EXPECT_EQ(empty.finish(1), "\rncu: 0/0 kernels, 1.0s (nothing profiled)\n");
  DeepProgress started(1, /*tty=*/false);
  NcuEvent unfinished{NcuEventKind::kProfiling, "k", 1, std::nullopt, {}, {}};  // no passes: not profiled yet
  started.on_event(unfinished, 1);
  EXPECT_EQ(started.finish(2), "ncu: 0/1 kernels, 2.0s (nothing profiled)\n");
}

}  // namespace
}  // namespace kernlens::profile

// `kernlens profile` under a launcher (torchrun, mpirun, srun on one node): every rank runs its
// own kernlens, and they keep in step (rank_sync.h carries their words):
//
//   1. rank 0 opens OUTPUT/RUN_ID/ and the session; every rank writes its own run directory
//      OUTPUT/RUN_ID/rank-N/ (manifest.json, discovery/, deep/, analysis.json), a whole run
//      directory that `kernlens analyze` reads alone.
//   2. Every rank runs discovery (its program runs once, as the job does).
//   3. Each rank chooses its own kernels from its own discovery (ranks of a pipeline run other
//      kernels); ranks not in --ranks choose none. Rank 0 takes every rank's number of ncu
//      runs and discovery time and decides the plan every rank follows: how many deep-pass
//      program runs (the most any rank needs) and each run's timeout.
//   4. Deep run k: every rank waits for the others to be ready, then runs its program, under
//      ncu when it has a k-th ncu run, untouched otherwise, so the profiled ranks'
//      collectives complete. A run must not read what an earlier run of the same job left in
//      the launcher's store: on two H100s (torch 2.11, NCCL 2.28), rank 1's second run read
//      rank 0's NCCL id of the first run while rank 0 started slowly under ncu, and hung
//      (scripts/device/ncu_nccl_probe.sh), though TORCHELASTIC_RESTART_COUNT, which torch's
//      env:// rendezvous says keys the store ("/worker/attempt_N"), was new. So under torchrun's
//      agent store each deep run gets a store of its own: TORCHELASTIC_USE_AGENT_STORE=False
//      and a MASTER_PORT rank 0 chose (its program hosts the store there, as torch does
//      without an agent), and TORCHELASTIC_RESTART_COUNT = base + 1000·(k + 1) as before.
//   5. A rank that fails says so; the others stop their program and end with exit 3. A rank
//      that died (its pid gone) or is late past the timeout is named in the error.
//   6. Rank 0 waits for every rank's end and writes OUTPUT/RUN_ID/manifest.json: which rank ran
//      what, and how each ended.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/profile/rank_sync.h"
#include "kernlens/rundir/layout.h"
#include "kernlens/rundir/manifest.h"
#include "kernlens/profile/selection.h"

namespace kernlens::profile {

struct ProfileRunOptions;

// Every rank's deep pass, as rank 0 decided it.
struct RankPlan {
  std::size_t runs = 0;                     // program runs each rank makes
  std::vector<std::int64_t> run_timeout_ns;  // per run
  std::vector<int> store_ports;             // per run, under torchrun's agent store: MASTER_PORT
};

// The default timeout of one deep-pass run: max(60 s, 5 x the slowest rank's discovery), plus
// 10 s for each kernel the run profiles on the rank that profiles the most in it (ncu's
// replay of a kernel takes about 0.5-1 s at the roofline tier, BENCHMARKS.md).
std::int64_t default_run_timeout_ns(std::int64_t slowest_discovery_ns, std::uint64_t most_kernels);

class Lockstep {
 public:
  // `top`: OUTPUT/RUN_ID; `profiled`: this rank is in --ranks; `deep_timeout_s` > 0 replaces
  // the default timeout of every deep run.
  Lockstep(RankSync sync, std::filesystem::path top, bool profiled, double deep_timeout_s);

  bool profiled() const { return profiled_; }
  const RankSync& sync() const { return sync_; }
  const RankPlan& plan() const { return plan_; }

  // After this rank's selection (no invocations on a rank that is not profiled): says its ncu
  // runs and discovery time, and takes the plan rank 0 makes of every rank's.
  Result<RankPlan> agree(const Selection& selection, std::int64_t discovery_wall_ns);
  // Before deep run `k` (0-based): every rank is ready for it. Error: one stopped, died or is late.
  Status before_run(std::size_t k) const;
  // While this rank's deep run `k` runs: why it must stop (a partner stopped or died), or empty.
  std::string partner_lost(std::size_t k) const;
  // Variables for deep run `k` (0-based) of the program.
  std::vector<std::string> run_environment(std::size_t k) const;
  // At the end of this rank's run: says how it ended (a failure first makes the others stop).
  // On rank 0, waits for every rank's end and writes the job's manifest at `top`.
  void finish(const rundir::Manifest& manifest, int exit_code, const std::vector<int>& profiled_ranks);

 private:
  RankSync sync_;
  std::filesystem::path top_;
  bool profiled_;
  double deep_timeout_s_;
  std::int64_t discovery_wall_ns_ = 0;
  RankPlan plan_;
  std::optional<long long> restart_count_;  // TORCHELASTIC_RESTART_COUNT, when set
  bool agent_store_ = false;                 // TORCHELASTIC_USE_AGENT_STORE=True
};

// Error: a rank of --ranks that the job does not have.
Status check_ranks(const ProfileRunOptions& opt, const LauncherInfo& me);

// Under a launcher: rank 0 creates OUTPUT/RUN_ID/ (a run never overwrites another; -f replaces
// a kernlens run directory), every rank joins the session and creates OUTPUT/RUN_ID/rank-N/.
// `profiled_ranks` empty: every rank. The lockstep of this rank, its run directory in `dir`.
struct RankedRun {
  std::optional<Lockstep> lockstep;
  rundir::RunDir dir;
};
Result<RankedRun> open_ranked_run(const ProfileRunOptions& opt, const LauncherInfo& me, const std::string& run_id,
                                  std::function<bool()> stop);

}  // namespace kernlens::profile

// The ranks of one launcher job (torchrun, mpirun, srun) kept in step, each running its own
// `kernlens profile`. They share nothing but the output directory, so they talk through small
// JSON files in a session folder under it:
//
//   OUTPUT/.kernlens-ranks/<job>/leader.json         rank 0: its pid and host, the run id
//   OUTPUT/.kernlens-ranks/<job>/<step>.rank-N.json  what rank N says at a step ("hello",
//                                                    "selected", "run-2", "finished")
//   OUTPUT/.kernlens-ranks/<job>/abort.rank-N.json   rank N stopped, and why
//
// <job> is the launcher's identity of the job (torchrun's run id, master address, port and
// restart count; Open MPI's PMIx namespace; Slurm's job and step), the same on every rank.
// Every file is written whole (write to a temporary, rename). A rank waits for the others by
// looking for their files every 50 ms, and gives up with an error that names the rank when one
// stopped (its abort file), when one on this host is no longer alive (its pid, from its hello),
// or when the deadline passes. Files, not a socket: every launcher gives the ranks a shared
// directory for free, nothing has to listen on a port, a rank that died leaves its last word
// behind, and the session can be read after the fact. (The program's own TCPStore is a
// Python/C++ API inside the program, out of kernlens's reach.) Across nodes this needs OUTPUT
// on a file system every node sees; the dead-rank check by pid then covers this node's ranks
// only, the deadline the others.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernlens/common/error.h"

namespace kernlens::profile {

struct LauncherInfo {
  int rank = 0;
  int world_size = 1;
  std::string launcher;  // "torchrun", "mpirun", "srun" or "launcher" (a rank variable alone)
  std::string job;       // the job's identity, file-name safe
};

// This process's place in a launcher job: rank and world size from RANK/WORLD_SIZE (torchrun),
// OMPI_COMM_WORLD_RANK/_SIZE (Open MPI), PMI_RANK/PMI_SIZE (MPICH), SLURM_PROCID/SLURM_NTASKS.
// std::nullopt when no rank variable is set; a world of 1 when only the rank is. Error: a value
// that is not a number, or a rank outside the world.
Result<std::optional<LauncherInfo>> launcher_info(char** environ_list);

class RankSync {
 public:
  using Clock = std::chrono::steady_clock;

  // Rank 0 opens the session (replacing what an earlier job of the same identity left) and
  // says `run_id`; the others wait up to `timeout_ns` for a live rank 0 and take its run id.
  // `stop` is asked while waiting (Ctrl-C).
  static Result<RankSync> join(const std::filesystem::path& out, const LauncherInfo& me, const std::string& run_id,
                               std::int64_t timeout_ns, std::function<bool()> stop);

  const std::string& run_id() const { return run_id_; }
  const LauncherInfo& me() const { return me_; }
  bool leader() const { return me_.rank == 0; }
  const std::filesystem::path& session() const { return session_; }

  // Says `body` at `step` (for every rank to read).
  Status say(const std::string& step, const nlohmann::json& body) const;
  // Says that this rank stopped, and why: every rank waiting for it stops too.
  void abort(const std::string& why) const;
  // What every rank said at `step`, by rank (this one's included once said). Error: a rank
  // stopped, died or did not say it before `timeout_ns` (0: no deadline).
  Result<std::vector<nlohmann::json>> gather(const std::string& step, std::int64_t timeout_ns) const;
  // What rank 0 said at `step`, with gather()'s errors.
  Result<nlohmann::json> hear_leader(const std::string& step, std::int64_t timeout_ns) const;
  // What every rank said at `step`, by rank; for a rank that never will (it stopped without
  // saying it, died, or the deadline passed), {"lost": why}.
  std::vector<nlohmann::json> collect(const std::string& step, std::int64_t timeout_ns) const;
  // Why this rank must stop now without waiting: another rank stopped or died before saying
  // `step`; empty when none did.
  std::string partner_lost(const std::string& step) const;
  // Rank 0, when every rank is done: removes the session folder.
  void close() const;

 private:
  std::filesystem::path file(const std::string& step, int rank) const;
  // Why rank `r` will never say `step`, or empty.
  std::string lost(int r, const std::string& step) const;
  Result<std::vector<nlohmann::json>> wait_for(const std::string& step, const std::vector<int>& ranks,
                                               std::int64_t timeout_ns) const;

  std::filesystem::path session_;
  LauncherInfo me_;
  std::string run_id_;
  std::string host_;
  std::function<bool()> stop_;
};

// "rank-3": a rank's folder and file names.
std::string rank_name(int rank);

}  // namespace kernlens::profile

// Where each point of a sweep stands, from its run directory's manifest, the sweep's record of
// submissions (RUN_ROOT/_sweep/submissions.jsonl) and, for points submitted to Slurm, what
// Slurm says of their array tasks.
//
//   done         the run's manifest says complete
//   running      Slurm runs its task, or the manifest says running and nothing says otherwise
//   queued       submitted, waiting for Slurm (or for its turn in a --local run going on now)
//   failed       the manifest says failed or interrupted (its reason), or the task ended
//                without finishing the run (Slurm's state, the log to read)
//   not started  never submitted
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/sweep/plan.h"

namespace kernlens::sweep {

// One submission: a Slurm job array, or a --local run (job "local", with its process).
struct Submission {
  std::string job;
  std::vector<std::pair<std::size_t, std::string>> tasks;  // array task id -> point id
  std::string script;                                     // the sbatch script; empty for local
  std::string host;                                       // local: where it ran
  long pid = 0;                                           // local: the kernlens running it
  bool local() const { return job == "local"; }
};

Status append_submission(const Plan& plan, const Submission& s);
// In the order they were made; none when the file is missing. Errors: a damaged line.
Result<std::vector<Submission>> read_submissions(const Plan& plan);

// Slurm's word for each array task ("123_4" -> "RUNNING", "COMPLETED", "TIMEOUT", ...).
using TaskStates = std::map<std::string, std::string, std::less<>>;

enum class State { kDone, kRunning, kQueued, kFailed, kNotStarted };
std::string_view state_name(State s);

struct PointStatus {
  std::size_t point = 0;  // index into the plan's points
  State state = State::kNotStarted;
  std::string detail;     // the failure's reason, the job, or the run directory
  std::string task;       // "123_4", "local" or empty
};

// `slurm`: the task states Slurm gave, or nullopt when it could not be asked.
std::vector<PointStatus> sweep_status(const Plan& plan, const std::vector<Submission>& submissions,
                                      const std::optional<TaskStates>& slurm);

// The Slurm job ids of `submissions` (for asking Slurm about them).
std::vector<std::string> slurm_jobs(const std::vector<Submission>& submissions);

// What the manifest in `run_dir` says: "complete", "failed", "interrupted", "running" (and
// "damaged" for a file that is not JSON), with its reason; nullopt without a manifest.
struct RunState {
  std::string status, reason;
};
std::optional<RunState> run_state(const std::string& run_dir);
// Whether the manifest says complete (what `sweep ingest` takes).
bool run_complete(const std::string& run_dir);

}  // namespace kernlens::sweep

// Slurm, through its own commands: one sbatch script per submission (a job array, one task
// per point, the task id being the point's index), `sbatch --parsable` to submit it, and
// `squeue` (jobs Slurm still holds) then `sacct` (its accounting, where the cluster keeps it)
// for the state of each task. kernlens schedules nothing itself.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/sweep/plan.h"
#include "kernlens/sweep/status.h"

namespace kernlens::sweep {

// "0-2,5,7-8" for tasks {0,1,2,5,7,8}, then "%N" when at most N may run at once.
std::string array_spec(std::vector<std::size_t> tasks, std::optional<std::int64_t> max_parallel);

// The script for `points` (indexes into the plan): #SBATCH lines from the spec's [slurm], the
// setup lines, then one case per task that runs its point's argv (`argvs[i]` for points[i])
// in the spec's workdir with its env. Errors: an #SBATCH value holding white space or a quote
// (sbatch would split it).
Result<std::string> sbatch_script(const Plan& plan, const std::vector<std::size_t>& points,
                                  const std::vector<std::vector<std::string>>& argvs);

// Submits `script_path` with sbatch; the job id. Errors: sbatch missing or refusing (its message).
Result<std::string> sbatch(const std::string& script_path);

// "JOBID|STATE" lines (squeue -o '%i|%T', sacct -P -o JobID,State) into task states. A
// pending remainder of an array ("123_[4-6%2]") gives each of its tasks; job steps
// ("123_4.batch") and whole jobs without a task are left out; "CANCELLED by 0" is CANCELLED.
TaskStates parse_task_states(std::string_view text);

// What Slurm says of the tasks of `jobs`: squeue first, then sacct for the tasks squeue no
// longer holds. nullopt when neither command could answer (no Slurm here).
std::optional<TaskStates> ask_slurm(const std::vector<std::string>& jobs);

}  // namespace kernlens::sweep

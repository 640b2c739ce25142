// Running a sweep's points: as a Slurm job array, or one after another here (--local), with
// the same layout (plan.h). A submission takes the points that are not done and not queued or
// running; a point's earlier failed run directory is moved aside to failed-N first.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/sweep/plan.h"
#include "kernlens/sweep/status.h"

namespace kernlens::sweep {

// The points (plan indexes) whose state is failed or not started.
std::vector<std::size_t> points_to_run(const std::vector<PointStatus>& statuses);

// Writes the script RUN_ROOT/_sweep/submit-N.sbatch, submits it with sbatch, and records the
// submission. `with_tags`: the points' argv carries their tags (profile_takes_tags).
Result<Submission> submit_to_slurm(const Plan& plan, const std::vector<std::size_t>& points, bool with_tags);

struct LocalResult {
  std::size_t point = 0;
  bool complete = false;
  std::string detail;  // the run directory, or why it failed
  bool interrupted = false;  // Ctrl-C (or SIGTERM): the points after it were not run
  std::int64_t wall_ns = 0;
};

// Runs `points` one after another in the spec's workdir, each one's output to
// RUN_ROOT/POINT/local.stdout.log and local.stderr.log; `on_start` and `on_end` are called
// around each. Stops after a point that was interrupted. Errors: a point that cannot be
// started at all (kernlens not found, a directory that cannot be written).
Result<std::vector<LocalResult>> run_local(const Plan& plan, const std::vector<std::size_t>& points, bool with_tags,
                                           const std::function<void(const Point&)>& on_start,
                                           const std::function<void(const LocalResult&)>& on_end);

}  // namespace kernlens::sweep

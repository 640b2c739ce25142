// What `sweep plan` and `sweep status` print: text for people, JSON for scripts
// ({"schema": "kernlens.sweep-plan/1" | "kernlens.sweep-status/1", ...}).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernlens/sweep/plan.h"
#include "kernlens/sweep/status.h"

namespace kernlens::sweep {

// Every point: its name, run directory, tags, env and the kernlens profile command.
std::string plan_text(const Plan& plan, bool with_tags);
nlohmann::ordered_json plan_json(const Plan& plan, bool with_tags);

// One line of counts, then one line per point with its state and detail. `slurm_silent`:
// points were submitted to Slurm but neither squeue nor sacct answered.
std::string status_text(const Plan& plan, const std::vector<PointStatus>& statuses, bool slurm_silent);
nlohmann::ordered_json status_json(const Plan& plan, const std::vector<PointStatus>& statuses, bool slurm_silent);

}  // namespace kernlens::sweep

// A sweep's points and where each one's files go:
//
//   RUN_ROOT/_sweep/            the sweep's own files: submissions.jsonl, the sbatch scripts,
//                               Slurm's task logs (slurm-JOB_TASK.out)
//   RUN_ROOT/POINT/point.json   the point as submitted: parameters, tags, env, command, argv
//   RUN_ROOT/POINT/run/         its run directory (kernlens profile --out RUN_ROOT/POINT --run-id run)
//   RUN_ROOT/POINT/failed-N/    earlier attempts that failed, moved aside by a resubmission
//   RUN_ROOT/POINT/local.log    what the point printed, when run with --local
//
// Points are the product of the axes in file order, the last one changing fastest; a point's
// index in that order is its Slurm array task id.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernlens/common/error.h"
#include "kernlens/sweep/spec.h"

namespace kernlens::sweep {

using Pairs = std::vector<std::pair<std::string, std::string>>;

struct Point {
  std::size_t index = 0;
  std::string id;          // the point's directory name
  Pairs parameters;        // in the spec's order
  Pairs tags;              // parameters, then [tags], then sweep=NAME and sweep_point=ID
  Pairs env;               // [env], expanded
  std::vector<std::string> command;          // the program and its arguments
  std::vector<std::string> profile_options;  // the spec's `profile`, expanded
  std::string dir;                           // RUN_ROOT/POINT

  std::string run_dir() const;
  std::string point_file() const;
};

struct Plan {
  SweepSpec spec;
  std::string kernlens;  // the program each point runs: the spec's, else `default_kernlens`
  std::vector<Point> points;

  std::string sweep_dir() const;  // RUN_ROOT/_sweep
};

// Expands `spec` into its points. Errors (FILE:LINE): more than 100,000 points, two points
// with the same name, a name that is not a directory name, a batch or tokens tag that is not
// a whole number.
Result<Plan> make_plan(SweepSpec spec, const std::string& default_kernlens);

// kernlens profile's argv for `p`: options, --out, --run-id, the tags when `with_tags`, then
// `--` and the command.
std::vector<std::string> profile_argv(const Plan& plan, const Point& p, bool with_tags);

// `argv` run with the point's [env]: "env NAME=VALUE ... argv" (argv alone without env), as
// the sbatch script and `submit --local --dry-run` write it.
std::vector<std::string> with_env(const Point& p, const std::vector<std::string>& argv);

// Whether `kernlens` (a path or a name on PATH) has `profile --tag`: it records the tags in
// the run's manifest. Without it (or when it cannot be run here) the tags still reach the
// database: `sweep ingest` gives them from point.json.
bool profile_takes_tags(const std::string& kernlens);

// point.json: what `sweep status` and `sweep ingest` read back.
nlohmann::ordered_json point_json(const Plan& plan, const Point& p, const std::vector<std::string>& argv);
// The tags recorded in RUN_ROOT/POINT/point.json. Errors: a missing or damaged file.
Result<Pairs> read_point_tags(const Point& p);

}  // namespace kernlens::sweep

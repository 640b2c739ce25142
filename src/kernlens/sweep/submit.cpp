#include "kernlens/sweep/submit.h"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "kernlens/common/file.h"
#include "kernlens/profile/process.h"
#include "kernlens/sweep/slurm.h"

namespace kernlens::sweep {
namespace fs = std::filesystem;
namespace {

// A new attempt at `p`: the last run directory (a failed one; done points are never
// resubmitted) moved to failed-N, the point's file written afresh.
Status prepare_point(const Plan& plan, const Point& p, const std::vector<std::string>& argv) {
  std::error_code ec;
  fs::create_directories(p.dir, ec);
  if (ec) return make_error(p.dir, 0, "cannot create the point's directory: " + ec.message());
  if (fs::exists(p.run_dir(), ec)) {
    int n = 1;
    while (fs::exists(fs::path(p.dir) / fmt::format("failed-{}", n), ec)) ++n;
    fs::rename(p.run_dir(), fs::path(p.dir) / fmt::format("failed-{}", n), ec);
    if (ec) return make_error(p.run_dir(), 0, "cannot move the failed run aside: " + ec.message());
  }
  return write_file_atomically(p.point_file(), point_json(plan, p, argv).dump(2) + "\n");
}

// Each point prepared; its argv.
Result<std::vector<std::vector<std::string>>> prepare(const Plan& plan, const std::vector<std::size_t>& points,
                                                      bool with_tags) {
  std::vector<std::vector<std::string>> argvs;
  for (std::size_t i : points) {
    argvs.push_back(profile_argv(plan, plan.points[i], with_tags));
    if (Status s = prepare_point(plan, plan.points[i], argvs.back()); !s) return s.error();
  }
  return argvs;
}

std::string script_path(const Plan& plan) {
  auto earlier = read_submissions(plan);
  std::size_t n = earlier ? earlier->size() + 1 : 1;
  fs::path path;
  do {
    path = fs::path(plan.sweep_dir()) / fmt::format("submit-{}.sbatch", n++);
  } while (fs::exists(path));
  return path.string();
}

std::vector<std::pair<std::size_t, std::string>> tasks_of(const Plan& plan, const std::vector<std::size_t>& points) {
  std::vector<std::pair<std::size_t, std::string>> tasks;
  for (std::size_t i : points) tasks.emplace_back(plan.points[i].index, plan.points[i].id);
  return tasks;
}

// Runs the process with the spec's workdir as its working directory (ours for the while:
// points run one at a time), then changes back.
Result<profile::ProcessResult> run_in(const std::string& workdir, const profile::ProcessOptions& options) {
  std::error_code ec;
  const fs::path before = fs::current_path(ec);
  fs::current_path(workdir, ec);
  if (ec) return make_error(workdir, 0, "cannot change into the sweep's workdir: " + ec.message());
  auto result = profile::run_process(options);
  fs::current_path(before, ec);
  return result;
}

LocalResult outcome(const Point& p, const profile::ProcessResult& r) {
  LocalResult out{p.index, run_complete(p.run_dir()), p.run_dir(), r.interrupted, r.wall_ns};
  if (!out.complete) {
    auto state = run_state(p.run_dir());
    std::string why = state && !state->reason.empty() ? state->reason : "kernlens profile: " + r.describe();
    out.detail = fmt::format("{}; see {}", why, (fs::path(p.dir) / "local.stderr.log").string());
  }
  return out;
}

}  // namespace

std::vector<std::size_t> points_to_run(const std::vector<PointStatus>& statuses) {
  std::vector<std::size_t> out;
  for (const auto& s : statuses) {
    if (s.state == State::kFailed || s.state == State::kNotStarted) out.push_back(s.point);
  }
  return out;
}

Result<Submission> submit_to_slurm(const Plan& plan, const std::vector<std::size_t>& points, bool with_tags) {
  auto argvs = prepare(plan, points, with_tags);
  if (!argvs) return argvs.error();
  auto script = sbatch_script(plan, points, *argvs);
  if (!script) return make_error(plan.spec.path, 0, script.error().message);
  std::error_code ec;
  fs::create_directories(plan.sweep_dir(), ec);
  if (ec) return make_error(plan.sweep_dir(), 0, "cannot create the sweep's directory: " + ec.message());
  const std::string path = script_path(plan);
  if (Status s = write_file_atomically(path, *script); !s) return s.error();
  auto job = sbatch(path);
  if (!job) return job.error();
  Submission submission{*job, tasks_of(plan, points), path, "", 0};
  if (Status s = append_submission(plan, submission); !s) return s.error();
  return submission;
}

Result<std::vector<LocalResult>> run_local(const Plan& plan, const std::vector<std::size_t>& points, bool with_tags,
                                           const std::function<void(const Point&)>& on_start,
                                           const std::function<void(const LocalResult&)>& on_end) {
  auto argvs = prepare(plan, points, with_tags);
  if (!argvs) return argvs.error();
  Submission submission{"local", tasks_of(plan, points), "", "", static_cast<long>(::getpid())};
  if (Status s = append_submission(plan, submission); !s) return s.error();
  std::vector<LocalResult> results;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = plan.points[points[i]];
    if (on_start) on_start(p);
    profile::ProcessOptions options;
    options.argv = (*argvs)[i];
    for (const auto& [name, value] : p.env) options.env.push_back(name + "=" + value);
    options.stdout_log_path = (fs::path(p.dir) / "local.stdout.log").string();
    options.stderr_log_path = (fs::path(p.dir) / "local.stderr.log").string();
    auto run = run_in(plan.spec.workdir, options);
    if (!run) return run.error();
    results.push_back(outcome(p, *run));
    if (on_end) on_end(results.back());
    if (results.back().interrupted) break;
  }
  return results;
}

}  // namespace kernlens::sweep

// kernlens sweep plan SPEC [--format text|json]
// kernlens sweep submit SPEC [--local] [--partition P] [--time T] [--gpus N] [--max-parallel N] [--dry-run]
// kernlens sweep status SPEC [--format text|json]
// kernlens sweep ingest SPEC [--db FILE] [--rules FILE]...
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "kernlens/cli/commands.h"
#include "kernlens/common/shell.h"
#include "kernlens/profile/ncu_command.h"
#include "kernlens/store/database.h"
#include "kernlens/sweep/ingest.h"
#include "kernlens/sweep/slurm.h"
#include "kernlens/sweep/submit.h"
#include "kernlens/sweep/summary.h"

namespace kernlens::cli {
namespace {

struct SweepOptions {
  std::string spec, format = "text", db = "kernlens.db";
  bool local = false, dry_run = false;
  std::string partition, time;
  std::optional<std::int64_t> gpus, max_parallel;
  std::vector<std::string> rule_files;
};

// This kernlens, for the points to run when the spec names none.
std::string self_path() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("kernlens") : self.string();
}

std::optional<sweep::Plan> load_plan(const SweepOptions& opt) {
  auto spec = sweep::load_spec(opt.spec);
  if (!spec) {
    bad_input(spec.error());
    return std::nullopt;
  }
  // Flags win over the spec's [slurm].
  if (!opt.partition.empty()) spec->slurm.partition = opt.partition;
  if (!opt.time.empty()) spec->slurm.time = opt.time;
  if (opt.gpus) spec->slurm.gpus = opt.gpus;
  if (opt.max_parallel) spec->slurm.max_parallel = opt.max_parallel;
  auto plan = sweep::make_plan(std::move(spec).value(), self_path());
  if (!plan) {
    bad_input(plan.error());
    return std::nullopt;
  }
  return std::move(plan).value();
}

struct Standing {
  std::vector<sweep::PointStatus> statuses;
  bool slurm_silent = false;  // points went to Slurm, and neither squeue nor sacct answered
};

std::optional<Standing> standing(const sweep::Plan& plan) {
  auto submissions = sweep::read_submissions(plan);
  if (!submissions) {
    bad_input(submissions.error());
    return std::nullopt;
  }
  std::vector<std::string> jobs = sweep::slurm_jobs(*submissions);
  std::optional<sweep::TaskStates> slurm = sweep::ask_slurm(jobs);
  return Standing{sweep::sweep_status(plan, *submissions, slurm), !jobs.empty() && !slurm};
}

int run_plan(const SweepOptions& opt) {
  auto plan = load_plan(opt);
  if (!plan) return kExitBadInput;
  bool tags = sweep::profile_takes_tags(plan->kernlens);
  return write_output("-", opt.format == "json" ? sweep::plan_json(*plan, tags).dump(2) + "\n" : sweep::plan_text(*plan, tags));
}

int run_status(const SweepOptions& opt) {
  auto plan = load_plan(opt);
  if (!plan) return kExitBadInput;
  auto now = standing(*plan);
  if (!now) return kExitBadInput;
  return write_output("-", opt.format == "json" ? sweep::status_json(*plan, now->statuses, now->slurm_silent).dump(2) + "\n"
                                                : sweep::status_text(*plan, now->statuses, now->slurm_silent));
}

int submit_local(const sweep::Plan& plan, const std::vector<std::size_t>& points, bool tags) {
  std::size_t n = 0, failed = 0;
  auto results = sweep::run_local(
      plan, points, tags,
      [&](const sweep::Point& p) { std::fprintf(stderr, "kernlens sweep: [%zu/%zu] %s\n", ++n, points.size(), p.id.c_str()); },
      [&](const sweep::LocalResult& r) {
        failed += r.complete ? 0 : 1;
        std::fprintf(stderr, "kernlens sweep: %s %s (%.1f s)%s%s\n", plan.points[r.point].id.c_str(),
                     r.complete ? "done" : "failed", static_cast<double>(r.wall_ns) / 1e9, r.complete ? "" : ": ",
                     r.complete ? "" : r.detail.c_str());
      });
  if (!results) return bad_input(results.error());
  std::printf("sweep %s: ran %zu point%s here: %zu done, %zu failed\n", plan.spec.name.c_str(), results->size(),
              results->size() == 1 ? "" : "s", results->size() - failed, failed);
  return failed > 0 || results->size() < points.size() ? kExitToolFailed : kExitOk;
}

int run_submit(const SweepOptions& opt) {
  auto plan = load_plan(opt);
  if (!plan) return kExitBadInput;
  auto now = standing(*plan);
  if (!now) return kExitBadInput;
  std::vector<std::size_t> points = sweep::points_to_run(now->statuses);
  if (points.empty()) {
    std::printf("sweep %s: nothing to submit (%zu points; none failed or not started)\n", plan->spec.name.c_str(),
                plan->points.size());
    return kExitOk;
  }
  bool tags = sweep::profile_takes_tags(plan->kernlens);
  if (opt.dry_run) {
    std::vector<std::vector<std::string>> argvs;
    for (std::size_t i : points) argvs.push_back(sweep::profile_argv(*plan, plan->points[i], tags));
    if (opt.local) {  // the commands, in the order they would run
      std::string lines;
      for (std::size_t i = 0; i < points.size(); ++i) {
        lines += fmt::format("{}\n", shell_join(sweep::with_env(plan->points[points[i]], argvs[i])));
      }
      return write_output("-", lines);
    }
    auto script = sweep::sbatch_script(*plan, points, argvs);
    if (!script) return bad_input(make_error(opt.spec, 0, script.error().message));
    return write_output("-", *script);
  }
  if (opt.local) return submit_local(*plan, points, tags);
  auto submission = sweep::submit_to_slurm(*plan, points, tags);
  if (!submission) return bad_input(submission.error());
  std::printf("sweep %s: submitted job %s: %zu point%s (--array=%s), script %s\n", plan->spec.name.c_str(),
              submission->job.c_str(), points.size(), points.size() == 1 ? "" : "s",
              sweep::array_spec(points, plan->spec.slurm.max_parallel).c_str(), submission->script.c_str());
  return kExitOk;
}

int run_ingest(const SweepOptions& opt) {
  auto plan = load_plan(opt);
  if (!plan) return kExitBadInput;
  std::optional<names::KernelClassifier> classifier = load_classifier(opt.rule_files);
  if (!classifier) return kExitBadInput;
  auto db = store::open_for_writing(opt.db);
  if (!db) return bad_input(db.error());
  std::size_t added = 0, present = 0, skipped = 0, errors = 0;
  using Outcome = sweep::IngestResult::Outcome;
  auto results = sweep::ingest_sweep(*plan, *db, opt.db, *classifier, [&](const sweep::IngestResult& r) {
    const std::string& id = plan->points[r.point].id;
    switch (r.outcome) {
      case Outcome::kAdded: ++added; std::printf("added %s: %s\n", id.c_str(), r.run_key.c_str()); break;
      case Outcome::kAlreadyPresent: ++present; break;
      case Outcome::kNotComplete: ++skipped; break;
      case Outcome::kError: ++errors; print_error(fmt::format("{}: {}", id, r.error)); break;
    }
  });
  if (!results) return bad_input(results.error());
  std::printf("sweep %s into %s: %zu added, %zu already there, %zu not complete (skipped)%s\n", plan->spec.name.c_str(),
              opt.db.c_str(), added, present, skipped, errors ? fmt::format(", {} could not be read", errors).c_str() : "");
  return errors ? kExitBadInput : kExitOk;
}

CLI::App* add_spec(CLI::App* cmd, SweepOptions& opt) {
  cmd->add_option("SPEC", opt.spec, "The sweep file (TOML; see the user guide, \"Sweeps\")")->required()->type_name("FILE");
  return cmd;
}

void add_format(CLI::App* cmd, SweepOptions& opt) {
  cmd->add_option("--format", opt.format, "text for people, json for scripts")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

CLI::App* add_submit(CLI::App* sweep, SweepOptions& opt) {
  CLI::App* cmd = add_spec(sweep->add_subcommand(
      "submit", "Run the points that are not done: a Slurm job array (sbatch), or here with --local."), opt);
  cmd->footer(
      "Points done, queued or running are left alone; a failed point's run directory moves to\n"
      "POINT/failed-N and the point runs again. The script is RUN_ROOT/_sweep/submit-N.sbatch.\n"
      "Examples:\n"
      "  kernlens sweep submit sweep.toml --partition gpu --time 00:30:00 --gpus 1 --max-parallel 8\n"
      "  kernlens sweep submit sweep.toml --local\n"
      "  kernlens sweep submit sweep.toml --dry-run       (print the sbatch script; submit nothing)");
  cmd->add_flag("--local", opt.local, "Run the points one after another on this machine instead of Slurm");
  cmd->add_option("--partition", opt.partition, "Slurm partition (over the spec's [slurm] partition)");
  cmd->add_option("--time", opt.time, "Time limit per point, as sbatch takes it (HH:MM:SS)");
  cmd->add_option("--gpus", opt.gpus, "GPUs per point (--gres=gpu:N)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-parallel", opt.max_parallel, "Array tasks running at once (--array=...%N)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--dry-run", opt.dry_run,
                "Print the sbatch script for the points to run (with --local: their commands); change nothing");
  return cmd;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto opt = std::make_shared<SweepOptions>();
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Profile many models and configurations: a Slurm job array (or --local) feeding one database.");
  sweep->footer(
      "A sweep file (TOML) names the command template, the parameter matrix, profile's options,\n"
      "the tags per point and the run root; docs/user-guide.md (\"Sweeps\") has the format.\n"
      "Typical use:\n"
      "  kernlens sweep plan sweep.toml           (the points and their commands)\n"
      "  kernlens sweep submit sweep.toml         (sbatch; again later: only what is not done)\n"
      "  kernlens sweep status sweep.toml\n"
      "  kernlens sweep ingest sweep.toml --db runs.db\n"
      "  kernlens report --db runs.db -o across-models.html");
  sweep->require_subcommand(1);
  CLI::App* plan = add_spec(sweep->add_subcommand("plan", "Print the points, their run directories and commands."), *opt);
  add_format(plan, *opt);
  CLI::App* submit = add_submit(sweep, *opt);
  CLI::App* status = add_spec(
      sweep->add_subcommand("status", "Each point: done, running, queued, failed (with the reason) or not started."), *opt);
  status->footer("Reads the run directories' manifests, and asks squeue and sacct about the tasks where they answer.");
  add_format(status, *opt);
  CLI::App* ingest = add_spec(
      sweep->add_subcommand("ingest", "Add every complete run to the database with its tags (again: no change)."), *opt);
  ingest->add_option("--db", opt->db, "The database file (SQLite)")->type_name("FILE")->capture_default_str();
  add_rules_option(ingest, opt->rule_files);
  return {sweep, [=] {
            if (plan->parsed()) return run_plan(*opt);
            if (submit->parsed()) return run_submit(*opt);
            if (status->parsed()) return run_status(*opt);
            if (ingest->parsed()) return run_ingest(*opt);
            return kExitBadInput;
          }};
}

}  // namespace kernlens::cli

#include "kernlens/profile/run_context.h"

#include <algorithm>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "kernlens/common/exit_codes.h"
#include "kernlens/profile/rank_lockstep.h"

namespace kernlens::profile {
namespace {

constexpr std::size_t kNcuLinesKept = 12;
constexpr std::size_t kAvailableKernelsKept = 5;  // of the "Available Kernels:" list

// What a run that did not complete leaves for the user: its exports and reports (logs are
// always there and not listed).
std::vector<std::string> kept_outputs(const rundir::RunDir& dir) {
  std::vector<std::string> kept;
  for (auto& file : rundir::run_dir_files(dir)) {
    if (!file.ends_with(".log")) kept.push_back(std::move(file));
  }
  return kept;
}

void print_timings(const RunContext& run) {
  run.err << fmt::format("kernlens: where the time went ({} in all):\n", format_seconds(run.manifest.total_ns));
  std::int64_t steps_ns = 0;
  for (const auto& t : run.manifest.timings) {
    run.err << fmt::format("  {:<34} {:>9}\n", t.step, format_seconds(t.wall_ns));
    steps_ns += t.wall_ns;
  }
  run.err << fmt::format("  {:<34} {:>9}\n", "(between the steps)", format_seconds(run.manifest.total_ns - steps_ns));
  for (const auto& r : run.manifest.runs) {
    if (!r.first_kernel_ns || !r.last_kernel_ns) continue;
    run.err << fmt::format("  {}: {} to the first profiled kernel, {} profiling {} kernels, {} after the last\n",
                           r.step, format_seconds(*r.first_kernel_ns),
                           format_seconds(*r.last_kernel_ns - *r.first_kernel_ns), r.kernels_profiled,
                           format_seconds(r.wall_ns - *r.last_kernel_ns));
  }
}

}  // namespace

void RunContext::note(const std::string& line) { err << "kernlens: " << line << "\n" << std::flush; }

void RunContext::save() {
  manifest.total_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - started).count();
  if (Status s = rundir::write_manifest(dir, manifest); !s) note("warning: " + s.error().to_string());
  if (!guard) return;
  rundir::Manifest last_words = manifest;
  last_words.status = "interrupted";
  last_words.status_reason = "interrupted twice (Ctrl-C): kernlens stopped at once";
  last_words.kept = kept_outputs(dir);
  guard->prepare_last_words(dir.manifest().string(), rundir::manifest_text(rundir::manifest_json(last_words)));
}

bool RunContext::stop_requested() { return interrupted || (guard && guard->interrupted()); }

void RunContext::record_time(const std::string& step, std::int64_t wall_ns) {
  manifest.timings.push_back({step, wall_ns});
}

ProfileRunResult RunContext::finish(int exit_code, std::string status, std::string reason) {
  if (stop_requested()) {
    status = "interrupted";
    exit_code = kExitToolFailed;
  }
  manifest.status = std::move(status);
  manifest.status_reason = reason;
  if (manifest.status != "complete") manifest.kept = kept_outputs(dir);
  save();
  if (lockstep) lockstep->finish(manifest, exit_code, opt.ranks);
  if (!reason.empty()) err << "kernlens: error: " << reason << "\n";
  if (!manifest.kept.empty()) {
    constexpr std::size_t kShown = 8;  // the manifest lists them all
    const std::size_t shown = std::min(kShown, manifest.kept.size());
    err << fmt::format("kernlens: kept {} files: {}{}\n", manifest.kept.size(),
                       fmt::join(manifest.kept.begin(), manifest.kept.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                       shown < manifest.kept.size() ? ", ... (manifest.json lists them all)" : "");
  }
  if (opt.verbose) print_timings(*this);
  err << "kernlens: run directory " << dir.root.string() << " (" << manifest.status << ")\n";
  return {exit_code, dir.root.string()};
}

ProfileRunResult RunContext::finish_interrupted(const std::string& during) {
  const int sig = guard && guard->signal() ? guard->signal() : 0;
  return finish(kExitToolFailed, "interrupted",
                fmt::format("interrupted{} while {}", sig ? " by " + signal_name(sig) : std::string(), during));
}

std::string relative(const rundir::RunDir& dir, const std::filesystem::path& p) {
  return std::filesystem::relative(p, dir.root).string();
}

std::string format_seconds(std::int64_t ns) {
  if (ns < 1'000'000'000) return fmt::format("{} ms", ns / 1'000'000);
  return fmt::format("{:.1f} s", static_cast<double>(ns) * 1e-9);
}

std::vector<std::string> child_environment_overrides(const RunContext& run, std::vector<std::string> env) {
  if (run.opt.repeat > 1) env.push_back(fmt::format("{}={}", kRepeatVariable, run.opt.repeat));
  return env;
}

rundir::ToolRun tool_run_record(const RunContext& run, const std::string& step, const std::vector<std::string>& argv,
                                const ProcessResult& result) {
  rundir::ToolRun record;
  record.step = step;
  record.argv = argv;
  record.exit_code = result.exit_code;
  record.signal = result.term_signal;
  record.timed_out = result.timed_out;
  record.interrupted = result.interrupted;
  record.stopped = result.stopped;
  record.signals_sent = result.signals_sent;
  record.wall_ns = result.wall_ns;
  if (!result.stdout_log_path.empty()) record.stdout_log = relative(run.dir, result.stdout_log_path);
  if (!result.stderr_log_path.empty()) record.stderr_log = relative(run.dir, result.stderr_log_path);
  return record;
}

namespace {

// The step's time limit: its own, else the run's --timeout.
std::int64_t step_timeout_ns(const RunContext& run, const StepSpec& spec) {
  return spec.timeout_ns >= 0 ? spec.timeout_ns : static_cast<std::int64_t>(run.opt.timeout_s * 1e9);
}

// How the step's child is run: argv, environment, log paths, time limit.
ProcessOptions step_process_options(const RunContext& run, const StepSpec& spec) {
  ProcessOptions p;
  p.argv = spec.argv;
  p.env = child_environment_overrides(run, spec.env);
  p.stdout_log_path = (spec.stdout_file.empty() ? spec.folder / (spec.stem + ".stdout.log") : spec.stdout_file).string();
  p.stderr_log_path = (spec.folder / (spec.stem + ".stderr.log")).string();
  p.timeout_ns = step_timeout_ns(run, spec);
  p.should_stop = spec.should_stop;
  return p;
}

// A child that could not be started: the manifest names the step, without an exit.
void record_unstarted(RunContext& run, const StepSpec& spec) {
  rundir::ToolRun record;
  record.step = spec.step;
  record.argv = spec.argv;
  run.manifest.runs.push_back(record);
  run.save();
}

}  // namespace

Result<StepOutcome> run_step(RunContext& run, const StepSpec& spec) {
  ProcessOptions p = step_process_options(run, spec);
  StepOutcome outcome;
  rundir::ToolRun record;
  record.step = spec.step;
  record.argv = spec.argv;
  const auto started = RunContext::Clock::now();
  bool listing_kernels = false;  // inside the "Available Kernels:" list ncu prints with "No kernels"
  // The program's own lines are echoed to stderr (stdout is for the report); ncu's own
  // lines drive the progress display instead and stay in the logs.
  p.on_line = [&](OutputStream, std::string_view line) {
    if (!line.starts_with("==")) {
      listing_kernels = listing_kernels || (outcome.no_kernels_profiled && line == "Available Kernels:");
      if (listing_kernels && line != "Available Kernels:" && outcome.available_kernels.size() < kAvailableKernelsKept) {
        outcome.available_kernels.emplace_back(line);
      }
      if (spec.echo) run.err << line << "\n";
      return;
    }
    listing_kernels = false;
    outcome.ncu_lines.emplace_back(line);
    if (outcome.ncu_lines.size() > kNcuLinesKept) outcome.ncu_lines.erase(outcome.ncu_lines.begin());
    for (const auto& e : parse_ncu_line(line)) {
      if (e.kind == NcuEventKind::kNoKernelsProfiled) outcome.no_kernels_profiled = true;
      if (e.kind == NcuEventKind::kError) run.note("ncu: " + e.text);
      if (e.kind == NcuEventKind::kProfiling && e.passes) {
        ++outcome.kernels_profiled;
        const auto at = std::chrono::duration_cast<std::chrono::nanoseconds>(RunContext::Clock::now() - started).count();
        if (!record.first_kernel_ns) record.first_kernel_ns = at;
        record.last_kernel_ns = at;
      }
      if (spec.on_event) spec.on_event(e);
    }
  };
  auto result = run_process(p);
  if (!result) {
    record_unstarted(run, spec);
    return result.error();
  }
  outcome.result = *result;
  const auto first_kernel_ns = record.first_kernel_ns, last_kernel_ns = record.last_kernel_ns;
  record = tool_run_record(run, spec.step, spec.argv, *result);
  record.first_kernel_ns = first_kernel_ns;
  record.last_kernel_ns = last_kernel_ns;
  record.kernels_profiled = outcome.kernels_profiled;
  run.interrupted = run.interrupted || result->interrupted;
  run.manifest.runs.push_back(record);
  run.manifest.step_wall_ns[spec.step] += result->wall_ns;
  if (spec.timed) run.record_time(spec.step, result->wall_ns);
  run.save();
  return outcome;
}

Result<BackgroundStep> start_background_step(RunContext& run, StepSpec spec) {
  const auto started = RunContext::Clock::now();
  auto process = BackgroundProcess::start(step_process_options(run, spec));
  if (!process) {
    record_unstarted(run, spec);
    return process.error();
  }
  return BackgroundStep{std::move(spec), std::move(*process), started};
}

StepOutcome finish_background_step(RunContext& run, BackgroundStep& step) {
  const std::int64_t timeout_ns = step_timeout_ns(run, step.spec);
  auto past_timeout = [&] {
    return timeout_ns > 0 && RunContext::Clock::now() - step.started >= std::chrono::nanoseconds(timeout_ns);
  };
  while (step.process.running() && !run.stop_requested() && !past_timeout()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  StepOutcome outcome;
  outcome.result = step.process.wait(1);  // when it still runs: SIGTERM to its group now, SIGKILL after the grace
  if (outcome.result.timed_out && run.stop_requested()) {
    outcome.result.timed_out = false;
    outcome.result.interrupted = true;
  }
  run.manifest.runs.push_back(tool_run_record(run, step.spec.step, step.spec.argv, outcome.result));
  run.manifest.step_wall_ns[step.spec.step] += outcome.result.wall_ns;
  run.save();
  return outcome;
}

std::string failure(const std::string& step, const StepOutcome& outcome) {
  if (outcome.result.succeeded()) return {};
  return fmt::format("{}: {} (logs in the run directory)", step, outcome.result.describe());
}

std::string ncu_profiled_nothing(const std::string& step, const StepOutcome& outcome,
                                 const std::vector<std::string>& causes) {
  std::string text = fmt::format("{}: ncu profiled no kernels (it exits 0 all the same)", step);
  if (!outcome.ncu_lines.empty()) {
    text += "; ncu said:";
    for (const auto& line : outcome.ncu_lines) text += "\n    " + line;
  }
  if (!outcome.available_kernels.empty()) {
    text += "\n  the kernels ncu saw (first of its \"Available Kernels\" list): " +
            fmt::format("{}", fmt::join(outcome.available_kernels, "  "));
  }
  text += "\n  usual causes:";
  for (const auto& cause : causes) text += "\n  - " + cause;
  text += "\n  - the program's GPU work runs in a process ncu did not follow (kernlens passes "
          "--target-processes all; a launcher, a container or a daemon that starts the workers escapes it)";
  return text;
}

}  // namespace kernlens::profile

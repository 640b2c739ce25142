#include "kernlens/profile/deep_pass.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>
#include <ostream>

#include <fmt/format.h>

#include "kernlens/profile/early_start.h"
#include "kernlens/profile/rank_lockstep.h"
#include "kernlens/rundir/layout.h"

namespace kernlens::profile {
namespace {

// How long the program started early may go on after ncu wrote its report before its group
// gets SIGTERM, and SIGKILL after that.
constexpr std::int64_t kEarlyProgramAfterReport_ns = 100'000'000;
constexpr std::int64_t kEarlyProgramKillGrace_ns = 1'000'000'000;

constexpr std::string_view kDeepPlaceholder = "regex:<THE KERNELS DISCOVERY SELECTS>";
constexpr std::string_view kPortPlaceholder = "<A FREE PORT>";
constexpr std::string_view kDeepIdPlaceholder = "::regex:<THE KERNELS DISCOVERY SELECTS>:<LAUNCH NUMBER>";

// What usually makes a deep-pass run profile nothing.
const std::vector<std::string>& deep_causes() {
  static const std::vector<std::string> causes = {
      "the launch numbers chosen from discovery are past the end of this run: the program launched fewer "
      "or other kernels than in discovery (another input, a cache that was warm, nondeterminism)",
      "the --nvtx-include/--nvtx-range filter matches no range in this run"};
  return causes;
}

// Exports one report's pages, all at once (each export is an ncu start-up of its own, about a
// second on the H100 machine): the first through run_step, the others beside it. The CSVs
// written, in page order, or why not.
std::string export_report(RunContext& run, const std::string& step, const std::string& stem,
                          const DeepInvocation& d, std::vector<std::string>& csvs) {
  TimedStep timed(run, step + " exports");
  auto exports = export_argvs(run.ncu.ncu, d.report_base + ".ncu-rep");  // one per page of rundir::kDeepPages
  std::vector<StepSpec> specs;
  for (std::size_t i = 0; i < exports.size() && i < rundir::kDeepPages.size(); ++i) {
    const std::string_view page = rundir::kDeepPages[i];
    StepSpec spec(fmt::format("{} export {}", step, page), exports[i], run.dir.deep,
                  fmt::format("{}_export_{}", stem, page));
    spec.stdout_file = rundir::deep_export(run.dir, stem, page);
    spec.timed = false;
    specs.push_back(std::move(spec));
  }
  if (specs.empty()) return {};
  std::string why;
  std::vector<BackgroundStep> beside;
  for (std::size_t i = 1; i < specs.size() && why.empty(); ++i) {
    auto started = start_background_step(run, specs[i]);
    if (started) beside.push_back(std::move(*started));
    else why = started.error().to_string();
  }
  if (why.empty()) {
    auto first = run_step(run, specs[0]);
    why = !first ? first.error().to_string() : failure(step + " export", *first);
  }
  for (auto& other : beside) {
    StepOutcome outcome = finish_background_step(run, other);
    if (why.empty()) why = failure(step + " export", outcome);
  }
  if (!why.empty()) return why;
  for (const auto& spec : specs) csvs.push_back(spec.stdout_file.string());
  return {};
}

// Under a launcher, deep run `k` of every rank: a fresh key space in the launcher's store, the
// plan's timeout, and an end as soon as another rank stopped or died.
void lockstep_run(RunContext& run, std::size_t k, StepSpec& spec) {
  if (!run.lockstep) return;
  const Lockstep& lockstep = *run.lockstep;
  for (auto& variable : lockstep.run_environment(k)) spec.env.push_back(std::move(variable));
  spec.timeout_ns = lockstep.plan().run_timeout_ns[k];
  spec.should_stop = [&run, &lockstep, k] {
    std::string why = lockstep.partner_lost(k);
    if (why.empty()) return false;
    run.note("stopping the program: " + why);
    return true;
  };
}

// Why deep run `k` is not usable, naming the rank that made this one stop.
std::string run_failure(const RunContext& run, const std::string& step, const StepOutcome& outcome, std::size_t k) {
  if (run.lockstep && outcome.result.stopped) {
    return fmt::format("{}: stopped: {}", step, run.lockstep->partner_lost(k));
  }
  std::string why = failure(step, outcome);
  if (run.lockstep && outcome.result.timed_out) {
    why += "; that is the deep-run timeout (--deep-timeout): the program may have waited in a collective for "
           "another rank";
  }
  return why;
}

// Under a launcher: runs the program untouched as deep run `k` of `runs`, so that the ranks
// this rank talks to complete their collectives. Returns why it failed, or empty.
std::string run_untouched(RunContext& run, std::size_t k, std::size_t runs) {
  const std::string step = fmt::format("program run {}/{}", k + 1, runs);
  StepSpec spec(step, run.opt.command, run.dir.deep, fmt::format("program_{}", k + 1));
  spec.echo = run.opt.echo_program_output;
  lockstep_run(run, k, spec);
  auto result = run_step(run, spec);
  if (!result) return result.error().to_string();
  return run_failure(run, step + " (the program, untouched, in step with the profiled ranks)", *result, k);
}

// One ncu run of the deep pass: its outcome, or an Error when it could not start.
Result<StepOutcome> run_ncu(RunContext& run, StepSpec spec, DeepProgress& progress, std::size_t k) {
  spec.on_event = [&](const NcuEvent& e) { run.err << progress.on_event(e, run.elapsed_s()) << std::flush; };
  lockstep_run(run, k, spec);
  return run_step(run, spec);
}

bool profiled_something(const StepOutcome& outcome, const DeepInvocation& d) {
  std::error_code ec;
  return !outcome.no_kernels_profiled && std::filesystem::is_regular_file(d.report_base + ".ncu-rep", ec);
}

// ncu found nothing to attach to while the early program still runs: it has not reached its
// first CUDA call yet (discovery's copy of the program may have been quicker).
bool not_attachable_yet(const Result<StepOutcome>& outcome, EarlyProgram& early) {
  if (!outcome || outcome->result.succeeded() || outcome->result.interrupted) return false;
  const bool none_found = std::any_of(outcome->ncu_lines.begin(), outcome->ncu_lines.end(), [](const std::string& line) {
    return line.find("No attachable process found") != std::string::npos;
  });
  return none_found && early.process.running();
}

// A deep run attached to the front program started beside discovery; then waits for that
// program to end (ncu's --kill ends it after the last launch). std::nullopt when the attach did
// not measure anything: every early program is ended (what failed one attach would fail the
// next) and the run goes the usual way.
std::optional<Result<StepOutcome>> run_attached(RunContext& run, const std::string& step, const DeepInvocation& d,
                                                DeepProgress& progress, EarlyPrograms& programs) {
  EarlyProgram& early = programs.front();
  StepSpec spec(step, attach_argv(run.ncu, run.opt.tier, run.opt.replay, d, early.port), run.dir.deep,
                std::filesystem::path(d.report_base).filename().string());
  auto outcome = run_ncu(run, spec, progress, 0);
  const auto give_up_at = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<std::int64_t>(run.opt.attach_patience_s * 1000));
  while (not_attachable_yet(outcome, early) && !run.stop_requested() && std::chrono::steady_clock::now() < give_up_at) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    outcome = run_ncu(run, spec, progress, 0);
  }
  if (!outcome || !outcome->result.succeeded() || !profiled_something(*outcome, d)) {
    const std::string why = !outcome ? outcome.error().to_string()
                            : !outcome->result.succeeded() ? failure(spec.step, *outcome)
                                                           : "ncu profiled no kernel in it";
    if (!run.stop_requested()) run.note("warning: the deep pass's program started early: " + why + "; running it again");
    drop_early_programs(run, programs, why);
    if (run.stop_requested()) return outcome;
    return std::nullopt;
  }
  // ncu has written its report: what the program does after its last measured launch is of no
  // use. ncu's --kill ends it, but its teardown under ncu took 2 s on the H100; end its group.
  ProcessResult program = early.process.stop_after(kEarlyProgramAfterReport_ns, kEarlyProgramKillGrace_ns);
  record_early_program(run, programs, step + " program (started beside discovery under ncu --mode launch)", program);
  run.manifest.options["early_start"]["ended_after_report"] = program.stopped;
  if (!program.succeeded() && !program.stopped && !outcome->result.interrupted) {
    run.note(fmt::format("warning: the program started early ended with {} after ncu measured it (deep/{})",
                         program.describe(), std::filesystem::path(program.stderr_log_path).filename().string()));
  }
  return outcome;
}

}  // namespace

DeepPassResult deep_pass(RunContext& run, const Selection& selection, EarlyPrograms& early) {
  std::uint64_t planned = 0;
  for (const auto& inv : selection.invocations) planned += inv.launch_count;
  const std::size_t ncu_runs = selection.invocations.size();
  const std::size_t runs = run.lockstep ? run.lockstep->plan().runs : ncu_runs;
  DeepProgress progress(planned, run.opt.progress_tty);
  DeepPassResult r;
  std::string nothing;  // why the last run that profiled nothing did
  for (std::size_t i = 0; i < runs && r.why.empty(); ++i) {
    if (run.stop_requested()) break;
    if (run.lockstep) {
      if (Status s = run.lockstep->before_run(i); !s) {
        r.why = fmt::format("deep run {}/{}: {}", i + 1, runs, s.error().to_string());
        break;
      }
    }
    if (i >= ncu_runs) {
      r.why = run_untouched(run, i, runs);
      continue;
    }
    const NcuInvocation& inv = selection.invocations[i];
    const std::string stem = fmt::format("deep_{}", i + 1);
    DeepInvocation d{std::string(to_string(selection.name_base)), inv.kernel_name, inv.kernel_id, inv.launch_skip,
                     inv.launch_count, (run.dir.deep / stem).string()};
    const std::string step = fmt::format("deep {}/{}", i + 1, runs);
    std::optional<Result<StepOutcome>> result;
    const bool attach = !early.empty() && !run.lockstep;
    if (attach) result = run_attached(run, step, d, progress, early);
    if (!result && !run.stop_requested()) {
      // After an attach that failed, its logs stay beside this run's.
      result = run_ncu(run, StepSpec(step, deep_argv(run.ncu, run.opt.tier, run.opt.replay, d, run.opt.command),
                                     run.dir.deep, attach ? stem + "_again" : stem),
                       progress, i);
    }
    if (!result) break;
    if (!*result) {
      r.why = result->error().to_string();
      break;
    }
    if (r.why = run_failure(run, step, **result, i); !r.why.empty()) break;
    if (!profiled_something(**result, d)) {
      nothing = ncu_profiled_nothing(step, **result, deep_causes());
      run.note("warning: " + nothing);
      continue;
    }
    r.why = export_report(run, step, stem, d, r.csvs);
  }
  drop_early_programs(run, early, r.why.empty() ? "the deep pass did not need it" : "the deep pass stopped");
  const bool ended_early = !r.why.empty() || run.stop_requested();
  if (ncu_runs > 0) run.err << progress.finish(run.elapsed_s(), ended_early) << std::flush;
  if (ncu_runs > 0 && r.why.empty() && r.csvs.empty() && !run.stop_requested()) {
    r.why = nothing.empty() ? "the deep pass measured no kernel" : "the deep pass measured no kernel: " + nothing;
  }
  return r;
}

std::vector<std::vector<std::string>> deep_pass_plan(const RunContext& run) {
  DeepInvocation d{"mangled", std::string(kDeepPlaceholder), std::string(kDeepIdPlaceholder), 0, 1,
                   (run.dir.deep / "deep_1").string()};
  std::vector<std::vector<std::string>> argvs;
  if (early_start_refused(run).empty()) {
    argvs.push_back(launch_argv(run.ncu, 0, run.opt.command));
    argvs.push_back(attach_argv(run.ncu, run.opt.tier, run.opt.replay, d, 0));
    for (auto& argv : argvs) {
      auto port = std::find(argv.begin(), argv.end(), "--port");
      if (port != argv.end() && port + 1 != argv.end()) *(port + 1) = kPortPlaceholder;
    }
  } else {
    argvs.push_back(deep_argv(run.ncu, run.opt.tier, run.opt.replay, d, run.opt.command));
  }
  for (auto& argv : export_argvs(run.ncu.ncu, d.report_base + ".ncu-rep")) argvs.push_back(std::move(argv));
  return argvs;
}

}  // namespace kernlens::profile

// One `kernlens profile` run as its steps share it (discovery.h, deep_pass.h, profile_run.cpp):
// the options, the tools found, the run directory and its manifest, the streams, the time each
// step took, Ctrl-C, and how a step's child is run and recorded. Every step ends recorded in
// the manifest, so an interrupted or failed run keeps what it has and says so.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/names/classify.h"
#include "kernlens/profile/interrupt.h"
#include "kernlens/profile/ncu_command.h"
#include "kernlens/profile/process.h"
#include "kernlens/profile/profile_run.h"
#include "kernlens/profile/progress.h"
#include "kernlens/profile/tracer_command.h"
#include "kernlens/rundir/manifest.h"

namespace kernlens::profile {

class Lockstep;

struct RunContext {
  using Clock = std::chrono::steady_clock;

  RunContext(const ProfileRunOptions& o, const names::KernelClassifier& c, std::ostream& o_out, std::ostream& o_err)
      : opt(o), classifier(c), out(o_out), err(o_err) {}

  const ProfileRunOptions& opt;
  const names::KernelClassifier& classifier;
  std::ostream& out;
  std::ostream& err;
  rundir::RunDir dir;
  rundir::Manifest manifest;
  NcuSettings ncu;          // ncu.ncu: its path (a placeholder when not found: only a dry run goes on then)
  std::string ncu_missing;  // why ncu was not found; empty when it was
  std::string nsys;     // empty: not found
  TracerPaths tracer;   // library empty: not found
  rundir::DiscoveryMethod discovery = rundir::DiscoveryMethod::kNcu;  // the method that ran (or would run)
  const InterruptGuard* guard = nullptr;  // null in a dry run
  Lockstep* lockstep = nullptr;           // under a launcher: the other ranks (rank_lockstep.h)
  bool interrupted = false;               // a child's run ended because of Ctrl-C
  Clock::time_point started = Clock::now();

  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - started).count(); }
  void note(const std::string& line);  // "kernlens: LINE" on err
  // Writes the manifest, and prepares the one a second Ctrl-C writes on its way out.
  void save();
  // Whether the run must stop: Ctrl-C reached a child's run or kernlens itself.
  bool stop_requested();
  // Records a step of kernlens's own (not a child's run) in the timings.
  void record_time(const std::string& step, std::int64_t wall_ns);
  // Ends the run: the manifest says how (and what an unfinished run kept), and the exit code
  // follows DESIGN.md §3. `verbose` prints where the time went.
  ProfileRunResult finish(int exit_code, std::string status, std::string reason);
  // finish() for Ctrl-C between steps: `during` says what kernlens was doing.
  ProfileRunResult finish_interrupted(const std::string& during);
};

// Times one of kernlens's own steps, from construction to destruction, into the timings.
class TimedStep {
 public:
  TimedStep(RunContext& run, std::string step) : run_(run), step_(std::move(step)) {}
  ~TimedStep() {
    run_.record_time(step_, std::chrono::duration_cast<std::chrono::nanoseconds>(RunContext::Clock::now() - start_).count());
  }
  TimedStep(const TimedStep&) = delete;
  TimedStep& operator=(const TimedStep&) = delete;

 private:
  RunContext& run_;
  std::string step_;
  RunContext::Clock::time_point start_ = RunContext::Clock::now();
};

// What tells the workload how many times to run its measured region (`profile --repeat`).
inline constexpr std::string_view kRepeatVariable = "KERNLENS_REPEAT";

// One child run of a step: its argv, where its logs go (`folder/<stem>.stdout.log` and
// `.stderr.log`, or stdout into `stdout_file`), whether the program's own lines are echoed, a
// callback for ncu's console events, and variables for its environment.
struct StepSpec {
  StepSpec(std::string step_name, std::vector<std::string> command, std::filesystem::path log_folder,
           std::string log_stem)
      : step(std::move(step_name)), argv(std::move(command)), folder(std::move(log_folder)), stem(std::move(log_stem)) {}

  std::string step;  // as the manifest names it: "discovery (tracer)", "deep 1/2", ...
  std::vector<std::string> argv;
  std::filesystem::path folder;
  std::string stem;
  bool echo = false;
  std::function<void(const NcuEvent&)> on_event;
  std::filesystem::path stdout_file;
  std::vector<std::string> env;
  std::int64_t timeout_ns = -1;        // -1: the run's --timeout
  std::function<bool()> should_stop;   // asked while it runs: true ends it (ProcessOptions)
  bool timed = true;                   // its wall time is a step of the timings (not when it ran beside another)
};

struct StepOutcome {
  ProcessResult result;
  bool no_kernels_profiled = false;     // ncu said so (and still exits 0)
  std::vector<std::string> ncu_lines;   // ncu's own ==PROF==/==WARNING==/==ERROR== lines, the last few
  std::vector<std::string> available_kernels;  // the first of the list ncu prints when none matched
  std::uint64_t kernels_profiled = 0;   // ncu's "Profiling ... passes" lines
};

// The variables every child of the run gets on top of `env` (KERNLENS_REPEAT under --repeat).
std::vector<std::string> child_environment_overrides(const RunContext& run, std::vector<std::string> env);

// A child's run as the manifest records it (its logs relative to the run directory).
rundir::ToolRun tool_run_record(const RunContext& run, const std::string& step, const std::vector<std::string>& argv,
                                const ProcessResult& result);

// Runs the child and records it in the manifest (runs, step_wall_ns, timings). An Error: it
// could not be started.
Result<StepOutcome> run_step(RunContext& run, const StepSpec& spec);

// A step's child left running beside the next step (a BackgroundProcess: its own group, its
// logs straight into their files, none of ncu's console lines read). finish_background_step()
// waits for it, ends it on Ctrl-C or after the run's --timeout, and records it as run_step()
// does (but not in the timings: it ran beside another step).
struct BackgroundStep {
  StepSpec spec;
  BackgroundProcess process;
  RunContext::Clock::time_point started;
};
Result<BackgroundStep> start_background_step(RunContext& run, StepSpec spec);
StepOutcome finish_background_step(RunContext& run, BackgroundStep& step);

// Why a step's run is not usable, or empty when it is.
std::string failure(const std::string& step, const StepOutcome& outcome);

// An ncu run that exited 0 but profiled nothing (it said "No kernels were profiled", or wrote
// no report): says so, quotes ncu's own lines and the kernels it listed, and names the usual
// causes, `causes` first (what fits the step), then a child process ncu did not follow.
std::string ncu_profiled_nothing(const std::string& step, const StepOutcome& outcome,
                                 const std::vector<std::string>& causes);

// A path inside the run directory, relative to it.
std::string relative(const rundir::RunDir& dir, const std::filesystem::path& p);

// "1.2 s" / "250 ms" for the timings.
std::string format_seconds(std::int64_t ns);

}  // namespace kernlens::profile

#include "kernlens/profile/early_start.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "kernlens/profile/interrupt.h"
#include "kernlens/profile/local_ports.h"

namespace kernlens::profile {
namespace {

// options.early_start: {started, used, programs (how many started), attached (how many a deep
// run used), port (the first's), why_not (why none was started, or why the last were ended)}.
nlohmann::ordered_json& early_start_record(RunContext& run) {
  auto& j = run.manifest.options["early_start"];
  if (!j.is_object()) j = {{"started", false}, {"used", false}, {"programs", 0}, {"attached", 0}};
  return j;
}

void set_why_not(RunContext& run, const std::string& why) {
  if (!why.empty()) early_start_record(run)["why_not"] = why;
}

}  // namespace

std::string early_start_refused(const RunContext& run) {
  const ProfileRunOptions& opt = run.opt;
  if (opt.early_programs == 0) return "--no-early-start";
  if (opt.discovery_only) return "--discovery-only: there is no deep pass";
  if (!opt.discovery_from.empty()) return "--discovery-from: no discovery runs beside it";
  if (opt.replay != ReplayMode::kKernel) return "--replay-mode application runs the program once per pass";
  if (run.lockstep) return "under a launcher the ranks start each run together";
  if (!run.ncu_missing.empty()) return run.ncu_missing;
  return {};
}

namespace {

// Starts copy `k` (serving deep run k + 1) on ports not in `taken`.
Result<EarlyProgram> start_one(RunContext& run, std::size_t k, const std::vector<int>& taken) {
  auto port = free_local_ports(kEarlyStartPorts, taken);
  if (!port) return port.error();
  ProcessOptions p;
  p.argv = launch_argv(run.ncu, *port, run.opt.command);
  p.env = child_environment_overrides(run, {});
  p.stdout_log_path = (run.dir.deep / fmt::format("deep_{}_program.stdout.log", k + 1)).string();
  p.stderr_log_path = (run.dir.deep / fmt::format("deep_{}_program.stderr.log", k + 1)).string();
  auto process = BackgroundProcess::start(p);
  if (!process) return process.error();
  return EarlyProgram{std::move(*process), std::move(p.argv), *port};
}

}  // namespace

EarlyPrograms start_early_programs(RunContext& run) {
  EarlyPrograms early;
  early_start_record(run);
  if (std::string why = early_start_refused(run); !why.empty()) {
    set_why_not(run, why);
    return early;
  }
  std::vector<int> taken;
  // The interrupt guard ends at most that many groups on a second Ctrl-C (the CLI's limit too).
  const std::size_t wanted =
      std::min<std::size_t>(run.opt.early_programs, static_cast<std::size_t>(InterruptGuard::kMaxGroupsToEnd));
  for (std::size_t k = 0; k < wanted; ++k) {
    auto program = start_one(run, k, taken);
    if (!program) {
      const std::string why = program.error().to_string();
      run.note(k == 0 ? "warning: the deep pass's program starts after discovery: " + why
                      : fmt::format("warning: {} of the deep pass's programs started beside discovery, not {}: {}", k,
                                    wanted, why));
      set_why_not(run, why);
      break;
    }
    if (run.guard) run.guard->end_group_when_interrupted_twice(program->process.pid());
    taken.push_back(program->port);
    if (early.empty()) early_start_record(run)["port"] = program->port;
    early.push_back(std::move(*program));
  }
  early_start_record(run)["started"] = !early.empty();
  early_start_record(run)["programs"] = early.size();
  return early;
}

std::string early_program_unusable(const model::Profile& timeline) {
  std::set<std::uint32_t> processes;
  for (const auto& launch : timeline.launches) {
    if (launch.process != 0) processes.insert(launch.process);
  }
  if (processes.size() > 1) {
    return fmt::format("discovery saw kernels of {} processes: ncu launched only the program's own", processes.size());
  }
  return {};
}

void record_early_program(RunContext& run, EarlyPrograms& early, const std::string& step,
                          const ProcessResult& result) {
  rundir::ToolRun record = tool_run_record(run, step, early.front().argv, result);
  run.manifest.runs.push_back(record);
  if (run.guard) run.guard->forget_group(early.front().process.pid());
  early.pop_front();
  auto& j = early_start_record(run);
  j["used"] = true;
  j["attached"] = j["attached"].get<std::size_t>() + 1;
  run.save();
}

void drop_early_programs(RunContext& run, EarlyPrograms& early, const std::string& why, std::size_t keep) {
  if (early.size() <= keep) return;
  while (early.size() > keep) {
    early.back().process.kill_group();
    if (run.guard) run.guard->forget_group(early.back().process.pid());
    early.pop_back();
  }
  set_why_not(run, why);
  run.save();
}

}  // namespace kernlens::profile

#include "kernlens/profile/early_start.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>

namespace kernlens::profile {
namespace {

void set_manifest(RunContext& run, bool started, bool used, const std::string& why, int port) {
  nlohmann::ordered_json j = {{"started", started}, {"used", used}};
  if (port) j["port"] = port;
  if (!why.empty()) j["why_not"] = why;
  run.manifest.options["early_start"] = j;
}

}  // namespace

std::string early_start_refused(const RunContext& run) {
  const ProfileRunOptions& opt = run.opt;
  if (!opt.early_start) return "--no-early-start";
  if (opt.discovery_only) return "--discovery-only: there is no deep pass";
  if (!opt.discovery_from.empty()) return "--discovery-from: no discovery runs beside it";
  if (opt.replay != ReplayMode::kKernel) return "--replay-mode application runs the program once per pass";
  if (run.lockstep) return "under a launcher the ranks start each run together";
  if (!run.ncu_missing.empty()) return run.ncu_missing;
  return {};
}

namespace {

// Binds a socket to `port` of 127.0.0.1 (0: one the kernel picks) and closes it: the port bound,
// or 0 when it could not be.
int bind_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t length = sizeof address;
  int bound = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    bound = ntohs(address.sin_port);
  }
  ::close(fd);
  return bound;
}

}  // namespace

Result<int> free_local_ports(int count) {
  constexpr int kTries = 50;
  for (int i = 0; i < kTries; ++i) {
    const int base = bind_loopback(0);
    if (base == 0) return make_error("", 0, std::string("no free port on 127.0.0.1: ") + std::strerror(errno));
    bool all_free = base + count <= 65536;
    for (int p = base + 1; all_free && p < base + count; ++p) all_free = bind_loopback(p) == p;
    if (all_free) return base;
  }
  return make_error("", 0, fmt::format("no {} free ports in a row on 127.0.0.1", count));
}

std::optional<EarlyProgram> start_early_program(RunContext& run) {
  if (std::string why = early_start_refused(run); !why.empty()) {
    set_manifest(run, false, false, why, 0);
    return std::nullopt;
  }
  auto port = free_local_ports(kEarlyStartPorts);
  if (!port) {
    run.note("warning: the deep pass's program starts after discovery: " + port.error().to_string());
    set_manifest(run, false, false, port.error().to_string(), 0);
    return std::nullopt;
  }
  ProcessOptions p;
  p.argv = launch_argv(run.ncu, *port, run.opt.command);
  p.env = child_environment_overrides(run, {});
  p.stdout_log_path = (run.dir.deep / "deep_1_program.stdout.log").string();
  p.stderr_log_path = (run.dir.deep / "deep_1_program.stderr.log").string();
  auto process = BackgroundProcess::start(p);
  if (!process) {
    run.note("warning: the deep pass's program starts after discovery: " + process.error().to_string());
    set_manifest(run, false, false, process.error().to_string(), 0);
    return std::nullopt;
  }
  if (run.guard) run.guard->end_group_when_interrupted_twice(process->pid());
  set_manifest(run, true, false, "", *port);
  return EarlyProgram{std::move(*process), std::move(p.argv), *port};
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

void record_early_program(RunContext& run, const EarlyProgram& early, const std::string& step,
                          const ProcessResult& result) {
  rundir::ToolRun record = tool_run_record(run, step, early.argv, result);
  run.manifest.runs.push_back(record);
  run.save();
}

void drop_early_program(RunContext& run, std::optional<EarlyProgram>& early, const std::string& why) {
  if (!early) return;
  early->process.kill_group();
  if (run.guard) run.guard->end_group_when_interrupted_twice(0);
  set_manifest(run, true, false, why, early->port);
  run.save();
  early.reset();
}

}  // namespace kernlens::profile

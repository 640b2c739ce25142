#include "kernlens/profile/rank_lockstep.h"

#include <stdlib.h>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "kernlens/common/file.h"
#include "kernlens/profile/local_ports.h"
#include "kernlens/profile/profile_run.h"

namespace kernlens::profile {
namespace fs = std::filesystem;
namespace {

constexpr std::int64_t kSecondNs = 1'000'000'000;
constexpr std::int64_t kMinRunTimeoutNs = 60 * kSecondNs;
constexpr std::int64_t kDiscoveryFactor = 5;
constexpr std::int64_t kPerKernelNs = 10 * kSecondNs;
// What a rank does between two deep runs besides the run: ncu's exports of its report.
constexpr std::int64_t kBetweenRunsNs = 120 * kSecondNs;
// A deep run's TORCHELASTIC_RESTART_COUNT: the job's own plus this for each run, far from any
// count a real restart of the job reaches.
constexpr long long kRestartCountStride = 1000;

std::string run_step_name(std::size_t k) { return fmt::format("run-{}", k + 1); }

std::optional<long long> restart_count() {
  const char* value = ::getenv("TORCHELASTIC_RESTART_COUNT");
  if (!value) return std::nullopt;
  long long count = 0;
  std::string_view text(value);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return count;
}

std::int64_t seconds_ns(double s) { return static_cast<std::int64_t>(s * 1e9); }

bool uses_agent_store() {
  const char* value = ::getenv("TORCHELASTIC_USE_AGENT_STORE");
  return value && std::string_view(value) == "True";
}

// A free port of this host for each of `runs` deep runs, all different; empty when there are not
// that many (the runs then share the launcher's store, as before).
std::vector<int> free_store_ports(std::size_t runs) {
  std::vector<int> ports;
  for (std::size_t k = 0; k < runs; ++k) {
    auto port = free_local_ports(1, ports);
    if (!port) return {};
    ports.push_back(*port);
  }
  return ports;
}

// How the rank's run went, from its manifest, for the job's manifest.
nlohmann::ordered_json outcome(const rundir::Manifest& m, int exit_code, int rank, bool profiled) {
  std::size_t ncu_runs = 0, program_runs = 0;
  for (const auto& r : m.runs) {
    if (r.step.starts_with("deep ") && r.step.find(" export") == std::string::npos) ++ncu_runs;
    if (r.step.starts_with("program run")) ++program_runs;
  }
  nlohmann::ordered_json j = {{"rank", rank},
                      {"dir", rank_name(rank)},
                      {"profiled", profiled},
                      {"status", m.status},
                      {"exit_code", exit_code},
                      {"discovery", m.discovery.value("method", "")},
                      {"deep_ncu_runs", ncu_runs},
                      {"deep_untouched_runs", program_runs}};
  if (!m.status_reason.empty()) j["status_reason"] = m.status_reason;
  return j;
}

// OUTPUT/RUN_ID for a ranked run: new, or (-f) replacing a kernlens run directory.
Status make_top(const fs::path& top, bool force) {
  std::error_code ec;
  if (fs::exists(top, ec)) {
    if (!force) {
      return make_error(top.string(), 0,
                        "the run directory exists already: a run never overwrites another (-f replaces it, "
                        "--run-id names another)");
    }
    if (!fs::is_regular_file(top / "manifest.json", ec) && !fs::is_empty(top, ec)) {
      return make_error(top.string(), 0, "exists and is not a kernlens run directory (no manifest.json): -f replaces "
                                         "only a run directory");
    }
    fs::remove_all(top, ec);
  }
  fs::create_directories(top, ec);
  if (ec) return make_error(top.string(), 0, "cannot create the run directory: " + ec.message());
  return ok_status();
}

nlohmann::ordered_json job_manifest(const std::string& run_id, const LauncherInfo& me, const std::string& status) {
  return {{"schema", rundir::kRanksManifestSchema},
          {"run_id", run_id},
          {"status", status},
          {"launcher", me.launcher},
          {"world_size", me.world_size}};
}

}  // namespace

std::int64_t default_run_timeout_ns(std::int64_t slowest_discovery_ns, std::uint64_t most_kernels) {
  return std::max(kMinRunTimeoutNs, kDiscoveryFactor * slowest_discovery_ns) +
         static_cast<std::int64_t>(most_kernels) * kPerKernelNs;
}

Lockstep::Lockstep(RankSync sync, fs::path top, bool profiled, double deep_timeout_s)
    : sync_(std::move(sync)),
      top_(std::move(top)),
      profiled_(profiled),
      deep_timeout_s_(deep_timeout_s),
      restart_count_(restart_count()),
      agent_store_(uses_agent_store()) {}

Result<RankPlan> Lockstep::agree(const Selection& selection, std::int64_t discovery_wall_ns) {
  discovery_wall_ns_ = discovery_wall_ns;
  std::vector<std::uint64_t> kernels;
  for (const auto& inv : selection.invocations) kernels.push_back(inv.launch_count);
  if (Status s = sync_.say("selected", {{"profiled", profiled_}, {"kernels_per_run", kernels},
                                        {"discovery_wall_ns", discovery_wall_ns}});
      !s) {
    return s.error();
  }
  // The others' discovery ran alongside this one's (their programs wait for each other).
  const std::int64_t wait_ns = deep_timeout_s_ > 0 ? seconds_ns(deep_timeout_s_)
                                                   : default_run_timeout_ns(discovery_wall_ns, 0);
  if (!sync_.leader()) {
    auto plan = sync_.hear_leader("plan", 2 * wait_ns);
    if (!plan) return plan.error();
    plan_.runs = plan->value("runs", std::size_t{0});
    plan_.run_timeout_ns = plan->value("run_timeout_ns", std::vector<std::int64_t>{});
    plan_.store_ports = plan->value("store_ports", std::vector<int>{});
    if (plan_.run_timeout_ns.size() != plan_.runs || (!plan_.store_ports.empty() && plan_.store_ports.size() != plan_.runs)) {
      return make_error("", 0, "rank 0's plan is not whole");
    }
    return plan_;
  }
  auto all = sync_.gather("selected", wait_ns);
  if (!all) return all.error();
  std::int64_t slowest = 0;
  std::vector<std::uint64_t> most;
  for (const auto& said : *all) {
    slowest = std::max(slowest, said.value("discovery_wall_ns", std::int64_t{0}));
    const auto runs = said.value("kernels_per_run", std::vector<std::uint64_t>{});
    if (runs.size() > most.size()) most.resize(runs.size(), 0);
    for (std::size_t k = 0; k < runs.size(); ++k) most[k] = std::max(most[k], runs[k]);
  }
  plan_.runs = most.size();
  for (auto kernels_in_run : most) {
    plan_.run_timeout_ns.push_back(deep_timeout_s_ > 0 ? seconds_ns(deep_timeout_s_)
                                                       : default_run_timeout_ns(slowest, kernels_in_run));
  }
  if (agent_store_) plan_.store_ports = free_store_ports(plan_.runs);
  if (Status s = sync_.say("plan", {{"runs", plan_.runs},
                                    {"run_timeout_ns", plan_.run_timeout_ns},
                                    {"store_ports", plan_.store_ports}});
      !s) {
    return s.error();
  }
  return plan_;
}

Status Lockstep::before_run(std::size_t k) const {
  const std::string step = run_step_name(k);
  if (Status s = sync_.say(step, nlohmann::json::object()); !s) return s;
  const std::int64_t wait_ns = kBetweenRunsNs + (k == 0 ? 0 : plan_.run_timeout_ns[k - 1]);
  auto all = sync_.gather(step, wait_ns);
  if (!all) return all.error();
  return ok_status();
}

std::string Lockstep::partner_lost(std::size_t k) const {
  return sync_.partner_lost(k + 1 < plan_.runs ? run_step_name(k + 1) : std::string("finished"));
}

std::vector<std::string> Lockstep::run_environment(std::size_t k) const {
  std::vector<std::string> env;
  if (restart_count_) {
    env.push_back(fmt::format("TORCHELASTIC_RESTART_COUNT={}",
                              *restart_count_ + kRestartCountStride * static_cast<long long>(k + 1)));
  }
  if (k < plan_.store_ports.size()) {
    env.push_back("TORCHELASTIC_USE_AGENT_STORE=False");
    env.push_back(fmt::format("MASTER_PORT={}", plan_.store_ports[k]));
  }
  return env;
}

void Lockstep::finish(const rundir::Manifest& manifest, int exit_code, const std::vector<int>& profiled_ranks) {
  const int rank = sync_.me().rank;
  if (exit_code != 0) sync_.abort(fmt::format("{}: {}", manifest.status, manifest.status_reason));
  (void)sync_.say("finished", outcome(manifest, exit_code, rank, profiled_));
  if (!sync_.leader()) return;
  std::int64_t wait_ns = default_run_timeout_ns(discovery_wall_ns_, 0);
  for (auto t : plan_.run_timeout_ns) wait_ns = std::max(wait_ns, t);
  const auto ranks = sync_.collect("finished", wait_ns);
  bool all_complete = true;
  for (const auto& r : ranks) all_complete = all_complete && r.value("status", "") == "complete";
  nlohmann::ordered_json job = job_manifest(sync_.run_id(), sync_.me(), all_complete ? "complete" : "failed");
  job["command"] = manifest.command;
  std::vector<int> profiled = profiled_ranks;
  if (profiled.empty()) {
    for (int r = 0; r < sync_.me().world_size; ++r) profiled.push_back(r);
  }
  job["profiled_ranks"] = profiled;
  job["deep_runs"] = {{"runs", plan_.runs}, {"run_timeout_ns", plan_.run_timeout_ns}};
  if (!plan_.store_ports.empty()) job["deep_runs"]["store_ports"] = plan_.store_ports;
  job["lockstep"] =
      "every rank ran its program once in discovery and once per deep run; a rank without an ncu run of its own "
      "ran it untouched";
  job["ranks"] = ranks;
  (void)write_file_atomically((top_ / "manifest.json").string(), job.dump(2) + "\n");
  sync_.close();
}

Status check_ranks(const ProfileRunOptions& opt, const LauncherInfo& me) {
  for (int r : opt.ranks) {
    if (r < 0 || r >= me.world_size) {
      return make_error("", 0, fmt::format("--ranks {}: the job has ranks 0 to {}", r, me.world_size - 1));
    }
  }
  return ok_status();
}

Result<RankedRun> open_ranked_run(const ProfileRunOptions& opt, const LauncherInfo& me, const std::string& run_id,
                                  std::function<bool()> stop) {
  const std::int64_t join_ns = std::max(kMinRunTimeoutNs, seconds_ns(opt.deep_timeout_s));
  Status top_made = ok_status();
  if (me.rank == 0) {
    const fs::path top = fs::path(opt.out) / run_id;
    top_made = make_top(top, opt.force_overwrite);
    if (top_made) {
      top_made = write_file_atomically((top / "manifest.json").string(),
                                       job_manifest(run_id, me, "running").dump(2) + "\n");
    }
  }
  auto sync = RankSync::join(opt.out, me, run_id, join_ns, std::move(stop));
  if (!sync) return sync.error();
  if (!top_made) {
    sync->abort(top_made.error().to_string());
    return top_made.error();
  }
  const fs::path top = fs::path(opt.out) / sync->run_id();
  auto dir = rundir::create_run_dir(top, rank_name(me.rank), false);
  if (!dir) {
    sync->abort(dir.error().to_string());
    return dir.error();
  }
  const bool profiled = opt.ranks.empty() || std::find(opt.ranks.begin(), opt.ranks.end(), me.rank) != opt.ranks.end();
  RankedRun ranked;
  ranked.dir = *dir;
  ranked.lockstep.emplace(std::move(*sync), top, profiled, opt.deep_timeout_s);
  return ranked;
}

}  // namespace kernlens::profile

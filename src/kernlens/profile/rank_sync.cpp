#include "kernlens/profile/rank_sync.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "kernlens/common/file.h"
#include "kernlens/common/text.h"

namespace kernlens::profile {
namespace fs = std::filesystem;
namespace {

constexpr auto kPollPeriod = std::chrono::milliseconds(50);

std::optional<std::string_view> env_value(char** environ_list, std::string_view name) {
  for (char** e = environ_list; e && *e; ++e) {
    std::string_view entry(*e);
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

// Each launcher's rank and world-size variables, and the variables that tell one job of it
// from another; in the order they are looked for.
struct LauncherVars {
  std::string_view launcher, rank, size;
  std::vector<std::string_view> job;
};

const std::vector<LauncherVars>& launcher_table() {
  static const std::vector<LauncherVars> table = {
      {"torchrun", "RANK", "WORLD_SIZE",
       {"TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT"}},
      {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
       {"PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid", "OMPI_MCA_ess_base_jobid"}},
      {"mpirun", "PMI_RANK", "PMI_SIZE", {"PMI_KVSNAME", "PMIX_NAMESPACE"}},
      {"srun", "SLURM_PROCID", "SLURM_NTASKS", {"SLURM_JOB_ID", "SLURM_STEP_ID"}},
  };
  return table;
}

std::optional<int> to_int(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// A process of this host that has not been reaped (a zombie counts: its parent will reap it).
bool alive(std::int64_t pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

std::optional<nlohmann::json> read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

// A step as the errors name it: "run-2" is "deep run 2".
std::string step_words(const std::string& step) {
  if (step.starts_with("run-")) return "deep run " + step.substr(4);
  if (step == "selected") return "the end of its discovery";
  if (step == "plan") return "rank 0's plan";
  if (step == "finished") return "the end of its run";
  return step;
}

std::string seconds(std::int64_t ns) { return fmt::format("{:.0f} s", static_cast<double>(ns) * 1e-9); }

}  // namespace

std::string rank_name(int rank) { return fmt::format("rank-{}", rank); }

Result<std::optional<LauncherInfo>> launcher_info(char** environ_list) {
  for (const auto& vars : launcher_table()) {
    auto rank_text = env_value(environ_list, vars.rank);
    if (!rank_text) continue;
    auto rank = to_int(*rank_text);
    if (!rank || *rank < 0) return make_error("", 0, fmt::format("{}={}: not a rank", vars.rank, *rank_text));
    // A rank without a world size is a job step of one process (an sbatch script has
    // SLURM_PROCID=0 without SLURM_NTASKS unless --ntasks is given).
    auto size_text = env_value(environ_list, vars.size).value_or("1");
    auto size = to_int(size_text);
    if (!size || *size <= *rank) {
      return make_error("", 0, fmt::format("{}={} with {}={}: not a world size that holds the rank", vars.size,
                                           size_text, vars.rank, *rank_text));
    }
    LauncherInfo info{*rank, *size, std::string(vars.launcher), {}};
    std::string job(vars.launcher);
    bool known = false;
    for (auto name : vars.job) {
      if (auto v = env_value(environ_list, name)) {
        job += "-" + std::string(*v);
        known = true;
      }
    }
    // Without a job identity, the ranks of one node share their parent: the launcher.
    if (!known) job += fmt::format("-ppid{}", ::getppid());
    info.job = file_name_safe(job);
    return std::optional<LauncherInfo>(info);
  }
  return std::optional<LauncherInfo>();
}

Result<RankSync> RankSync::join(const fs::path& out, const LauncherInfo& me, const std::string& run_id,
                                std::int64_t timeout_ns, std::function<bool()> stop) {
  RankSync sync;
  sync.session_ = out / ".kernlens-ranks" / me.job;
  sync.me_ = me;
  sync.host_ = host_name();
  sync.stop_ = std::move(stop);
  const nlohmann::json hello = {{"pid", ::getpid()}, {"host", sync.host_}};
  std::error_code ec;
  if (sync.leader()) {
    // A fresh folder, filled, then renamed into place: a rank never sees half a session, nor
    // one an earlier job of the same identity left (it is removed first).
    const fs::path fresh = sync.session_.string() + fmt::format(".new-{}", ::getpid());
    fs::remove_all(fresh, ec);
    fs::create_directories(fresh, ec);
    if (ec) return make_error(fresh.string(), 0, "cannot create the ranks' session folder: " + ec.message());
    nlohmann::json leader = hello;
    leader["run_id"] = run_id;
    leader["world_size"] = me.world_size;
    for (const auto& [name, body] : {std::pair{std::string("leader.json"), leader},
                                     std::pair{"hello." + rank_name(0) + ".json", hello}}) {
      if (Status s = write_file_atomically((fresh / name).string(), body.dump() + "\n"); !s) return s.error();
    }
    fs::remove_all(sync.session_, ec);
    fs::rename(fresh, sync.session_, ec);
    if (ec) return make_error(sync.session_.string(), 0, "cannot open the ranks' session: " + ec.message());
    sync.run_id_ = run_id;
    return sync;
  }
  const auto deadline = Clock::now() + std::chrono::nanoseconds(timeout_ns);
  while (true) {
    auto leader = read_json(sync.session_ / "leader.json");
    // A leader.json whose rank 0 is gone on this host is an earlier job's: wait for this one's.
    if (leader && leader->value("world_size", 0) == me.world_size &&
        (leader->value("host", "") != sync.host_ || alive(leader->value("pid", std::int64_t{0})))) {
      sync.run_id_ = leader->value("run_id", "");
      break;
    }
    if (sync.stop_ && sync.stop_()) return make_error("", 0, "interrupted while waiting for rank 0");
    if (Clock::now() >= deadline) {
      return make_error(sync.session_.string(), 0,
                        fmt::format("timed out after {} waiting for rank 0 to open the session (is rank 0 running "
                                    "kernlens profile with the same --output?)",
                                    seconds(timeout_ns)));
    }
    std::this_thread::sleep_for(kPollPeriod);
  }
  if (Status s = sync.say("hello", hello); !s) return s.error();
  return sync;
}

fs::path RankSync::file(const std::string& step, int rank) const {
  return session_ / fmt::format("{}.{}.json", step, rank_name(rank));
}

Status RankSync::say(const std::string& step, const nlohmann::json& body) const {
  return write_file_atomically(file(step, me_.rank).string(), body.dump() + "\n");
}

void RankSync::abort(const std::string& why) const { (void)say("abort", {{"why", why}}); }

std::string RankSync::lost(int r, const std::string& step) const {
  if (auto aborted = read_json(file("abort", r))) {
    return fmt::format("rank {} stopped: {}", r, aborted->value("why", "(no reason given)"));
  }
  auto hello = read_json(file("hello", r));
  if (!hello || hello->value("host", "") != host_ || alive(hello->value("pid", std::int64_t{0}))) return {};
  // It may have said the step just before it exited.
  if (fs::exists(file(step, r))) return {};
  return fmt::format("rank {} (pid {}) died before {}", r, hello->value("pid", std::int64_t{0}), step_words(step));
}

std::string RankSync::partner_lost(const std::string& step) const {
  for (int r = 0; r < me_.world_size; ++r) {
    if (r == me_.rank || fs::exists(file(step, r))) continue;
    if (auto why = lost(r, step); !why.empty()) return why;
  }
  return {};
}

Result<std::vector<nlohmann::json>> RankSync::wait_for(const std::string& step, const std::vector<int>& ranks,
                                                       std::int64_t timeout_ns) const {
  const auto started = Clock::now();
  std::vector<std::optional<nlohmann::json>> heard(ranks.size());
  while (true) {
    bool all = true;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (heard[i]) continue;
      heard[i] = read_json(file(step, ranks[i]));
      if (heard[i]) continue;
      all = false;
      if (auto why = lost(ranks[i], step); !why.empty()) return make_error("", 0, why);
    }
    if (all) break;
    if (stop_ && stop_()) return make_error("", 0, fmt::format("interrupted while waiting for the other ranks ({})", step_words(step)));
    if (timeout_ns > 0 && Clock::now() - started >= std::chrono::nanoseconds(timeout_ns)) {
      std::string missing;
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (!heard[i]) missing += (missing.empty() ? "" : ", ") + std::to_string(ranks[i]);
      }
      return make_error("", 0, fmt::format("timed out after {} waiting for rank {} (for {})", seconds(timeout_ns),
                                           missing, step_words(step)));
    }
    std::this_thread::sleep_for(kPollPeriod);
  }
  std::vector<nlohmann::json> bodies;
  for (auto& h : heard) bodies.push_back(std::move(*h));
  return bodies;
}

Result<std::vector<nlohmann::json>> RankSync::gather(const std::string& step, std::int64_t timeout_ns) const {
  std::vector<int> all(static_cast<std::size_t>(me_.world_size));
  for (int r = 0; r < me_.world_size; ++r) all[static_cast<std::size_t>(r)] = r;
  return wait_for(step, all, timeout_ns);
}

Result<nlohmann::json> RankSync::hear_leader(const std::string& step, std::int64_t timeout_ns) const {
  auto heard = wait_for(step, {0}, timeout_ns);
  if (!heard) return heard.error();
  return std::move(heard->front());
}

std::vector<nlohmann::json> RankSync::collect(const std::string& step, std::int64_t timeout_ns) const {
  const auto deadline = Clock::now() + std::chrono::nanoseconds(timeout_ns);
  std::vector<nlohmann::json> bodies(static_cast<std::size_t>(me_.world_size));
  for (int r = 0; r < me_.world_size; ++r) {
    auto& body = bodies[static_cast<std::size_t>(r)];
    while (true) {
      if (auto said = read_json(file(step, r))) {
        body = std::move(*said);
        break;
      }
      if (auto why = lost(r, step); !why.empty() && !fs::exists(file("abort", r))) {
        body = {{"rank", r}, {"lost", why}};
        break;
      }
      if (Clock::now() >= deadline || (stop_ && stop_())) {
        auto why = lost(r, step);
        body = {{"rank", r}, {"lost", why.empty() ? fmt::format("rank {} did not say how it ended", r) : why}};
        break;
      }
      std::this_thread::sleep_for(kPollPeriod);
    }
  }
  return bodies;
}

void RankSync::close() const {
  std::error_code ec;
  fs::remove_all(session_, ec);
  fs::remove(session_.parent_path(), ec);  // only when empty: another job may use it
}

}  // namespace kernlens::profile

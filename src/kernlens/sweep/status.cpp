#include "kernlens/sweep/status.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "kernlens/rundir/manifest.h"

namespace kernlens::sweep {
namespace fs = std::filesystem;
namespace {

// Slurm's job states (squeue(1), sacct(1) "JOB STATE CODES") that mean the task is alive.
constexpr std::string_view kWaiting[] = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
                                         "RESV_DEL_HOLD", "SUSPENDED", "STOPPED", "SPECIAL_EXIT"};
constexpr std::string_view kRunning[] = {"RUNNING", "COMPLETING", "SIGNALING", "STAGE_OUT", "RESIZING"};

template <std::size_t N>
bool one_of(std::string_view s, const std::string_view (&list)[N]) {
  for (auto item : list) {
    if (s == item) return true;
  }
  return false;
}

std::string submissions_path(const Plan& plan) {
  return (fs::path(plan.sweep_dir()) / "submissions.jsonl").string();
}

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

// A --local run going on now: its kernlens process is alive on this host.
bool local_alive(const Submission& s) {
  if (s.host != host_name() || s.pid <= 0) return false;
  return ::kill(static_cast<pid_t>(s.pid), 0) == 0 || errno == EPERM;
}

struct LastTask {
  const Submission* submission = nullptr;
  std::string task;  // "123_4" or "local"
};

LastTask last_task(const std::vector<Submission>& submissions, const std::string& id) {
  LastTask last;
  for (const auto& s : submissions) {
    for (const auto& [task, point] : s.tasks) {
      if (point == id) last = {&s, s.local() ? "local" : fmt::format("{}_{}", s.job, task)};
    }
  }
  return last;
}

// The last line of a log that says something (its last 4 KiB read), for a failure's detail.
std::string last_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
  return tail.substr(tail.find_last_of('\n') == std::string::npos ? 0 : tail.find_last_of('\n') + 1);
}

std::string slurm_log(const Plan& plan, const std::string& task) {
  return (fs::path(plan.sweep_dir()) / fmt::format("slurm-{}.out", task)).string();
}

// What is known of the point's last task: Slurm's word for it (when Slurm was asked and knows
// it), whether it may still be alive, and its log.
struct TaskView {
  std::optional<std::string> word;
  bool asked = false;
  bool alive = false;
  std::string log;
};

TaskView task_view(const Plan& plan, const Point& p, const LastTask& last, const std::optional<TaskStates>& slurm) {
  TaskView v;
  if (last.submission->local()) {
    v.alive = local_alive(*last.submission);
    v.log = (fs::path(p.dir) / "local.stderr.log").string();
    return v;
  }
  v.asked = slurm.has_value();
  if (v.asked) {
    if (auto it = slurm->find(last.task); it != slurm->end()) v.word = it->second;
  }
  // Slurm not asked: nothing says the task is gone.
  v.alive = !v.asked || (v.word && (one_of(*v.word, kWaiting) || one_of(*v.word, kRunning)));
  v.log = slurm_log(plan, last.task);
  return v;
}

// Why a task that is gone left no finished run, and what its log said last.
std::string gone_detail(const LastTask& last, const TaskView& v, bool has_manifest) {
  std::string ended = v.word ? fmt::format("the task ended {}", *v.word)
                      : last.submission->local() ? std::string("kernlens profile ended")
                                                 : std::string("Slurm no longer knows the task");
  std::string what = has_manifest ? "before its run finished (the manifest says running)" : "without a run directory";
  std::string said = last_line(v.log);
  return fmt::format("{} {}; see {}{}{}", ended, what, v.log, said.empty() ? "" : ": ", said);
}

PointStatus status_of(const Plan& plan, const Point& p, const LastTask& last, const std::optional<TaskStates>& slurm) {
  auto state = [&](State s, std::string detail) { return PointStatus{p.index, s, std::move(detail), last.task}; };
  auto manifest = run_state(p.run_dir());
  if (manifest && manifest->status == "complete") return state(State::kDone, p.run_dir());
  if (!last.submission) {
    if (!manifest) return state(State::kNotStarted, "");
    return state(State::kFailed, fmt::format("a run not made by this sweep ({})", manifest->status));
  }
  const TaskView v = task_view(plan, p, last, slurm);
  if (v.word && one_of(*v.word, kWaiting)) return state(State::kQueued, fmt::format("Slurm: {}", *v.word));
  if (v.word && one_of(*v.word, kRunning)) return state(State::kRunning, fmt::format("Slurm: {}", *v.word));
  if (manifest && manifest->status != "running") {
    return state(State::kFailed, fmt::format("{}: {}", manifest->status, manifest->reason));
  }
  if (v.alive && manifest) return state(State::kRunning, "the manifest says running");
  if (v.alive) return state(State::kQueued, v.asked || last.submission->local() ? "submitted" : "submitted (Slurm could not be asked)");
  return state(State::kFailed, gone_detail(last, v, manifest.has_value()));
}

}  // namespace

std::string_view state_name(State s) {
  switch (s) {
    case State::kDone: return "done";
    case State::kRunning: return "running";
    case State::kQueued: return "queued";
    case State::kFailed: return "failed";
    case State::kNotStarted: return "not started";
  }
  return "";
}

Status append_submission(const Plan& plan, const Submission& s) {
  nlohmann::ordered_json j;
  j["job"] = s.job;
  auto& tasks = j["tasks"] = nlohmann::ordered_json::object();
  for (const auto& [task, id] : s.tasks) tasks[std::to_string(task)] = id;
  if (!s.script.empty()) j["script"] = s.script;
  if (s.local()) {
    j["host"] = s.host.empty() ? host_name() : s.host;
    j["pid"] = s.pid;
  }
  std::error_code ec;
  fs::create_directories(plan.sweep_dir(), ec);
  std::ofstream out(submissions_path(plan), std::ios::app);
  out << j.dump() << "\n";
  out.flush();
  if (!out) return make_error(submissions_path(plan), 0, "cannot append the submission");
  return ok_status();
}

Result<std::vector<Submission>> read_submissions(const Plan& plan) {
  const std::string path = submissions_path(plan);
  std::vector<Submission> out;
  std::ifstream in(path);
  std::string line;
  for (std::int64_t n = 1; std::getline(in, line); ++n) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("job") || !j["job"].is_string() || !j.contains("tasks") ||
        !j["tasks"].is_object()) {
      return make_error(path, n, "not a submission record ({\"job\": ..., \"tasks\": {...}} expected)");
    }
    Submission s;
    s.job = j["job"].get<std::string>();
    s.script = j.value("script", "");
    s.host = j.value("host", "");
    s.pid = j.value("pid", 0L);
    for (const auto& [task, id] : j["tasks"].items()) {
      if (!id.is_string() || task.empty() || task.find_first_not_of("0123456789") != std::string::npos) {
        return make_error(path, n, fmt::format("task '{}': a task number and a point name expected", task));
      }
      s.tasks.emplace_back(std::stoul(task), id.get<std::string>());
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<PointStatus> sweep_status(const Plan& plan, const std::vector<Submission>& submissions,
                                      const std::optional<TaskStates>& slurm) {
  std::vector<PointStatus> out;
  for (const auto& p : plan.points) out.push_back(status_of(plan, p, last_task(submissions, p.id), slurm));
  return out;
}

std::vector<std::string> slurm_jobs(const std::vector<Submission>& submissions) {
  std::vector<std::string> jobs;
  for (const auto& s : submissions) {
    if (!s.local()) jobs.push_back(s.job);
  }
  return jobs;
}

std::optional<RunState> run_state(const std::string& run_dir) {
  if (!rundir::is_run_directory(run_dir)) return std::nullopt;
  auto manifest = rundir::read_manifest(run_dir);
  if (!manifest) return RunState{"damaged", "manifest.json is not a JSON object"};
  return RunState{manifest->status, manifest->status_reason};
}

bool run_complete(const std::string& run_dir) {
  auto m = run_state(run_dir);
  return m && m->status == "complete";
}

}  // namespace kernlens::sweep

#include "kernlens/sweep/slurm.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "kernlens/common/shell.h"
#include "kernlens/profile/ncu_command.h"
#include "kernlens/profile/process.h"

namespace kernlens::sweep {
namespace fs = std::filesystem;
namespace {

constexpr std::int64_t kSlurmTimeoutNs = 60'000'000'000;

Result<std::string> sbatch_line(std::string_view option, std::string_view value) {
  if (value.find_first_of(" \t\n\"'") != std::string_view::npos) {
    return make_error("", 0, fmt::format("#SBATCH --{}={}: sbatch splits script options at white space and quotes; "
                                         "choose a value (or run_root) without them",
                                         option, value));
  }
  return fmt::format("#SBATCH --{}={}\n", option, value);
}

Result<std::string> sbatch_header(const Plan& plan, const std::vector<std::size_t>& points) {
  const SlurmOptions& s = plan.spec.slurm;
  std::vector<std::pair<std::string_view, std::string>> options = {
      {"job-name", "kernlens-" + plan.spec.name},
      {"array", array_spec(points, s.max_parallel)},
      {"output", (fs::path(plan.sweep_dir()) / "slurm-%A_%a.out").string()},
  };
  for (auto [name, value] : {std::pair{"partition", &s.partition}, std::pair{"time", &s.time},
                             std::pair{"mem", &s.mem}, std::pair{"account", &s.account}}) {
    if (!value->empty()) options.emplace_back(name, *value);
  }
  if (s.gpus && *s.gpus > 0) options.emplace_back("gres", fmt::format("gpu:{}", *s.gpus));
  if (s.cpus_per_task) options.emplace_back("cpus-per-task", std::to_string(*s.cpus_per_task));
  std::string out;
  for (const auto& [name, value] : options) {
    auto line = sbatch_line(name, value);
    if (!line) return line.error();
    out += *line;
  }
  for (const auto& extra : s.options) out += fmt::format("#SBATCH {}\n", extra);
  return out;
}

std::vector<std::size_t> expand_ranges(std::string_view list) {
  std::vector<std::size_t> out;
  list = list.substr(0, list.find('%'));
  while (!list.empty()) {
    std::string_view item = list.substr(0, list.find(','));
    list.remove_prefix(std::min(list.size(), item.size() + 1));
    std::size_t lo = 0, hi = 0;
    auto dash = item.find('-');
    bool ok = std::from_chars(item.data(), item.data() + std::min(item.size(), dash), lo).ec == std::errc();
    hi = lo;
    if (dash != std::string_view::npos) {
      ok = ok && std::from_chars(item.data() + dash + 1, item.data() + item.size(), hi).ec == std::errc();
    }
    if (!ok || hi < lo || hi - lo > 100000) continue;
    for (std::size_t t = lo; t <= hi; ++t) out.push_back(t);
  }
  return out;
}

std::optional<TaskStates> ask(const std::vector<std::string>& argv) {
  auto run = profile::run_and_capture(argv, kSlurmTimeoutNs);
  if (!run) return std::nullopt;
  if (run->result.exit_code != 0) {
    // squeue's answer when Slurm has forgotten every job asked about: none of them is alive.
    if (run->stderr_text.find("Invalid job id") != std::string::npos) return TaskStates{};
    return std::nullopt;
  }
  return parse_task_states(run->stdout_text);
}

}  // namespace

std::string array_spec(std::vector<std::size_t> tasks, std::optional<std::int64_t> max_parallel) {
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  std::string out;
  for (std::size_t i = 0; i < tasks.size();) {
    std::size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    out += j == i ? fmt::format("{}{}", out.empty() ? "" : ",", tasks[i])
                  : fmt::format("{}{}-{}", out.empty() ? "" : ",", tasks[i], tasks[j]);
    i = j + 1;
  }
  if (max_parallel && *max_parallel > 0) out += fmt::format("%{}", *max_parallel);
  return out;
}

Result<std::string> sbatch_script(const Plan& plan, const std::vector<std::size_t>& points,
                                  const std::vector<std::vector<std::string>>& argvs) {
  auto header = sbatch_header(plan, points);
  if (!header) return header.error();
  std::string out = fmt::format(
      "#!/bin/bash\n# kernlens sweep {}: {} point(s) of {}, one array task each (the task id is the point's index).\n"
      "# Written by `kernlens sweep submit`; `kernlens sweep status` reads what the tasks leave.\n{}",
      plan.spec.name, points.size(), fs::absolute(plan.spec.path).lexically_normal().string(), *header);
  for (const auto& line : plan.spec.slurm.setup) out += line + "\n";
  out += fmt::format("cd {} || exit 2\ncase \"${{SLURM_ARRAY_TASK_ID:-}}\" in\n", shell_quote(plan.spec.workdir));
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = plan.points[points[i]];
    out += fmt::format("  {})  # {}\n    exec {} ;;\n", p.index, p.id, shell_join(with_env(p, argvs[i])));
  }
  out += "  *) echo \"kernlens sweep: no point ${SLURM_ARRAY_TASK_ID:-} in this script\" >&2; exit 2 ;;\nesac\n";
  return out;
}

Result<std::string> sbatch(const std::string& script_path) {
  auto run = profile::run_and_capture({"sbatch", "--parsable", script_path}, kSlurmTimeoutNs);
  if (!run) return make_error("", 0, fmt::format("{} (is this a Slurm login node? --local runs here)", run.error().message));
  std::string out = run->stdout_text.substr(0, run->stdout_text.find_first_of(";\n"));
  if (run->result.exit_code != 0 || out.empty()) {
    std::string why = run->stderr_text.empty() ? run->result.describe() : run->stderr_text;
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return make_error(script_path, 0, "sbatch refused the script: " + why);
  }
  return out;
}

TaskStates parse_task_states(std::string_view text) {
  TaskStates out;
  while (!text.empty()) {
    std::string_view line = text.substr(0, text.find('\n'));
    text.remove_prefix(std::min(text.size(), line.size() + 1));
    auto bar = line.find('|');
    if (bar == std::string_view::npos) continue;
    std::string_view id = line.substr(0, bar);
    std::string_view state = line.substr(bar + 1);
    state = state.substr(0, state.find_first_of(" |+\r"));
    auto underscore = id.find('_');
    if (underscore == std::string_view::npos || id.find('.') != std::string_view::npos || state.empty()) continue;
    std::string_view job = id.substr(0, underscore), task = id.substr(underscore + 1);
    if (task.size() > 2 && task.front() == '[' && task.back() == ']') {
      for (std::size_t t : expand_ranges(task.substr(1, task.size() - 2))) out[fmt::format("{}_{}", job, t)] = state;
    } else {
      out[std::string(id)] = state;
    }
  }
  return out;
}

std::optional<TaskStates> ask_slurm(const std::vector<std::string>& jobs) {
  if (jobs.empty()) return TaskStates{};
  std::string list;
  for (const auto& j : jobs) list += fmt::format("{}{}", list.empty() ? "" : ",", j);
  auto live = ask({"squeue", "--noheader", "--states=all", "--jobs=" + list, "--format=%i|%T"});
  auto history = ask({"sacct", "--noheader", "--parsable2", "--allocations", "--jobs=" + list, "--format=JobID,State"});
  if (!live && !history) return std::nullopt;
  TaskStates states = live.value_or(TaskStates{});
  if (history) states.insert(history->begin(), history->end());  // squeue's word wins: it is the newer
  return states;
}

}  // namespace kernlens::sweep

#include "kernlens/sweep/summary.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "kernlens/common/shell.h"
#include "kernlens/profile/ncu_command.h"

namespace kernlens::sweep {
namespace {

nlohmann::ordered_json object_of(const Pairs& pairs) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : pairs) j[k] = v;
  return j;
}

std::string joined(const Pairs& pairs) {
  std::string out;
  for (const auto& [k, v] : pairs) out += fmt::format("{}{}={}", out.empty() ? "" : " ", k, v);
  return out;
}

constexpr std::array kStates = {State::kDone, State::kRunning, State::kQueued, State::kFailed, State::kNotStarted};

std::size_t count_in(const std::vector<PointStatus>& statuses, State s) {
  return static_cast<std::size_t>(
      std::count_if(statuses.begin(), statuses.end(), [s](const PointStatus& p) { return p.state == s; }));
}

std::string counts(const std::vector<PointStatus>& statuses) {
  std::string out;
  for (State s : kStates) {
    std::size_t n = count_in(statuses, s);
    if (n > 0) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, state_name(s));
  }
  return out;
}

}  // namespace

std::string plan_text(const Plan& plan, bool with_tags) {
  std::string out = fmt::format("sweep {}: {} point{} under {}\n", plan.spec.name, plan.points.size(),
                                plan.points.size() == 1 ? "" : "s", plan.spec.run_root);
  for (const auto& p : plan.points) {
    out += fmt::format("[{}] {}  {}\n    tags: {}\n", p.index, p.id, p.run_dir(), joined(p.tags));
    if (!p.env.empty()) out += fmt::format("    env:  {}\n", joined(p.env));
    out += fmt::format("    {}\n", shell_join(profile_argv(plan, p, with_tags)));
  }
  return out;
}

nlohmann::ordered_json plan_json(const Plan& plan, bool with_tags) {
  nlohmann::ordered_json j;
  j["schema"] = "kernlens.sweep-plan/1";
  j["sweep"] = plan.spec.name;
  j["run_root"] = plan.spec.run_root;
  j["workdir"] = plan.spec.workdir;
  auto& points = j["points"] = nlohmann::ordered_json::array();
  for (const auto& p : plan.points) {
    points.push_back({{"index", p.index}, {"id", p.id}, {"run_dir", p.run_dir()}, {"parameters", object_of(p.parameters)},
                      {"tags", object_of(p.tags)}, {"env", object_of(p.env)},
                      {"argv", profile_argv(plan, p, with_tags)}});
  }
  return j;
}

std::string status_text(const Plan& plan, const std::vector<PointStatus>& statuses, bool slurm_silent) {
  std::string out = fmt::format("sweep {}: {} point{}: {}{}\n", plan.spec.name, statuses.size(),
                                statuses.size() == 1 ? "" : "s", counts(statuses),
                                slurm_silent ? " (neither squeue nor sacct answered: Slurm's side is unknown)" : "");
  std::size_t width = 5;
  for (const auto& s : statuses) width = std::max(width, plan.points[s.point].id.size());
  for (const auto& s : statuses) {
    std::string task = s.task.empty() ? "" : fmt::format(" [{}]", s.task);
    out += fmt::format("  {:<{}}  {:<11}  {}{}\n", plan.points[s.point].id, width, state_name(s.state), s.detail, task);
  }
  return out;
}

nlohmann::ordered_json status_json(const Plan& plan, const std::vector<PointStatus>& statuses, bool slurm_silent) {
  nlohmann::ordered_json j;
  j["schema"] = "kernlens.sweep-status/1";
  j["sweep"] = plan.spec.name;
  j["slurm_silent"] = slurm_silent;
  auto& counts_json = j["counts"] = nlohmann::ordered_json::object();
  for (State s : kStates) {
    counts_json[std::string(state_name(s))] = count_in(statuses, s);
  }
  auto& points = j["points"] = nlohmann::ordered_json::array();
  for (const auto& s : statuses) {
    const Point& p = plan.points[s.point];
    points.push_back({{"index", p.index}, {"id", p.id}, {"state", state_name(s.state)}, {"detail", s.detail},
                      {"task", s.task}, {"run_dir", p.run_dir()}});
  }
  return j;
}

}  // namespace kernlens::sweep

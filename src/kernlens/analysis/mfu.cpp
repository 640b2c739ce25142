#include "kernlens/analysis/mfu.h"

#include <charconv>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "kernlens/analysis/kernel_metrics.h"

namespace kernlens::analysis {
namespace {

// What the profile measured of a set of launches.
struct Measured {
  double kernel_time_ns = 0;
  double deep_time_ns = 0;   // with throughput figures
  double flops_time_ns = 0;  // with complete FLOP counts
  double uncounted_ns = 0;   // profiled (with metrics), but without complete FLOP counts
  double flops = 0;
  std::array<double, kFlopPathCount> by_path{};
  std::string flops_missing;

  void add(const MetricResolver& r, const model::Launch& launch) {
    auto w = launch.total_duration_ns();
    if (!w) return;
    kernel_time_ns += *w;
    if (launch.metrics_count == 0) return;  // a timeline's launch: nothing was measured
    if (r.get(launch, Figure::kSmPct)) deep_time_ns += *w;
    std::string why;
    if (auto lf = launch_flops(r, launch, &why)) {
      const auto n = static_cast<double>(launch.count);
      flops += lf->total * n;
      flops_time_ns += *w;
      for (std::size_t p = 0; p < kFlopPathCount; ++p) by_path[p] += lf->by_path[p].value_or(0) * n;
    } else if (launch.metrics_count > 0) {
      uncounted_ns += *w;
      if (flops_missing.empty()) flops_missing = why;
    }
  }

  std::optional<FlopPath> dominant_path() const {
    std::optional<FlopPath> best;
    for (std::size_t p = 0; p < kFlopPathCount; ++p) {
      if (by_path[p] > 0 && (!best || by_path[p] > by_path[static_cast<std::size_t>(*best)])) {
        best = static_cast<FlopPath>(p);
      }
    }
    return best;
  }
};

// The user's FLOPs for a stage: --model-flops, else 2 x --params x --tokens.
std::optional<std::pair<double, std::string>> user_flops(const UserWork& user, const std::string& stage) {
  for (const auto& [s, f] : user.model_flops) {
    if (s == stage) return std::make_pair(f, std::string("--model-flops"));
  }
  for (const auto& [s, t] : user.tokens) {
    if (s == stage && user.params) {
      return std::make_pair(2 * *user.params * t, fmt::format("2 x params x tokens = 2 x {:g} x {:g} (--params, --tokens)",
                                                              *user.params, t));
    }
  }
  return std::nullopt;
}

StageWork compute(const MfuInput& in, const Measured& m, const std::optional<std::pair<double, std::string>>& given,
                  const UserWork& user, double time_ns, std::string_view basis) {
  StageWork w;
  if (m.kernel_time_ns > 0) w.coverage = m.deep_time_ns / m.kernel_time_ns;
  if (given) {
    w.flops = given->first;
    w.flops_source = given->second;
  } else if (m.uncounted_ns > 0) {
    // Scaling up is only sound over launches that were not profiled; profiled launches whose
    // work went uncounted (GEMMs without the tensor counters) would be guessed from others.
    w.flops_source = fmt::format("not measured on {:.1f}% of the kernel time: {}; give --model-flops, or "
                                 "--params and --tokens",
                                 100 * m.uncounted_ns / m.kernel_time_ns, m.flops_missing);
  } else if (m.flops_time_ns > 0) {
    const double covered = m.flops_time_ns / m.kernel_time_ns;
    w.flops = m.flops / covered;
    w.flops_source = covered > 0.9995 ? std::string("measured (ncu FLOP counters)")
                                      : fmt::format("measured on {:.1f}% of the kernel time, scaled to all of it",
                                                    covered * 100);
  } else {
    w.flops_source = "not measured: no launch was profiled with FLOP counters; give --model-flops, or "
                     "--params and --tokens";
  }
  // The measured mix of precisions only speaks for the stage when every profiled launch was counted.
  auto measured_path = m.uncounted_ns > 0 ? std::nullopt : m.dominant_path();
  if (measured_path) {
    w.precision = measured_path, w.precision_source = "measured";
  } else if (user.precision) {
    w.precision = user.precision, w.precision_source = "--precision";
  } else if (w.flops) {
    w.precision = FlopPath::kTensorBf16, w.precision_source = "assumed (--precision to change)";
  }
  w.time_ns = time_ns;
  w.time_basis = basis;
  if (!w.flops) {
    w.mfu_missing = "no FLOP count";
  } else if (!in.peaks) {
    w.mfu_missing = in.no_peaks_reason;
  } else if (w.peak_flops_per_s = in.peaks->flops(*w.precision); !w.peak_flops_per_s) {
    w.mfu_missing = fmt::format("no {} peak known for {}", path_name(*w.precision), in.peaks->gpu);
  } else if (time_ns <= 0) {
    w.mfu_missing = "no time to divide by";
  } else {
    w.mfu = *w.flops / (time_ns * 1e-9 * *w.peak_flops_per_s);
  }
  return w;
}

// The stage a user's STAGE names: a row's full name, or a label only one row has.
Result<std::string> resolve_stage(const std::string& given, const std::vector<StageRow>& stages) {
  std::vector<const StageRow*> by_label;
  for (const auto& s : stages) {
    if (s.name == given) return s.name;
    if (s.label == given) by_label.push_back(&s);
  }
  if (by_label.size() == 1) return by_label.front()->name;
  std::vector<std::string> names;
  for (const auto* s : by_label) names.push_back(s->name);
  if (!names.empty()) {
    return make_error("", 0, fmt::format("stage '{}' is ambiguous ({}): give the full path", given, fmt::join(names, ", ")));
  }
  for (const auto& s : stages) names.push_back(s.name);
  return make_error("", 0, names.empty() ? fmt::format("no stage '{}': the profile has no NVTX stages", given)
                                         : fmt::format("no stage '{}'; stages are: {}", given, fmt::join(names, ", ")));
}

// The user's per-stage values with each stage resolved to its row name.
Result<UserWork> resolve_user_stages(UserWork user, const std::vector<StageRow>& stages) {
  for (auto* list : {&user.tokens, &user.model_flops}) {
    for (auto& [stage, value] : *list) {
      if (stage.empty()) continue;
      auto name = resolve_stage(stage, stages);
      if (!name) return name.error();
      stage = *name;
    }
  }
  return user;
}

}  // namespace

Result<std::vector<StageWork>> stage_work(const MfuInput& in, const std::vector<StageRow>& stages,
                                          const UserWork& given_user) {
  auto user = resolve_user_stages(given_user, stages);
  if (!user) return user.error();
  std::unordered_map<std::string, std::size_t> row_of;
  for (std::size_t i = 0; i < stages.size(); ++i) row_of.emplace(stages[i].name, i);
  std::vector<Measured> measured(stages.size());
  std::vector<std::vector<std::size_t>> rows_of_stage(in.profile.stages.size());
  for (std::size_t s = 0; s < in.profile.stages.size(); ++s) {
    for (const auto& name : stage_row_names(in.profile.stages[s])) {
      if (auto it = row_of.find(name); it != row_of.end()) rows_of_stage[s].push_back(it->second);
    }
  }
  const auto whole = row_of.find(std::string(kWholeRunStage));
  for (const auto& launch : in.profile.launches) {
    if (launch.kind != model::LaunchKind::kKernel) continue;
    for (std::size_t row : rows_of_stage[launch.stage]) measured[row].add(in.resolver, launch);
    if (whole != row_of.end()) measured[whole->second].add(in.resolver, launch);
  }
  std::vector<StageWork> out;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const StageRow& s = stages[i];
    const bool wall = s.wall_ns.has_value();
    out.push_back(compute(in, measured[i], user_flops(*user, s.name), *user,
                          wall ? *s.wall_ns : s.kernel_time_ns, wall ? "wall time" : "kernel time"));
  }
  return out;
}

StageWork whole_profile_work(const MfuInput& in, std::optional<double> wall_ns, const UserWork& user) {
  Measured m;
  for (const auto& launch : in.profile.launches) {
    if (launch.kind == model::LaunchKind::kKernel) m.add(in.resolver, launch);
  }
  return compute(in, m, user_flops(user, ""), user, wall_ns ? *wall_ns : m.kernel_time_ns,
                 wall_ns ? "wall time" : "kernel time");
}

Result<std::pair<std::string, double>> parse_stage_value(std::string_view text) {
  std::string stage;
  std::string_view number = text;
  if (auto eq = text.rfind('='); eq != std::string_view::npos) {
    stage = std::string(text.substr(0, eq));
    number = text.substr(eq + 1);
    if (stage.empty()) return make_error("", 0, fmt::format("'{}': the stage before '=' is empty", text));
  }
  double v = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (ec != std::errc{} || end != number.data() + number.size() || !std::isfinite(v) || v <= 0) {
    return make_error("", 0, fmt::format("'{}': expected [STAGE=]NUMBER with a positive NUMBER", text));
  }
  return std::make_pair(std::move(stage), v);
}

}  // namespace kernlens::analysis

#include "kernlens/analysis/mfu.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "kernlens/analysis/kernel_metrics.h"
#include "kernlens/common/parallel_chunks.h"


namespace kernlens::analysis {
namespace {

// What the profile measured of a set of launches.
struct Measured {
  double kernel_time_ns = 0;
  double deep_time_ns = 0;  // with throughput figures
  FlopsTotal flops;

  // `resolver()` gives a resolver this thread may use (one is not thread-safe).
  template <class Resolver>
  void add(const MfuInput& in, std::size_t index, Resolver& resolver) {
    const model::Launch& launch = in.profile.launches[index];
    auto w = launch.total_duration_ns();
    flops.add(in.flops.launch(index), w);
    if (!w) return;
    kernel_time_ns += *w;
    if (launch.metrics_count > 0 && resolver().get(launch, Figure::kSmPct)) deep_time_ns += *w;
  }
  void merge(const Measured& later) {
    kernel_time_ns += later.kernel_time_ns;
    deep_time_ns += later.deep_time_ns;
    flops.merge(later.flops);
  }
};

// What the profile measured for each stage row (rows_of_stage: a profile stage's rows), and
// last for the whole profile. The profile's launches are summed in fixed stretches
// (kSumStretchLaunches) as threads come free, each stretch keeping the sums of the rows its
// launches belong to, and each row's stretches are then added in order: every figure is the
// same on any number of threads (FLOPs are fractional: sums grouped otherwise would differ in
// the last bits). The whole profile's sum was one serial pass, the longest part of a large
// analysis on 16 threads. `whole_row`'s sum is the whole profile's, copied, not summed again.
std::vector<Measured> measure(const MfuInput& in, const std::vector<StageRow>& stages,
                              const std::vector<std::vector<std::size_t>>& rows_of_stage,
                              std::optional<std::size_t> whole_row) {
  constexpr auto kNone = std::numeric_limits<std::size_t>::max();
  const std::size_t all = stages.size(), launches = in.profile.launches.size();
  using RowSums = std::vector<std::pair<std::size_t, Measured>>;  // the rows a stretch met
  std::vector<RowSums> stretches((launches + kSumStretchLaunches - 1) / kSumStretchLaunches);
  std::atomic<std::size_t> next{0};
  run_parallel(std::clamp<std::size_t>(default_threads(), 1, std::max<std::size_t>(stretches.size(), 1)), [&](std::size_t t) {
    std::optional<MetricResolver> own;  // made when a launch has metrics
    auto resolver = [&]() -> const MetricResolver& {
      if (t == 0) return in.resolver;  // the calling thread's
      if (!own) own.emplace(in.profile);
      return *own;
    };
    std::vector<std::size_t> at(all + 1, kNone);  // a row's place in the stretch's sums
    for (std::size_t s; (s = next.fetch_add(1)) < stretches.size();) {
      RowSums& sums = stretches[s];
      auto add = [&](std::size_t row, std::size_t i) {
        if (at[row] == kNone) {
          at[row] = sums.size();
          sums.emplace_back(row, Measured{});
        }
        sums[at[row]].second.add(in, i, resolver);
      };
      for (std::size_t i = s * kSumStretchLaunches, end = std::min(launches, i + kSumStretchLaunches); i < end; ++i) {
        const model::Launch& launch = in.profile.launches[i];
        if (launch.kind != model::LaunchKind::kKernel) continue;
        for (std::size_t row : rows_of_stage[launch.stage]) {
          if (row != whole_row) add(row, i);
        }
        add(all, i);
      }
      for (const auto& entry : sums) at[entry.first] = kNone;
    }
  });
  std::vector<Measured> measured(all + 1);
  for (const RowSums& sums : stretches) {
    for (const auto& [row, m] : sums) measured[row].merge(m);
  }
  if (whole_row) measured[*whole_row] = measured[all];
  return measured;
}

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

constexpr std::string_view kGiveWork = "give --model-flops, or --params and --tokens";

// The stage's FLOPs: the user's, else the kernels' (flops.h).
void set_flops(StageWork& w, const MfuInput& in, const Measured& m,
               const std::optional<std::pair<double, std::string>>& given) {
  if (given) {
    w.flops = w.flops_low = w.flops_high = given->first;
    w.flops_source = given->second;
  } else if (!in.flops.any_measured) {
    w.flops_source = in.flops.why_not_measured.empty()
                         ? fmt::format("not measured: no launch was profiled with FLOP counters; {}", kGiveWork)
                         : fmt::format("not measured: {}; {}", in.flops.why_not_measured, kGiveWork);
  } else {
    w.flops_low = m.flops.low();
    w.flops_high = m.flops.high();
    if (m.flops.known()) w.flops = m.flops.low();
    w.flops_source = m.flops.source();
  }
}

StageWork compute(const MfuInput& in, const Measured& m, const std::optional<std::pair<double, std::string>>& given,
                  const UserWork& user, double time_ns, std::string_view basis) {
  StageWork w;
  if (m.kernel_time_ns > 0) w.coverage = m.deep_time_ns / m.kernel_time_ns;
  set_flops(w, in, m, given);
  // The measured mix of precisions speaks for the stage unless kernels never measured may have
  // done any amount of work on another path.
  if (auto measured_path = m.flops.bounded ? m.flops.dominant_path() : std::nullopt) {
    w.precision = measured_path, w.precision_source = "measured";
  } else if (user.precision) {
    w.precision = user.precision, w.precision_source = "--precision";
  } else if (w.flops || user.analytic) {
    w.precision = FlopPath::kTensorBf16, w.precision_source = "assumed (--precision to change)";
  }
  w.time_ns = time_ns;
  w.time_basis = basis;
  if (in.peaks && w.precision) w.peak_flops_per_s = in.peaks->flops(*w.precision);
  if (!w.flops) {
    w.mfu_missing = w.flops_low ? "no kernel of it was measured" : "no FLOP count";
  } else if (!in.peaks) {
    w.mfu_missing = in.no_peaks_reason;
  } else if (!w.peak_flops_per_s) {
    w.mfu_missing = fmt::format("no {} peak known for {}", path_name(*w.precision), in.peaks->gpu);
  } else if (time_ns <= 0) {
    w.mfu_missing = "no time to divide by";
  } else {
    const double capacity = time_ns * 1e-9 * *w.peak_flops_per_s;
    w.mfu = *w.flops / capacity;
    w.mfu_low = *w.flops_low / capacity;
    if (w.flops_high) w.mfu_high = *w.flops_high / capacity;
  }
  return w;
}

// The analytic FLOPs of a stage: what the model computes in the runs of a prefill or decode.
struct Analytic {
  std::optional<double> flops;  // absent: the workload does not say (source: why)
  std::string source;
};

// A prefill or decode stage row, and the model's FLOPs in it.
std::optional<Analytic> analytic_of_row(const AnalyticWork& a, const StageRow& row) {
  const bool prefill = row.label == "prefill";
  if (!prefill && row.label != "decode") return std::nullopt;
  const Workload& w = a.workload;
  if (!prefill && w.decode_steps <= 0) return Analytic{std::nullopt, "give --decode-steps for the decode stage"};
  const double one = prefill ? prefill_flops(a.config, w) : decode_flops(a.config, w);
  std::int64_t runs = 1;
  std::string why = "assumed: --runs to change";
  if (a.runs) {
    runs = *a.runs, why = "given";
  } else if (row.instances) {
    runs = static_cast<std::int64_t>(*row.instances), why = "ranges on the timeline";
  }
  std::string what = prefill ? fmt::format("prefill of batch {} x {} tokens", w.batch, w.prompt_tokens)
                             : fmt::format("{} decode steps of batch {} after {} prompt tokens", w.decode_steps,
                                           w.batch, w.prompt_tokens);
  return Analytic{one * static_cast<double>(runs),
                  fmt::format("{} config {}: {}, {} run{} ({})", a.config.model_type, a.config_path, what, runs,
                              runs == 1 ? "" : "s", why)};
}

// The outermost prefill and decode rows: what the whole profile's analytic FLOPs add up.
bool is_outermost_analytic(const StageRow& row) {
  if (row.label != "prefill" && row.label != "decode") return false;
  const std::string_view path = std::string_view(row.name).substr(0, row.name.size() - row.label.size());
  return path.find("prefill/") == std::string_view::npos && path.find("decode/") == std::string_view::npos;
}

std::optional<Analytic> analytic_of_all(const AnalyticWork& a, const std::vector<StageRow>& stages) {
  std::optional<Analytic> total;
  for (const auto& row : stages) {
    if (!is_outermost_analytic(row)) continue;
    auto one = analytic_of_row(a, row);
    if (!one->flops) return one;
    if (!total) total = Analytic{0, fmt::format("{} config {}: ", a.config.model_type, a.config_path)};
    *total->flops += *one->flops;
    total->source += fmt::format("{}{}", total->source.ends_with(": ") ? "" : " + ", row.name);
  }
  return total;
}

// The analytic FLOPs beside the measured ones: MFU on them, and measured / analytic.
void set_analytic(StageWork& w, const std::optional<Analytic>& analytic) {
  if (!analytic) {
    w.analytic_source = "no stage named prefill or decode to count the model's FLOPs for";
    return;
  }
  w.analytic_source = analytic->source;
  if (!analytic->flops || *analytic->flops <= 0) return;
  const double flops = *analytic->flops;
  w.analytic_flops = flops;
  if (w.peak_flops_per_s && w.time_ns > 0) w.analytic_mfu = flops / (w.time_ns * 1e-9 * *w.peak_flops_per_s);
  if (!w.flops) return;
  w.flops_ratio = *w.flops / flops;
  if (w.flops_high) w.flops_ratio_high = *w.flops_high / flops;
  if (*w.flops_ratio > kRatioHigh) {
    w.flops_ratio_flag = fmt::format("measured / analytic {:.2f}: the profile counts work the model does not do "
                                     "(kernels counted twice, more runs than the analytic count assumes, or padded work: ncu counts "
                                     "the tensor-core work a kernel executes, whole tiles included, so GEMMs over a "
                                     "few rows, e.g. a mixture of experts' decode, execute more than the model needs)",
                                     *w.flops_ratio);
  } else if (w.flops_ratio_high.value_or(kRatioLow) < kRatioLow) {
    w.flops_ratio_flag = fmt::format("measured / analytic at most {:.2f}: the profile misses work (launches not "
                                     "captured, or fewer runs than the analytic count assumes)",
                                     *w.flops_ratio_high);
  }
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

Result<ProfileWork> profile_work(const MfuInput& in, const std::vector<StageRow>& stages, const UserWork& given_user) {
  auto user = resolve_user_stages(given_user, stages);
  if (!user) return user.error();
  std::unordered_map<std::string, std::size_t> row_of;
  for (std::size_t i = 0; i < stages.size(); ++i) row_of.emplace(stages[i].name, i);
  std::vector<std::vector<std::size_t>> rows_of_stage(in.profile.stages.size());
  for (std::size_t s = 0; s < in.profile.stages.size(); ++s) {
    for (const auto& name : stage_row_names(in.profile.stages[s])) {
      if (auto it = row_of.find(name); it != row_of.end()) rows_of_stage[s].push_back(it->second);
    }
  }
  const auto whole_row = row_of.find(std::string(kWholeRunStage));
  std::vector<Measured> measured = measure(in, stages, rows_of_stage,
                                           whole_row != row_of.end() ? std::optional(whole_row->second) : std::nullopt);
  const Measured all = std::move(measured.back());  // the whole profile's
  measured.pop_back();
  ProfileWork out;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const StageRow& s = stages[i];
    const bool wall = s.wall_ns.has_value();
    out.stages.push_back(compute(in, measured[i], user_flops(*user, s.name), *user,
                                 wall ? *s.wall_ns : s.kernel_time_ns, wall ? "wall time" : "kernel time"));
    if (user->analytic) {
      set_analytic(out.stages.back(), s.name == kWholeRunStage ? analytic_of_all(*user->analytic, stages)
                                                                : analytic_of_row(*user->analytic, s));
    }
  }
  std::optional<double> wall_ns;
  if (!stages.empty() && stages.front().name == kWholeRunStage) wall_ns = stages.front().wall_ns;
  out.whole = compute(in, all, user_flops(given_user, ""), given_user, wall_ns ? *wall_ns : all.kernel_time_ns,
                      wall_ns ? "wall time" : "kernel time");
  if (given_user.analytic) set_analytic(out.whole, analytic_of_all(*given_user.analytic, stages));
  return out;
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

#include "kernlens/analysis/normalize.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <unordered_map>

#include <fmt/format.h>

#include "kernlens/analysis/aggregate.h"

namespace kernlens::analysis {
namespace {

using model::RunRecord;

std::optional<std::string> tag(const RunRecord& run, std::string_view key) {
  for (const auto& [k, v] : run.meta.tags) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::optional<double> number(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

// Tokens per stage from the run's LLM tags (`profile --tag`): a prefill is batch x prompt
// tokens, a decode batch x decode_steps, each per measured repetition (`profile --repeat`); the
// warm-up stage only when tagged `warmup=N` (prefills before the measured ones).
TokenCounts tagged_tokens(const RunRecord& run, bool per_repetition) {
  TokenCounts t;
  auto batch = number(tag(run, "batch").value_or(""));
  auto prompt = number(tag(run, "prompt_tokens").value_or(tag(run, "tokens").value_or("")));
  if (!batch || !prompt) return t;
  auto steps = number(tag(run, "decode_steps").value_or(""));
  const double prefill = *batch * *prompt, decode = steps ? *batch * *steps : 0;
  const double measured = per_repetition ? 1 : run.repeat;
  t["prefill"] = prefill * measured;
  if (steps) t["decode"] = decode * measured;
  auto warmup = number(tag(run, "warmup").value_or(""));
  if (warmup && !per_repetition) t["warmup"] = (prefill + decode) * *warmup;
  return t;
}

bool is_top_level(const model::RunStage& s) {
  return s.name != kWholeRunStage && top_level_stage(s.name) == s.name;
}

std::optional<double> divide(const std::optional<double>& ns, std::optional<double> by) {
  if (!ns || !by || *by <= 0) return std::nullopt;
  return *ns / *by;
}

void divide_all(RunRecord& r, const std::function<std::optional<double>(const model::RunKernel&)>& kernel,
                const std::function<std::optional<double>(const model::RunStage&)>& stage,
                std::optional<double> total) {
  for (auto& k : r.kernels) k.total_ns = divide(k.total_ns, kernel(k));
  for (auto& s : r.stages) {
    const auto by = stage(s);
    s.kernel_time_ns = divide(s.kernel_time_ns, by);
    s.wall_ns = divide(s.wall_ns, by);
  }
  r.kernel_time_ns = divide(r.kernel_time_ns, total);
}

std::optional<double> as_double(std::uint64_t n) {
  return n ? std::optional<double>(static_cast<double>(n)) : std::nullopt;
}

std::optional<double> gflops(const std::optional<double>& flops) {
  return flops ? std::optional<double>(*flops * 1e-9) : std::nullopt;
}

}  // namespace

std::string_view normalization_name(Normalization n) {
  switch (n) {
    case Normalization::kNone: return "none";
    case Normalization::kToken: return "token";
    case Normalization::kLaunch: return "launch";
    case Normalization::kFlop: return "flop";
  }
  return "";
}

std::string_view normalization_unit(Normalization n) {
  switch (n) {
    case Normalization::kNone: return "";
    case Normalization::kToken: return "per token";
    case Normalization::kLaunch: return "per launch";
    case Normalization::kFlop: return "per GFLOP";
  }
  return "";
}

Result<Normalization> parse_normalization(std::string_view name) {
  for (auto n : {Normalization::kNone, Normalization::kToken, Normalization::kLaunch, Normalization::kFlop}) {
    if (normalization_name(n) == name) return n;
  }
  return make_error("", 0, fmt::format("--normalize {}: expected auto, none, token, launch or flop", name));
}

std::string top_level_stage(std::string_view stage) {
  return std::string(stage.substr(0, stage.find('/')));
}

TokenCounts token_counts(const RunRecord& run, bool per_repetition, const TokenCounts& overrides) {
  TokenCounts t = tagged_tokens(run, per_repetition);
  for (const auto& [key, value] : run.meta.tags) {
    if (key.starts_with("tokens.")) {
      if (auto n = number(value)) t[key.substr(7)] = *n;
    }
  }
  for (const auto& [stage, n] : overrides) t[stage] = n;
  return t;
}

std::string work_difference(const RunRecord& a, const RunRecord& b) {
  std::vector<std::string> diffs;
  for (const auto& [key, label] : {std::pair{"batch", "batch"}, std::pair{"tokens", "prompt"},
                                   std::pair{"decode_steps", "decode steps"}}) {
    auto x = tag(a, key), y = tag(b, key);
    if (x && y && *x != *y) diffs.push_back(fmt::format("{} {} -> {}", label, *x, *y));
  }
  std::map<std::string, std::pair<std::string, std::string>> tokens;
  for (const auto& [k, v] : a.meta.tags) if (k.starts_with("tokens.")) tokens[k].first = v;
  for (const auto& [k, v] : b.meta.tags) if (k.starts_with("tokens.")) tokens[k].second = v;
  for (const auto& [k, v] : tokens) {
    if (v.first != v.second) diffs.push_back(fmt::format("{} {} -> {}", k, v.first.empty() ? "-" : v.first,
                                                          v.second.empty() ? "-" : v.second));
  }
  return fmt::format("{}", fmt::join(diffs, ", "));
}

Result<RunRecord> normalize_run(RunRecord r, Normalization n, const TokenCounts& tokens) {
  switch (n) {
    case Normalization::kNone: return r;
    case Normalization::kToken: {
      double total = 0;
      for (const auto& s : r.stages) {
        if (auto it = tokens.find(s.name); is_top_level(s) && it != tokens.end()) total += it->second;
      }
      if (total <= 0) {
        return make_error(r.meta.source_path, 0,
                          "no token count for its stages: give `compare --tokens STAGE=N` or "
                          "`profile --tag tokens.STAGE=N` (tokens per repetition, or per run without --repeat)");
      }
      auto stage_tokens = [&](const model::RunStage& s) -> std::optional<double> {
        if (s.name == kWholeRunStage) return total;
        auto it = tokens.find(top_level_stage(s.name));
        return it == tokens.end() ? std::nullopt : std::optional<double>(it->second);
      };
      divide_all(r, [&](const model::RunKernel&) { return std::optional<double>(total); }, stage_tokens, total);
      return r;
    }
    case Normalization::kLaunch:
      divide_all(r, [](const model::RunKernel& k) { return as_double(k.launches); },
                 [](const model::RunStage& s) { return as_double(s.launches); }, as_double(r.launches));
      return r;
    case Normalization::kFlop: {
      std::optional<double> total_flops = 0.0;
      for (const auto& k : r.kernels) total_flops = k.flops && total_flops ? std::optional(*total_flops + *k.flops) : std::nullopt;
      divide_all(r, [](const model::RunKernel& k) { return gflops(k.flops); },
                 [](const model::RunStage& s) { return gflops(s.flops); }, gflops(total_flops));
      return r;
    }
  }
  return r;
}

RunRecord repetition_record(const RunRecord& run, std::size_t index) {
  const model::RunRepetition& rep = run.repetitions.at(index);
  RunRecord r;
  r.meta = run.meta;
  r.device = run.device;
  r.repeat = run.repeat;
  r.kernel_time_ns = rep.kernel_time_ns;
  r.launches = rep.launches;
  std::unordered_map<std::string_view, const model::RunKernel*> by_name;
  for (const auto& k : run.kernels) by_name.emplace(k.name, &k);
  auto share_of = [](double launches, double of_launches, const std::optional<double>& v) {
    return v && of_launches > 0 ? std::optional<double>(*v * launches / of_launches) : std::nullopt;
  };
  for (const auto& f : rep.kernels) {
    model::RunKernel k;
    if (auto it = by_name.find(f.name); it != by_name.end()) k = *it->second;
    k.name = f.name;
    k.flops = share_of(static_cast<double>(f.launches), static_cast<double>(k.launches), k.flops);
    k.launches = f.launches;
    k.total_ns = f.ns;
    k.mean_ns = f.launches ? std::optional<double>(f.ns / static_cast<double>(f.launches)) : std::nullopt;
    k.share = rep.kernel_time_ns > 0 ? std::optional<double>(f.ns / rep.kernel_time_ns) : std::nullopt;
    r.kernels.push_back(std::move(k));
  }
  std::unordered_map<std::string_view, const model::RunStage*> stages;
  for (const auto& s : run.stages) stages.emplace(s.name, &s);
  for (const auto& f : rep.stages) {
    model::RunStage s;
    s.name = f.name;
    s.depth = static_cast<int>(std::count(f.name.begin(), f.name.end(), '/'));
    s.launches = f.launches;
    s.kernel_time_ns = f.ns;
    if (auto it = stages.find(f.name); it != stages.end()) {
      s.flops = share_of(static_cast<double>(f.launches), static_cast<double>(it->second->launches), it->second->flops);
    }
    r.stages.push_back(std::move(s));
  }
  return r;
}

}  // namespace kernlens::analysis

#include "kernlens/analysis/advice.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>

#include <fmt/format.h>

namespace kernlens::analysis {
namespace {

// Messages of a rule about the profiler itself, not the kernel (e.g. CPIStall's "The optional
// metric smsp__pcsamp_sample_count could not be found").
constexpr std::array<std::string_view, 1> kProfilerNotes = {"The optional metric "};

bool actionable(const model::RuleResult& r) {
  if (r.type != "OPT" && r.type != "WRN") return false;
  return std::none_of(kProfilerNotes.begin(), kProfilerNotes.end(),
                      [&](std::string_view prefix) { return r.text.starts_with(prefix); });
}

// A rule of kernlens: when it applies, and what it says.
struct OwnRule {
  std::string_view id;
  std::function<bool(const AdviceInput&)> applies;
  std::function<std::string(const AdviceInput&)> text;
};

bool is_one_of(std::string_view v, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

// Below this many waves most of the GPU idles (at 0.97 only 3% does: not worth a word).
constexpr double kSmallGridWaves = 0.5;

std::string us(std::optional<double> ns) { return ns ? fmt::format("{:.1f} us", *ns * 1e-3) : "?"; }

const std::vector<OwnRule>& own_rules() {
  static const std::vector<OwnRule> rules = {
      {"launch-overhead",
       [](const AdviceInput& in) { return in.verdict.kind == Bottleneck::kLaunch; },
       [](const AdviceInput& in) {
         return fmt::format("{} launches of {} on average: the CPU-side launch costs about as much as "
                            "the kernel. Capture the loop in a CUDA graph (torch.compile "
                            "mode=\"reduce-overhead\", or torch.cuda.graphs) or fuse it with its "
                            "neighbours so fewer, larger kernels run.",
                            in.launches, us(in.mean_ns));
       }},
      {"thin-gemm",
       [](const AdviceInput& in) {
         return in.op_class == "gemm" &&
                (in.verdict.kind == Bottleneck::kMemory || in.verdict.kind == Bottleneck::kLatency);
       },
       [](const AdviceInput& in) {
         return fmt::format("This GEMM is {}-bound, far from the tensor-core roof: its matrices are "
                            "too thin (few rows: a small batch, or one token per step in decode) to "
                            "reuse the weights it reads. Batch more requests or tokens per step; "
                            "for decode, a GEMV or split-K kernel tuned for small M helps.",
                            bottleneck_name(in.verdict.kind));
       }},
      {"fuse-memory-bound",
       [](const AdviceInput& in) {
         return is_one_of(in.op_class, {"elementwise", "norm", "softmax", "reduction", "copy"}) &&
                (in.verdict.kind == Bottleneck::kMemory || in.verdict.kind == Bottleneck::kCache);
       },
       [](const AdviceInput& in) {
         return fmt::format("A memory-bound {} kernel: it moves its data through memory to do little "
                            "work with it. Fuse chains of such kernels (torch.compile, or a fused "
                            "kernel) so the data makes one trip instead of one per operation.",
                            in.op_class);
       }},
      {"small-grid",
       [](const AdviceInput& in) {
         auto waves = in.metrics.value(Figure::kWavesPerSm);
         return in.verdict.kind == Bottleneck::kLatency && waves && *waves < kSmallGridWaves;
       },
       [](const AdviceInput& in) {
         double waves = *in.metrics.value(Figure::kWavesPerSm);
         return fmt::format("The grid is {:.2f} waves: about {:.0f}% of the GPU's block slots get no "
                            "block. Give it more blocks (smaller tiles, split-K, or more work per "
                            "launch).",
                            waves, (1 - waves) * 100);
       }},
      {"occupancy-limit",
       [](const AdviceInput& in) {
         auto theoretical = in.metrics.value(Figure::kTheoreticalOccupancyPct);
         return in.verdict.kind == Bottleneck::kLatency && theoretical && *theoretical < 50 &&
                !in.metrics.occupancy_limiters.empty();
       },
       [](const AdviceInput& in) {
         return fmt::format("Theoretical occupancy is {:.1f}%, limited by {}: too few warps to hide "
                            "latency. Use fewer registers or less shared memory per block, or smaller "
                            "blocks.",
                            *in.metrics.value(Figure::kTheoreticalOccupancyPct),
                            fmt::join(in.metrics.occupancy_limiters, " and "));
       }},
  };
  return rules;
}

}  // namespace

void NcuRuleSums::add(const model::Profile& profile, std::span<const model::LaunchIndex> launch_indices) {
  std::map<std::string_view, double> best_of_launch;  // a rule may print several messages
  for (model::LaunchIndex index : launch_indices) {
    const model::Launch& launch = profile.launches[index];
    const auto rules = profile.rules_of(launch);
    if (rules.empty()) continue;
    const double w = launch.total_duration_ns().value_or(0);
    measured_ns_ += w;
    best_of_launch.clear();
    for (const auto& r : rules) {
      if (!actionable(r)) continue;
      RuleTotals& t = by_rule_[r.rule];
      double speedup = r.est_speedup_pct.value_or(-1);
      if (t.text.empty() || speedup > t.best_speedup) {
        t.text = r.text;
        t.best_speedup = speedup;
      }
      if (r.est_speedup_pct) {
        t.any_estimate = true;
        auto& best = best_of_launch[r.rule];
        best = std::max(best, *r.est_speedup_pct);
      }
    }
    for (const auto& [rule, speedup] : best_of_launch) by_rule_.find(rule)->second.weighted_speedup += speedup * w;
  }
}

void NcuRuleSums::merge(NcuRuleSums&& later) {
  measured_ns_ += later.measured_ns_;
  for (auto& [rule, l] : later.by_rule_) {
    auto [it, is_new] = by_rule_.try_emplace(rule);
    RuleTotals& t = it->second;
    if (is_new) {
      t = std::move(l);
      continue;
    }
    if (t.text.empty() || l.best_speedup > t.best_speedup) {  // the later stretch's best message
      t.text = std::move(l.text);
      t.best_speedup = l.best_speedup;
    }
    t.weighted_speedup += l.weighted_speedup;
    t.any_estimate = t.any_estimate || l.any_estimate;
  }
}

std::vector<Advice> NcuRuleSums::advice() && {
  std::vector<Advice> out;
  for (auto& [rule, t] : by_rule_) {
    Advice a{"ncu:" + rule, std::move(t.text), std::nullopt};
    if (t.any_estimate && measured_ns_ > 0) a.est_speedup_pct = t.weighted_speedup / measured_ns_;
    out.push_back(std::move(a));
  }
  std::stable_sort(out.begin(), out.end(), [](const Advice& a, const Advice& b) {
    return a.est_speedup_pct.value_or(-1) > b.est_speedup_pct.value_or(-1);
  });
  return out;
}

std::vector<Advice> kernlens_advice(const AdviceInput& input) {
  std::vector<Advice> out;
  for (const auto& rule : own_rules()) {
    if (rule.applies(input)) out.push_back(Advice{"kernlens:" + std::string(rule.id), rule.text(input), std::nullopt});
  }
  return out;
}

}  // namespace kernlens::analysis

#include "kernlens/analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

namespace kernlens::analysis {
namespace {

using model::RunKernel;
using model::RunRecord;

struct Matcher {
  const std::vector<RunKernel>& base;
  const std::vector<RunKernel>& candidate;
  std::vector<std::optional<std::size_t>> base_to_candidate;
  std::vector<bool> candidate_taken;
  std::vector<MatchKind> kind;

  Matcher(const std::vector<RunKernel>& b, const std::vector<RunKernel>& c)
      : base(b), candidate(c), base_to_candidate(b.size()), candidate_taken(c.size()), kind(b.size()) {}

  void pair(std::size_t b, std::size_t c, MatchKind k) {
    base_to_candidate[b] = c;
    candidate_taken[c] = true;
    kind[b] = k;
  }

  // Pairs each unmatched base kernel (heaviest first: the order of the tables) with the
  // first unmatched candidate of the same key; `key` returns "" for kernels it cannot key.
  template <class Key>
  void match_by(Key key, MatchKind k) {
    std::unordered_map<std::string, std::vector<std::size_t>> free;
    for (std::size_t c = candidate.size(); c-- > 0;) {
      if (!candidate_taken[c]) {
        if (auto kc = key(candidate[c]); !kc.empty()) free[kc].push_back(c);
      }
    }
    for (std::size_t b = 0; b < base.size(); ++b) {
      if (base_to_candidate[b]) continue;
      auto it = free.find(key(base[b]));
      if (it == free.end() || it->second.empty()) continue;
      pair(b, it->second.back(), k);
      it->second.pop_back();
    }
  }
};

// Unmatched kernels per base name: a base name pairs its kernels only when one is left on each side.
std::unordered_map<std::string, int> unmatched_per_base_name(const std::vector<RunKernel>& kernels,
                                                             const std::vector<bool>& matched) {
  std::unordered_map<std::string, int> count;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (!matched[i]) ++count[kernels[i].base_name];
  }
  return count;
}

void match_kernels(Matcher& m) {
  m.match_by([](const RunKernel& k) { return k.name; }, MatchKind::kName);
  m.match_by([](const RunKernel& k) { return k.grid.empty() ? std::string() : k.base_name + '\x1f' + k.grid + '\x1f' + k.block; },
             MatchKind::kShape);
  std::vector<bool> base_matched(m.base.size());
  for (std::size_t b = 0; b < m.base.size(); ++b) base_matched[b] = m.base_to_candidate[b].has_value();
  auto base_left = unmatched_per_base_name(m.base, base_matched);
  auto candidate_left = unmatched_per_base_name(m.candidate, m.candidate_taken);
  m.match_by(
      [&](const RunKernel& k) {
        bool single = base_left[k.base_name] == 1 && candidate_left[k.base_name] == 1;
        return single ? k.base_name : std::string();
      },
      MatchKind::kBaseName);
}

template <class Rows>
void sort_by_size_of_change(Rows& rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return std::abs(a.delta_ns()) > std::abs(b.delta_ns()); });
}

double weight(const RunKernel* k, const RunRecord& run) {
  if (!k || !k->total_ns || !run.kernel_time_ns || *run.kernel_time_ns <= 0) return 0;
  return *k->total_ns / *run.kernel_time_ns;
}

std::vector<KernelDelta> kernel_deltas(const RunRecord& base, const RunRecord& cand, const CompareOptions& o) {
  Matcher m(base.kernels, cand.kernels);
  match_kernels(m);
  std::vector<KernelDelta> out;
  for (std::size_t b = 0; b < base.kernels.size(); ++b) {
    KernelDelta d;
    d.base = &base.kernels[b];
    d.base_ns = d.base->total_ns;
    d.match = MatchKind::kVanished;
    if (auto c = m.base_to_candidate[b]) {
      d.candidate = &cand.kernels[*c];
      d.candidate_ns = d.candidate->total_ns;
      d.match = m.kind[b];
      bool heavy = std::max(weight(d.base, base), weight(d.candidate, cand)) >= o.min_share;
      d.regressed = heavy && d.delta_pct() && *d.delta_pct() > o.threshold_pct;
    }
    out.push_back(d);
  }
  for (std::size_t c = 0; c < cand.kernels.size(); ++c) {
    if (m.candidate_taken[c]) continue;
    KernelDelta d;
    d.candidate = &cand.kernels[c];
    d.candidate_ns = d.candidate->total_ns;
    d.match = MatchKind::kNew;
    out.push_back(d);
  }
  sort_by_size_of_change(out);
  return out;
}


std::vector<OperationDelta> operation_deltas(const std::vector<KernelDelta>& kernels, const RunRecord& base,
                                             const RunRecord& cand, const CompareOptions& o) {
  std::map<std::string, OperationDelta> by_op;
  for (const auto& k : kernels) {
    const std::string& name = k.either().op_class.empty() ? kOtherOpClass : k.either().op_class;
    OperationDelta& op = by_op[name];
    op.op_class = name;
    if (k.base) op.base_ns = op.base_ns.value_or(0) + k.base_ns.value_or(0), ++op.base_kernels;
    if (k.candidate) op.candidate_ns = op.candidate_ns.value_or(0) + k.candidate_ns.value_or(0), ++op.candidate_kernels;
    op.kernels_changed |= k.match == MatchKind::kNew || k.match == MatchKind::kVanished;
  }
  std::vector<OperationDelta> out;
  for (auto& [name, op] : by_op) {
    auto share = [](const std::optional<double>& ns, const RunRecord& run) {
      return ns && run.kernel_time_ns && *run.kernel_time_ns > 0 ? *ns / *run.kernel_time_ns : 0.0;
    };
    bool heavy = std::max(share(op.base_ns, base), share(op.candidate_ns, cand)) >= o.min_share;
    op.regressed = op.kernels_changed && heavy && op.delta_pct() && *op.delta_pct() > o.threshold_pct;
    out.push_back(std::move(op));
  }
  sort_by_size_of_change(out);
  return out;
}

std::vector<StageDelta> stage_deltas(const RunRecord& base, const RunRecord& cand) {
  std::vector<StageDelta> out;
  std::map<std::string, std::size_t> index;
  for (const auto& s : base.stages) {
    index[s.name] = out.size();
    StageDelta d;
    d.name = s.name;
    d.base_ns = s.kernel_time_ns;
    d.base_wall_ns = s.wall_ns;
    out.push_back(d);
  }
  for (const auto& s : cand.stages) {
    auto [it, added] = index.try_emplace(s.name, out.size());
    if (added) out.push_back(StageDelta{{}, s.name, {}, {}});
    out[it->second].name = s.name;
    out[it->second].candidate_ns = s.kernel_time_ns;
    out[it->second].candidate_wall_ns = s.wall_ns;
  }
  return out;
}

void decide(Comparison& c) {
  double t = c.options.threshold_pct;
  auto total_pct = c.total.delta_pct();
  if (total_pct && *total_pct > t) {
    c.reasons.push_back(fmt::format("total kernel time {:+.1f}% (threshold {:g}%)", *total_pct, t));
  }
  std::map<std::string, int> regressed_per_base_name;
  for (const auto& k : c.kernels) regressed_per_base_name[k.either().base_name] += k.regressed;
  for (const auto& op : c.operations) {
    if (op.regressed) {
      c.reasons.push_back(fmt::format("op {} {:+.1f}% (kernels {} -> {}, some new or vanished)", op.op_class,
                                      *op.delta_pct(), op.base_kernels, op.candidate_kernels));
    }
  }
  for (const auto& k : c.kernels) {
    if (!k.regressed) continue;
    const auto& kernel = k.either();
    // Several kernels of one family regressed: the launch shape tells them apart.
    bool ambiguous = regressed_per_base_name[kernel.base_name] > 1 && !kernel.grid.empty();
    c.reasons.push_back(fmt::format("{}{} {:+.1f}%", kernel.base_name,
                                    ambiguous ? fmt::format(" (grid {}, block {})", kernel.grid, kernel.block) : "",
                                    *k.delta_pct()));
  }
  if (!c.reasons.empty()) {
    c.verdict = CompareVerdict::kRegression;
  } else if (total_pct && *total_pct < -t) {
    c.verdict = CompareVerdict::kImprovement;
    c.reasons.push_back(fmt::format("total kernel time {:+.1f}% (threshold {:g}%)", *total_pct, t));
  } else {
    c.verdict = CompareVerdict::kNoChange;
    if (total_pct) c.reasons.push_back(fmt::format("total kernel time {:+.1f}%, within {:g}%", *total_pct, t));
  }
}

}  // namespace

std::string_view match_kind_name(MatchKind kind) {
  switch (kind) {
    case MatchKind::kName: return "name";
    case MatchKind::kShape: return "shape";
    case MatchKind::kBaseName: return "base_name";
    case MatchKind::kNew: return "new";
    case MatchKind::kVanished: return "vanished";
  }
  return "";
}

std::string_view verdict_name(CompareVerdict v) {
  switch (v) {
    case CompareVerdict::kRegression: return "regression";
    case CompareVerdict::kImprovement: return "improvement";
    case CompareVerdict::kNoChange: return "no significant change";
  }
  return "";
}

std::optional<double> Delta::delta_pct() const {
  if (!base_ns || *base_ns <= 0 || !candidate_ns) return std::nullopt;
  return (*candidate_ns - *base_ns) / *base_ns * 100;
}

bool KernelDelta::bottleneck_changed() const {
  return base && candidate && base->bottleneck != candidate->bottleneck;
}

Comparison compare_runs(const RunRecord& base, const RunRecord& candidate, const CompareOptions& options) {
  Comparison c;
  c.base = &base;
  c.candidate = &candidate;
  c.options = options;
  c.total.base_ns = base.kernel_time_ns;
  c.total.candidate_ns = candidate.kernel_time_ns;
  c.kernels = kernel_deltas(base, candidate, options);
  c.operations = operation_deltas(c.kernels, base, candidate, options);
  c.stages = stage_deltas(base, candidate);
  c.ranks = compare_ranks(base, candidate);
  decide(c);
  return c;
}

}  // namespace kernlens::analysis

#include "kernlens/analysis/group_compare.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "kernlens/analysis/aggregate.h"

namespace kernlens::analysis {
namespace {

using model::RunKernel;
using model::RunRecord;

// One side's samples, normalised: [run][sample].
using SideSamples = std::vector<std::vector<RunRecord>>;

// A row's figure in one sample; absent when the sample has none.
using RunFigure = std::function<std::optional<double>(const RunRecord&)>;


const std::string& op_of(const RunKernel& k) {
  return k.op_class.empty() ? kOtherOpClass : k.op_class;
}

Result<SideSamples> side_samples(const std::vector<const RunRecord*>& runs, Normalization n,
                                 const TokenCounts& overrides) {
  SideSamples side;
  for (const RunRecord* run : runs) {
    const bool per_repetition = !run->repetitions.empty();
    const TokenCounts tokens = token_counts(*run, per_repetition, overrides);
    std::vector<RunRecord> samples;
    if (per_repetition) {
      for (std::size_t i = 0; i < run->repetitions.size(); ++i) samples.push_back(repetition_record(*run, i));
    } else {
      samples.push_back(*run);
    }
    auto& out = side.emplace_back();
    for (auto& s : samples) {
      auto normalized = normalize_run(std::move(s), n, tokens);
      if (!normalized) return normalized.error();
      out.push_back(std::move(normalized).value());
    }
  }
  return side;
}

Clustered values(const SideSamples& side, const RunFigure& figure) {
  Clustered c;
  for (const auto& run : side) {
    auto& out = c.emplace_back();
    for (const auto& sample : run) {
      if (auto v = figure(sample)) out.push_back(*v);
    }
  }
  return c;
}

// A sum over the sample's kernels that `member` selects: absent when one of them has no
// figure (per launch or FLOP), or when none is there and missing kernels are not 0 ns.
RunFigure kernel_sum(std::function<bool(const RunKernel&)> member, bool missing_is_zero) {
  return [member = std::move(member), missing_is_zero](const RunRecord& r) -> std::optional<double> {
    double sum = 0;
    bool any = false;
    for (const auto& k : r.kernels) {
      if (!member(k)) continue;
      if (!k.total_ns) return std::nullopt;
      sum += *k.total_ns, any = true;
    }
    if (!any && !missing_is_zero) return std::nullopt;
    return sum;
  };
}

struct Sides {
  const SideSamples& base;
  const SideSamples& candidate;
  const BootstrapOptions& bootstrap;
};

GroupRow estimate_row(std::string name, const Sides& s, const RunFigure& base_figure, const RunFigure& candidate_figure) {
  GroupRow row;
  row.name = std::move(name);
  Clustered b = base_figure ? values(s.base, base_figure) : Clustered{};
  Clustered c = candidate_figure ? values(s.candidate, candidate_figure) : Clustered{};
  row.base_samples = sample_count(b);
  row.candidate_samples = sample_count(c);
  if (row.base_samples && row.candidate_samples) row.estimate = ratio_of_medians(b, c, s.bootstrap);
  else row.estimate.base_median = median(pooled(b)), row.estimate.candidate_median = median(pooled(c));
  return row;
}

double share(const std::optional<double>& ns, const RunRecord& run) {
  return ns && run.kernel_time_ns && *run.kernel_time_ns > 0 ? *ns / *run.kernel_time_ns : 0.0;
}

template <class Rows>
void sort_by_change(Rows& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const GroupRow& a, const GroupRow& b) {
    return std::abs(a.estimate.candidate_median - a.estimate.base_median) >
           std::abs(b.estimate.candidate_median - b.estimate.base_median);
  });
}

// Figures are 0 for a kernel a sample lacks when they are times (or times per token); a mean
// per launch or per FLOP of a kernel that did not run is no figure at all.
bool missing_is_zero(Normalization n) {
  return n == Normalization::kNone || n == Normalization::kToken;
}

std::vector<GroupRow> kernel_rows(const Comparison& pair, const Sides& s, Normalization n) {
  std::vector<GroupRow> rows;
  for (const auto& k : pair.kernels) {
    auto figure = [&](const RunKernel* kernel) -> RunFigure {
      if (!kernel) return nullptr;
      return kernel_sum([name = kernel->name](const RunKernel& x) { return x.name == name; }, missing_is_zero(n));
    };
    GroupRow row = estimate_row(k.either().name, s, figure(k.base), figure(k.candidate));
    if (k.base && k.candidate && k.base->name != k.candidate->name) row.candidate_name = k.candidate->name;
    row.match = k.match;
    row.weight = std::max(share(k.base_ns, *pair.base), share(k.candidate_ns, *pair.candidate));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Families (by base name) or operations (by op class): kernels summed on each side.
std::vector<GroupRow> class_rows(const Comparison& pair, const Sides& s, Normalization n,
                                 const std::function<const std::string&(const RunKernel&)>& key) {
  struct Acc {
    std::optional<double> base_ns, candidate_ns;
    bool changed = false;
  };
  std::map<std::string, Acc> acc;
  for (const auto& k : pair.kernels) {
    Acc& a = acc[key(k.either())];
    if (k.base) a.base_ns = a.base_ns.value_or(0) + k.base_ns.value_or(0);
    if (k.candidate) a.candidate_ns = a.candidate_ns.value_or(0) + k.candidate_ns.value_or(0);
    a.changed |= k.match == MatchKind::kNew || k.match == MatchKind::kVanished;
  }
  std::vector<GroupRow> rows;
  for (const auto& [name, a] : acc) {
    auto figure = [&, name = name](bool present) -> RunFigure {
      if (!present) return nullptr;
      return kernel_sum([&key, name](const RunKernel& x) { return key(x) == name; }, missing_is_zero(n));
    };
    GroupRow row = estimate_row(name, s, figure(a.base_ns.has_value()), figure(a.candidate_ns.has_value()));
    row.kernels_changed = a.changed;
    row.weight = std::max(share(a.base_ns, *pair.base), share(a.candidate_ns, *pair.candidate));
    rows.push_back(std::move(row));
  }
  sort_by_change(rows);
  return rows;
}

std::vector<GroupRow> stage_rows(const Comparison& pair, const Sides& s) {
  std::vector<GroupRow> rows;
  for (const auto& st : pair.stages) {
    if (st.name == kWholeRunStage) continue;
    auto figure = [&](bool present) -> RunFigure {
      if (!present) return nullptr;
      return [name = st.name](const RunRecord& r) -> std::optional<double> {
        for (const auto& x : r.stages) {
          if (x.name == name) return x.kernel_time_ns;
        }
        return std::nullopt;
      };
    };
    rows.push_back(estimate_row(st.name, s, figure(st.base_ns.has_value()), figure(st.candidate_ns.has_value())));
  }
  return rows;
}

// Larger than the threshold, and (with statistics) its interval above no change.
bool grew(const GroupRow& row, double threshold_pct, bool statistics) {
  auto pct = row.change_pct();
  if (!pct || *pct <= threshold_pct) return false;
  return !statistics || (row.estimate.interval && row.estimate.interval->low > 1);
}

std::string interval_text(const GroupRow& row) {
  if (!row.estimate.interval) return "";
  return fmt::format(" [{:+.1f}%, {:+.1f}%]", (row.estimate.interval->low - 1) * 100,
                     (row.estimate.interval->high - 1) * 100);
}

void judge(GroupComparison& c) {
  const double t = c.options.compare.threshold_pct, min_share = c.options.compare.min_share;
  const std::string level = c.statistics ? fmt::format(", significant at {:g}", c.options.bootstrap.alpha) : "";
  for (auto& k : c.kernels) {
    k.regressed = k.match != MatchKind::kNew && k.match != MatchKind::kVanished && k.weight >= min_share &&
                  grew(k, t, c.statistics);
  }
  for (auto* rows : {&c.families, &c.operations}) {
    for (auto& r : *rows) r.regressed = r.kernels_changed && r.weight >= min_share && grew(r, t, c.statistics);
  }
  c.total.regressed = grew(c.total, t, c.statistics);
  if (c.total.regressed) {
    c.reasons.push_back(fmt::format("total kernel time {:+.1f}%{} (threshold {:g}%{})", *c.total.change_pct(),
                                    interval_text(c.total), t, level));
  }
  for (const auto& [rows, what] : {std::pair{&c.operations, "op"}, std::pair{&c.families, "family"}}) {
    for (const auto& r : *rows) {
      if (r.regressed) {
        c.reasons.push_back(fmt::format("{} {} {:+.1f}%{} (some kernels new or vanished)", what, r.name,
                                        *r.change_pct(), interval_text(r)));
      }
    }
  }
  for (const auto& k : c.kernels) {
    if (k.regressed) c.reasons.push_back(fmt::format("{} {:+.1f}%{}", k.name, *k.change_pct(), interval_text(k)));
  }
  auto pct = c.total.change_pct();
  const bool shrank = pct && *pct < -t && (!c.statistics || (c.total.estimate.interval && c.total.estimate.interval->high < 1));
  if (!c.reasons.empty()) {
    c.verdict = CompareVerdict::kRegression;
  } else if (shrank) {
    c.verdict = CompareVerdict::kImprovement;
    c.reasons.push_back(fmt::format("total kernel time {:+.1f}%{} (threshold {:g}%{})", *pct, interval_text(c.total), t, level));
  } else if (pct) {
    c.reasons.push_back(fmt::format("total kernel time {:+.1f}%{}, {}", *pct, interval_text(c.total),
                                    std::abs(*pct) <= t ? fmt::format("within {:g}%", t)
                                                        : "not significant at " + fmt::format("{:g}", c.options.bootstrap.alpha)));
  }
}

// Runs with repetitions and whole runs are not samples of one thing.
Status check_like_samples(const std::vector<const RunRecord*>& runs) {
  const RunRecord* repeated = nullptr;
  const RunRecord* whole = nullptr;
  for (const RunRecord* r : runs) (r->repetitions.empty() ? whole : repeated) = r;
  if (repeated && whole) {
    return make_error(whole->meta.source_path, 0,
                      fmt::format("one whole run, while {} has {} repetitions: compare runs made alike (all with "
                                  "`profile --repeat`, or none)",
                                  repeated->meta.source_path, repeated->repetitions.size()));
  }
  return ok_status();
}

std::vector<std::string> sample_notes(const std::vector<const RunRecord*>& runs) {
  std::vector<std::string> notes;
  for (const RunRecord* r : runs) {
    if (r->repeat > 1 && r->repetitions.empty()) {
      notes.push_back(fmt::format("{}: made with --repeat {}, but no top-level NVTX range ran {} times on its "
                                  "timeline; it is one sample",
                                  r->meta.source_path, r->repeat, r->repeat));
    }
  }
  return notes;
}

}  // namespace

std::optional<double> GroupRow::change_pct() const {
  if (!estimate.ratio) return std::nullopt;
  return (*estimate.ratio - 1) * 100;
}

std::optional<double> GroupComparison::noise_floor_pct() const {
  if (!base_noise_floor_pct) return candidate_noise_floor_pct;
  if (!candidate_noise_floor_pct) return base_noise_floor_pct;
  return std::max(*base_noise_floor_pct, *candidate_noise_floor_pct);
}

Normalization choose_normalization(const RunRecord& base, const RunRecord& candidate,
                                   std::optional<Normalization> requested, std::string& reason) {
  const std::string diff = work_difference(base, candidate);
  if (requested) {
    reason = fmt::format("--normalize {}", normalization_name(*requested));
    if (!diff.empty()) reason += fmt::format(" ({})", diff);
    return *requested;
  }
  if (diff.empty()) {
    reason = "";
    return Normalization::kNone;
  }
  reason = fmt::format("the work differs: {}", diff);
  return Normalization::kToken;
}

Result<GroupComparison> compare_groups(const std::vector<const RunRecord*>& base,
                                       const std::vector<const RunRecord*>& candidate,
                                       const GroupCompareOptions& options) {
  if (base.empty() || candidate.empty()) return make_error("", 0, "compare needs at least one run on each side");
  std::vector<const RunRecord*> all(base);
  all.insert(all.end(), candidate.begin(), candidate.end());
  if (Status s = check_like_samples(all); !s) return s.error();
  GroupComparison c;
  c.base = base;
  c.candidate = candidate;
  c.options = options;
  c.notes = sample_notes(all);
  c.repetitions = !base[0]->repetitions.empty();
  c.normalization = choose_normalization(*base[0], *candidate[0], options.normalization, c.normalization_reason);
  auto b = side_samples(base, c.normalization, options.base_tokens);
  if (!b) return b.error();
  auto k = side_samples(candidate, c.normalization, options.candidate_tokens);
  if (!k) return k.error();
  const Sides sides{*b, *k, options.bootstrap};
  auto total = [](const RunRecord& r) { return r.kernel_time_ns; };
  c.total = estimate_row("total", sides, total, total);
  c.base_samples = c.total.base_samples;
  c.candidate_samples = c.total.candidate_samples;
  c.statistics = c.base_samples >= 2 && c.candidate_samples >= 2;
  c.base_noise_floor_pct = noise_floor_pct(values(*b, total), options.bootstrap);
  c.candidate_noise_floor_pct = noise_floor_pct(values(*k, total), options.bootstrap);
  const Comparison pair = compare_runs(*base[0], *candidate[0], options.compare);
  c.kernels = kernel_rows(pair, sides, c.normalization);
  sort_by_change(c.kernels);
  c.families = class_rows(pair, sides, c.normalization, [](const RunKernel& x) -> const std::string& { return x.base_name; });
  c.operations = class_rows(pair, sides, c.normalization, op_of);
  c.stages = stage_rows(pair, sides);
  judge(c);
  return c;
}

Status check_noise_floor(const GroupComparison& c) {
  auto floor = c.noise_floor_pct();
  if (!c.statistics || !floor || c.options.compare.threshold_pct >= *floor) return ok_status();
  return make_error("", 0,
                    fmt::format("--threshold {:g}% is tighter than the noise floor {:.2f}% (each group against its "
                                "own halves: base {}, candidate {}): a change that small cannot be told from noise "
                                "here; raise --threshold, or add runs or repetitions",
                                c.options.compare.threshold_pct, *floor,
                                c.base_noise_floor_pct ? fmt::format("{:.2f}%", *c.base_noise_floor_pct) : "-",
                                c.candidate_noise_floor_pct ? fmt::format("{:.2f}%", *c.candidate_noise_floor_pct) : "-"));
}

}  // namespace kernlens::analysis

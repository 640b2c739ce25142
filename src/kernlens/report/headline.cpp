#include "kernlens/report/headline.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "kernlens/report/format.h"
#include "kernlens/report/missing.h"
#include "kernlens/report/provenance.h"
#include "kernlens/report/summary.h"
#include "kernlens/report/tables.h"

namespace kernlens::report {
namespace {

// "12.3%", or "0.0024%" for a fraction too small for one decimal.
std::string percent(double fraction) {
  return fraction >= 0.001 || fraction == 0 ? human_percent(fraction) : fmt::format("{:.2g}%", fraction * 100);
}

std::string time_line(const analysis::Analysis& analysis) {
  const auto& totals = analysis.agg.totals;
  std::string out = fmt::format("{} of GPU time in {} launches of {} kernels",
                                totals.kernel_time_ns ? human_duration_ns(*totals.kernel_time_ns) : "unknown",
                                totals.launches, totals.unique_kernels);
  std::vector<std::string> parts;
  for (const auto& c : time_by_op_class(analysis)) {
    if (parts.size() == 3) break;
    parts.push_back(fmt::format("{} {}", c.op_class, human_percent(c.share)));
  }
  if (!parts.empty()) out += fmt::format(": {}", fmt::join(parts, ", "));
  const auto& stages = analysis.agg.stages;
  if (!stages.empty() && stages.front().name == analysis::kWholeRunStage && stages.front().busy_fraction()) {
    out += fmt::format("; the GPU was busy {} of the {} run", percent(*stages.front().busy_fraction()),
                       human_duration_ns(*stages.front().wall_ns));
  }
  return out;
}

// Stage names that say the work is not the one measured (lazy initialisation, autotuning).
constexpr std::array<std::string_view, 3> kWarmupNames = {"warmup", "warm-up", "warm_up"};

bool is_warmup(std::string_view stage_name) {
  std::string lower(stage_name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::any_of(kWarmupNames.begin(), kWarmupNames.end(),
                     [&](std::string_view w) { return lower.find(w) != std::string::npos; });
}

// The stages a person reads first: the top-level ones, warm-ups left out; when there are none,
// every stage with no stage nested in it (tree order: a nested stage follows its parent).
std::vector<std::size_t> main_stages(const analysis::Aggregate& agg) {
  std::vector<std::size_t> top, leaves;
  for (std::size_t i = 0; i < agg.stages.size(); ++i) {
    if (agg.stages[i].name == analysis::kWholeRunStage) continue;
    if (agg.stages[i].depth == 0 && !is_warmup(agg.stages[i].name)) top.push_back(i);
    bool parent = i + 1 < agg.stages.size() && agg.stages[i + 1].depth > agg.stages[i].depth;
    if (!parent) leaves.push_back(i);
  }
  return top.empty() ? leaves : top;
}

// The stage that wastes the most: the most GPU idle time on a timeline; else the lowest MFU;
// else the most kernel time.
std::string worst_stage_line(const model::Profile& profile, const analysis::Analysis& analysis) {
  const auto& rows = analysis.agg.stages;
  const auto leaves = main_stages(analysis.agg);
  if (leaves.empty()) {
    for (const auto& m : missing_parts(profile, analysis, 0)) {
      if (m.part == Part::kStages) return fmt::format("no stages: needs {}", m.needs);
    }
    return "no stages";
  }
  auto idle = [&](std::size_t i) { return rows[i].wall_ns.value_or(0) - rows[i].busy_ns.value_or(0); };
  auto mfu = [&](std::size_t i) { return analysis.stages[i].mfu.value_or(2.0); };
  auto time = [&](std::size_t i) { return rows[i].kernel_time_ns; };
  std::size_t worst = leaves.front();
  const bool timeline = std::any_of(leaves.begin(), leaves.end(), [&](std::size_t i) { return rows[i].wall_ns.has_value(); });
  const bool any_mfu = std::any_of(leaves.begin(), leaves.end(), [&](std::size_t i) { return analysis.stages[i].mfu.has_value(); });
  for (std::size_t i : leaves) {
    bool worse = timeline ? idle(i) > idle(worst) : any_mfu ? mfu(i) < mfu(worst) : time(i) > time(worst);
    if (worse) worst = i;
  }
  const auto& s = rows[worst];
  if (timeline && s.wall_ns && s.busy_ns) {
    std::string gaps = s.gaps ? fmt::format(" ({} gaps, the largest {})", s.gaps->count, human_duration_ns(s.gaps->largest_ns)) : "";
    return fmt::format("{}: the GPU was idle {} of its {} wall time{}", s.name, percent(idle(worst) / *s.wall_ns),
                       human_duration_ns(*s.wall_ns), gaps);
  }
  std::string share = analysis.agg.totals.kernel_time_ns && *analysis.agg.totals.kernel_time_ns > 0
                          ? fmt::format(" ({} of it)", human_percent(s.kernel_time_ns / *analysis.agg.totals.kernel_time_ns))
                          : "";
  std::string mfu_text = analysis.stages[worst].mfu ? fmt::format(", MFU {}", percent(*analysis.stages[worst].mfu)) : "";
  return fmt::format("{}: {} of kernel time{}{}", s.name, human_duration_ns(s.kernel_time_ns), share, mfu_text);
}

std::string top_kernel_line(const analysis::Analysis& analysis) {
  const auto& agg = analysis.agg;
  if (agg.kernels.empty()) return "no kernels";
  const auto& k = agg.kernels.front();
  const auto& cls = agg.families[k.family].cls;
  const auto& verdict = analysis.kernels.front().verdict;
  std::string out = fmt::format("{} ({} {}), {} of GPU time, {} launches", cls.base_name, names::to_string(cls.library),
                                names::to_string(cls.op_class), k.share ? human_percent(*k.share) : "-", k.launches);
  if (k.mean_ns) out += fmt::format(" of {} on average", human_duration_ns(*k.mean_ns));
  const std::string_view kind = analysis::bottleneck_name(verdict.kind);
  out += kind == "mixed" || kind == "unknown" ? fmt::format(": bottleneck {}", kind) : fmt::format(": {}-bound", kind);
  if (!verdict.reason.empty()) out += fmt::format(" ({})", first_sentence(verdict.reason));
  return out;
}

// MFU of the main stages, with its interval and, where a model config gave it, the analytic MFU.
std::string mfu_line(const analysis::Analysis& analysis) {
  std::vector<std::string> parts;
  for (std::size_t i : main_stages(analysis.agg)) {
    const auto& w = analysis.stages[i];
    if (!w.mfu && !w.analytic_mfu) continue;
    std::string part = fmt::format("{} {}", analysis.agg.stages[i].name, mfu_text(w));
    if (w.mfu) part += fmt::format(" ({})", how_name(mfu_provenance(w).how));
    if (w.analytic_mfu) part += fmt::format(", {} on analytic FLOPs", percent(*w.analytic_mfu));
    parts.push_back(std::move(part));
  }
  if (parts.empty() && analysis.whole.mfu) {
    parts.push_back(fmt::format("all kernels {} ({})", mfu_text(analysis.whole), how_name(mfu_provenance(analysis.whole).how)));
  }
  if (!parts.empty()) return fmt::format("{}", fmt::join(parts, "; "));
  return fmt::format("not known: {}", mfu_note(analysis.whole));
}

}  // namespace

std::vector<HeadlineLine> headline(const model::Profile& profile, const analysis::Analysis& analysis) {
  return {{"time", time_line(analysis)},
          {"worst stage", worst_stage_line(profile, analysis)},
          {"top kernel", top_kernel_line(analysis)},
          {"MFU", mfu_line(analysis)}};
}

std::string headline_text(const std::vector<HeadlineLine>& lines, std::size_t width) {
  std::size_t label_width = 0;
  for (const auto& l : lines) label_width = std::max(label_width, l.label.size() + 1);
  const std::size_t indent = 2 + label_width + 2;
  std::string out;
  for (const auto& l : lines) {
    out += fmt::format("  {:<{}}  {}\n", l.label + ":", label_width, width ? wrap(l.text, width, indent) : l.text);
  }
  return out;
}

}  // namespace kernlens::report

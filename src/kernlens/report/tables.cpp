#include "kernlens/report/tables.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "kernlens/report/format.h"
#include "kernlens/report/summary.h"

namespace kernlens::report {
namespace {

constexpr std::string_view kMissing = "-";  // a value that was not measured

// Kernel names run to hundreds of characters of template arguments; tables show the start.
constexpr std::size_t kNameChars = 90;

Cell text_cell(std::string text) { return Cell{std::move(text), std::nullopt, false, ""}; }
Cell code_cell(std::string text) { return Cell{std::move(text), std::nullopt, true, ""}; }
Cell name_cell(const std::string& name) {
  std::string shown = ellipsize(name, kNameChars);
  return Cell{shown, std::nullopt, true, shown == name ? "" : name};
}

// A number shown formatted and sorted by its value; "-" (sorted first) when absent.
template <class Format>
Cell number_cell(std::optional<double> v, Format format) {
  if (!v) return Cell{std::string(kMissing), -1e300, false, ""};
  return Cell{format(*v), *v, false, ""};
}

Cell duration_cell(std::optional<double> ns) { return number_cell(ns, human_duration_ns); }
Cell percent_cell(std::optional<double> fraction) { return number_cell(fraction, human_percent); }
Cell count_cell(std::uint64_t n) {
  return number_cell(static_cast<double>(n), [](double v) { return fmt::format("{:.0f}", v); });
}
Cell si_cell(std::optional<double> v, std::string_view unit) {
  return number_cell(v, [unit](double x) { return human_si(x, unit); });
}

std::size_t shown(std::size_t top, std::size_t size) { return top ? std::min(top, size) : size; }

// "12 more kernels: 3.2% of the time" for the rows after the first `n`.
template <class Row>
std::string rest_note(const std::vector<Row>& rows, std::size_t n, std::string_view what) {
  if (n >= rows.size()) return "";
  double share = 0;
  for (std::size_t i = n; i < rows.size(); ++i) share += rows[i].share.value_or(0);
  return fmt::format("{} more {}: {} of the kernel time", rows.size() - n, what, human_percent(share));
}

}  // namespace

Table summary_table(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx) {
  Table t{"summary", {"", ""}, {false, false}, {}, ""};
  auto add = [&t](std::string key, std::string value, bool code = false) {
    t.rows.push_back({text_cell(std::move(key)), Cell{std::move(value), std::nullopt, code, ""}});
  };
  for (const auto& in : profile.inputs) add("Input", fmt::format("{} ({})", in.path, describe_format(in.format)), true);
  if (std::string gpu = device_line(profile, analysis); !gpu.empty()) add("GPU", gpu);
  if (!ctx.command.empty()) add("Command", shell_command_line(ctx.command), true);
  const auto& totals = analysis.agg.totals;
  add("Kernel time", totals.kernel_time_ns ? human_duration_ns(*totals.kernel_time_ns) : std::string(kMissing));
  add("Launches", fmt::format("{} launches of {} kernels", totals.launches, totals.unique_kernels));
  add("Peaks", analysis.peaks ? peaks_line(*analysis.peaks) : analysis.no_peaks_reason);
  add("Deep metrics", coverage_line(analysis.coverage));
  if (analysis.whole.mfu) add("MFU (all kernels)", fmt::format("{} = {}", mfu_text(analysis.whole), mfu_note(analysis.whole)));
  if (analysis.whole.analytic_flops) add("Analytic FLOPs (all kernels)", analytic_note(analysis.whole));
  return t;
}

Table stage_table(const analysis::Analysis& analysis) {
  Table t{"stages",
          {"Stage", "Kernel time", "Share", "Launches", "GPU wall", "Busy", "Idle gaps", "FLOPs", "MFU"},
          {false, true, true, true, true, true, true, true, true},
          {},
          ""};
  const bool analytic = std::any_of(analysis.stages.begin(), analysis.stages.end(),
                                    [](const analysis::StageWork& w) { return w.analytic_flops.has_value(); });
  if (analytic) {
    for (const char* h : {"Analytic FLOPs", "MFU (analytic)", "Measured / analytic"}) {
      t.headers.emplace_back(h);
      t.numeric.push_back(true);
    }
  }
  const auto& agg = analysis.agg;
  for (std::size_t i = 0; i < agg.stages.size(); ++i) {
    const auto& s = agg.stages[i];
    const auto& work = analysis.stages[i];
    std::optional<double> share;
    if (s.has_kernel_time && agg.totals.kernel_time_ns && *agg.totals.kernel_time_ns > 0) {
      share = s.kernel_time_ns / *agg.totals.kernel_time_ns;
    }
    t.rows.push_back({code_cell(s.name), duration_cell(s.has_kernel_time ? std::optional(s.kernel_time_ns) : std::nullopt),
                      percent_cell(share), count_cell(s.launches), duration_cell(s.wall_ns), percent_cell(s.busy_fraction()),
                      duration_cell(s.gaps ? std::optional(s.gaps->total_ns) : std::nullopt), si_cell(work.flops, "FLOP"),
                      Cell{mfu_text(work), work.mfu, false, ""}});
    if (analytic) {
      auto& row = t.rows.back();
      row.push_back(si_cell(work.analytic_flops, "FLOP"));
      row.push_back(percent_cell(work.analytic_mfu));
      row.push_back(Cell{flops_ratio_text(work) + (work.flops_ratio_flag.empty() ? "" : " (far from 1)"), work.flops_ratio,
                         false, work.flops_ratio_flag});
    }
  }
  bool timeline = std::any_of(agg.stages.begin(), agg.stages.end(), [](const auto& s) { return s.wall_ns.has_value(); });
  if (!agg.stages.empty() && !timeline) {
    t.note = "No GPU timeline in these inputs (ncu runs kernels one at a time): wall time and busy fraction need an "
             "Nsight Systems export or a PyTorch trace.";
  }
  return t;
}

Table kernel_table(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx) {
  Table t{"kernels",
          {"#", "Kernel", "Library", "Op", "Bottleneck", "Time", "Share", "Launches", "Mean", "FLOP/byte",
           "Achieved", "Of peak"},
          {true, false, false, false, false, true, true, true, true, true, true, true},
          {},
          ""};
  const auto& agg = analysis.agg;
  std::size_t n = shown(ctx.top, agg.kernels.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& row = agg.kernels[i];
    const auto& m = analysis.kernels[i].metrics;
    const auto& cls = agg.families[row.family].cls;
    auto achieved = m.achieved_flops_per_s();
    std::optional<double> of_peak;
    if (achieved && m.peak_flops_per_s && m.peak_flops_per_s->value > 0) of_peak = *achieved / m.peak_flops_per_s->value;
    t.rows.push_back({count_cell(i + 1), name_cell(analysis::shown_name(profile, row)),
                      text_cell(std::string(names::to_string(cls.library))), text_cell(std::string(names::to_string(cls.op_class))),
                      text_cell(std::string(analysis::bottleneck_name(analysis.kernels[i].verdict.kind))),
                      duration_cell(row.total_ns), percent_cell(row.share), count_cell(row.launches),
                      duration_cell(row.mean_ns),
                      number_cell(m.arithmetic_intensity(), [](double v) { return fmt::format("{:.3g}", v); }),
                      si_cell(achieved, "FLOP/s"), percent_cell(of_peak)});
  }
  t.note = rest_note(agg.kernels, n, "kernels");
  return t;
}

std::vector<OpClassTime> time_by_op_class(const analysis::Analysis& analysis) {
  std::map<std::string, OpClassTime> by_class;
  for (const auto& f : analysis.agg.families) {
    if (!f.total_ns) continue;
    std::string op(names::to_string(f.cls.op_class));
    auto& entry = by_class[op];
    entry.op_class = op;
    entry.total_ns += *f.total_ns;
    entry.share += f.share.value_or(0);
    entry.launches += f.launches;
  }
  std::vector<OpClassTime> out;
  for (auto& [op, entry] : by_class) out.push_back(entry);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  return out;
}

Table op_class_table(const analysis::Analysis& analysis) {
  Table t{"op-classes", {"Op class", "Time", "Share", "Launches"}, {false, true, true, true}, {}, ""};
  for (const auto& c : time_by_op_class(analysis)) {
    t.rows.push_back({text_cell(c.op_class), duration_cell(c.total_ns), percent_cell(c.share), count_cell(c.launches)});
  }
  return t;
}

Table stall_table(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx) {
  Table t{"stalls", {"Kernel", "Share", "Top warp stalls (share of the cycles between two issues)"},
          {false, true, false}, {}, ""};
  const auto& kernels = analysis.agg.kernels;
  for (std::size_t i = 0; i < shown(ctx.top, kernels.size()); ++i) {
    const auto& stalls = analysis.kernels[i].metrics.top_stalls;
    if (stalls.empty()) continue;
    std::vector<std::string> parts;
    for (const auto& s : stalls) parts.push_back(fmt::format("{} {}", s.reason, human_percent(s.share)));
    t.rows.push_back({name_cell(analysis::shown_name(profile, kernels[i])), percent_cell(kernels[i].share),
                      text_cell(fmt::format("{}", fmt::join(parts, ", ")))});
  }
  return t;
}

std::vector<KernelAdvice> advice_list(const model::Profile& profile, const analysis::Analysis& analysis,
                                      const ReportContext& ctx) {
  std::vector<KernelAdvice> out;
  const auto& kernels = analysis.agg.kernels;
  for (std::size_t i = 0; i < shown(ctx.top, kernels.size()); ++i) {
    const auto& insight = analysis.kernels[i];
    if (insight.advice.empty() && insight.verdict.reason.empty()) continue;
    out.push_back({ellipsize(analysis::shown_name(profile, kernels[i]), kNameChars),
                   kernels[i].share ? human_percent(*kernels[i].share) : std::string(kMissing),
                   std::string(analysis::bottleneck_name(insight.verdict.kind)), insight.verdict.reason, insight.advice});
  }
  return out;
}

}  // namespace kernlens::report

#include "kernlens/report/tables.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "kernlens/common/shell.h"
#include "kernlens/report/format.h"
#include "kernlens/report/summary.h"

namespace kernlens::report {
namespace {

constexpr std::string_view kMissing = "-";  // a value that was not measured

// Kernel names run to hundreds of characters of template arguments; tables show the start.
constexpr std::size_t kNameChars = 90;

Cell text_cell(std::string text) { return Cell{std::move(text), std::nullopt, false, "", "", std::nullopt}; }
Cell code_cell(std::string text) { return Cell{std::move(text), std::nullopt, true, "", "", std::nullopt}; }
// A kernel's name: cut to kNameChars, the whole on hover; `brief` (its base name) where a
// writer can show the whole on hover.
Cell name_cell(const std::string& name, std::string brief = "") {
  std::string shown = ellipsize(name, kNameChars);
  std::string full = shown == name && (brief.empty() || brief == name) ? "" : name;
  return Cell{shown, std::nullopt, true, std::move(full), std::move(brief), std::nullopt};
}

// A number shown formatted and sorted by its value; "-" (sorted first) when absent.
template <class Format>
Cell number_cell(std::optional<double> v, Format format) {
  if (!v) return Cell{std::string(kMissing), -1e300, false, "", "", std::nullopt};
  return Cell{format(*v), *v, false, "", "", std::nullopt};
}

Cell duration_cell(std::optional<double> ns) { return number_cell(ns, human_duration_ns); }
Cell percent_cell(std::optional<double> fraction) { return number_cell(fraction, human_percent); }
Cell count_cell(std::uint64_t n) {
  return number_cell(static_cast<double>(n), [](double v) { return fmt::format("{:.0f}", v); });
}
Cell si_cell(std::optional<double> v, std::string_view unit) {
  return number_cell(v, [unit](double x) { return human_si(x, unit); });
}

// `c` with how it was obtained (a missing value: why it is missing).
Cell with_how(Cell c, std::optional<Provenance> how) {
  c.how = std::move(how);
  return c;
}
Cell with_how(Cell c, How how, std::string text) { return with_how(std::move(c), Provenance{how, std::move(text)}); }

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

void drop_empty_columns(Table& t, const std::vector<std::string_view>& headers) {
  for (std::size_t col = t.headers.size(); col-- > 0;) {
    if (std::find(headers.begin(), headers.end(), t.headers[col]) == headers.end()) continue;
    bool empty = std::all_of(t.rows.begin(), t.rows.end(), [col](const auto& row) { return row[col].text == kMissing; });
    if (!empty) continue;
    t.headers.erase(t.headers.begin() + static_cast<std::ptrdiff_t>(col));
    t.numeric.erase(t.numeric.begin() + static_cast<std::ptrdiff_t>(col));
    for (auto& row : t.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(col));
  }
}

Table summary_table(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx) {
  Table t{"summary", {"", ""}, {false, false}, {}, "", {}};
  auto add = [&t](std::string key, std::string value, bool code = false) {
    Cell c = text_cell(std::move(value));
    c.code = code;
    t.rows.push_back({text_cell(std::move(key)), std::move(c)});
  };
  for (const auto& in : profile.inputs) add("Input", fmt::format("{} ({})", in.path, describe_input(in)), true);
  if (std::string gpu = device_line(profile, analysis); !gpu.empty()) add("GPU", gpu);
  if (!ctx.command.empty()) add("Command", shell_join(ctx.command), true);
  const auto& totals = analysis.agg.totals;
  add("Kernel time", totals.kernel_time_ns ? human_duration_ns(*totals.kernel_time_ns) : std::string(kMissing));
  add("Launches", fmt::format("{} launches of {} kernels", totals.launches, totals.unique_kernels));
  add("Peaks", analysis.peaks ? peaks_line(*analysis.peaks) : analysis.no_peaks_reason);
  add("Deep metrics", coverage_line(analysis.coverage));
  if (analysis.whole.mfu) add("MFU (all kernels)", fmt::format("{} = {}", mfu_text(analysis.whole), mfu_note(analysis.whole)));
  if (analysis.whole.analytic_flops) add("Analytic FLOPs (all kernels)", analytic_note(analysis.whole));
  return t;
}

namespace {

// The timeline figures of a stage, with how they were measured.
std::vector<Cell> stage_timeline_cells(const analysis::StageRow& s) {
  Cell wall = duration_cell(s.wall_ns), busy = percent_cell(s.busy_fraction());
  Cell gaps = duration_cell(s.gaps ? std::optional(s.gaps->total_ns) : std::nullopt);
  if (!s.wall_ns) return {wall, busy, gaps};
  return {with_how(wall, How::kMeasured,
                   "measured on the timeline: the union of the stage's GPU extents (each instance from its first "
                   "kernel's start to its last kernel's end)"),
          with_how(busy, How::kMeasured, "measured: the time kernels ran (overlaps counted once) over the GPU wall time"),
          s.gaps ? with_how(gaps, How::kMeasured,
                            fmt::format("measured: {} idle gaps inside the stage's extents, the largest {}", s.gaps->count,
                                        human_duration_ns(s.gaps->largest_ns)))
                 : gaps};
}

}  // namespace

Table stage_table(const analysis::Analysis& analysis) {
  Table t{"stages",
          {"Stage", "Kernel time", "Share", "Launches", "GPU wall", "Busy", "Idle gaps", "FLOPs", "MFU", "ncu metrics"},
          {false, true, true, true, true, true, true, true, true, true},
          {},
          "",
          {}};
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
    Cell kernel_time = duration_cell(s.has_kernel_time ? std::optional(s.kernel_time_ns) : std::nullopt);
    if (s.has_kernel_time) {
      kernel_time = with_how(kernel_time, How::kMeasured, fmt::format("measured: the durations of its {} launches", s.launches));
    }
    std::vector<Cell> row = {code_cell(s.name), kernel_time, percent_cell(share), count_cell(s.launches)};
    for (auto& c : stage_timeline_cells(s)) row.push_back(std::move(c));
    row.push_back(with_how(si_cell(work.flops, "FLOP"), flops_provenance(work)));
    Cell mfu = text_cell(mfu_text(work));
    mfu.sort_key = work.mfu;
    row.push_back(with_how(std::move(mfu), mfu_provenance(work)));
    const bool deep = analysis.coverage.deep_launches > 0;  // else the summary says: none
    row.push_back(with_how(percent_cell(deep ? work.coverage : std::nullopt), How::kMeasured,
                           "the share of the stage's kernel time on launches Nsight Compute measured (its "
                           "SpeedOfLight section)"));
    if (analytic) {
      row.push_back(si_cell(work.analytic_flops, "FLOP"));
      row.push_back(percent_cell(work.analytic_mfu));
      Cell ratio = text_cell(flops_ratio_text(work) + (work.flops_ratio_flag.empty() ? "" : " (far from 1)"));
      ratio.sort_key = work.flops_ratio;
      ratio.full = work.flops_ratio_flag;
      row.push_back(std::move(ratio));
    }
    t.rows.push_back(std::move(row));
  }
  drop_empty_columns(t, {"GPU wall", "Busy", "Idle gaps", "ncu metrics"});
  return t;
}

namespace {

// Launches with Nsight Compute's throughput figures, per kernel row (the analysis' coverage
// counts them so).
std::vector<std::uint64_t> deep_launches_per_kernel(const model::Profile& profile, const analysis::Aggregate& agg) {
  std::unordered_map<model::NameId, std::size_t> row_of;
  for (std::size_t i = 0; i < agg.kernels.size(); ++i) row_of.emplace(agg.kernels[i].name, i);
  const analysis::MetricResolver resolver(profile);
  std::vector<std::uint64_t> out(agg.kernels.size(), 0);
  for (const auto& l : profile.launches) {
    if (l.kind != model::LaunchKind::kKernel || l.metrics_count == 0) continue;
    auto it = row_of.find(l.name);
    if (it != row_of.end() && resolver.get(l, analysis::Figure::kSmPct)) out[it->second] += l.count;
  }
  return out;
}

Details kernel_details(const model::Profile& profile, const analysis::Analysis& analysis, std::size_t i,
                       std::uint64_t deep_launches) {
  const auto& row = analysis.agg.kernels[i];
  const auto& cls = analysis.agg.families[row.family].cls;
  const auto& insight = analysis.kernels[i];
  Details d = {{"Name", analysis::shown_name(profile, row)}};
  if (!row.demangled.empty()) d.emplace_back("Mangled", profile.names[row.name]);
  d.emplace_back("Base name", cls.base_name);
  d.emplace_back("Class", fmt::format("{} {} (rule {})", names::to_string(cls.library), names::to_string(cls.op_class), cls.rule));
  if (!insight.verdict.reason.empty()) {
    d.emplace_back("Bottleneck", fmt::format("{}: {}", analysis::bottleneck_name(insight.verdict.kind), insight.verdict.reason));
  }
  d.emplace_back("ncu metrics", deep_launches ? deep_provenance(insight.metrics, deep_launches).text
                                              : std::string("none: no launch of it was measured by Nsight Compute"));
  std::vector<std::string> stages;
  for (const auto& [label, ns] : row.stage_ns) stages.push_back(fmt::format("{} {}", label, human_duration_ns(ns)));
  if (!stages.empty()) d.emplace_back("Stages", fmt::format("{}", fmt::join(stages, ", ")));
  return d;
}

}  // namespace

Table kernel_table(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx) {
  Table t{"kernels",
          {"#", "Kernel", "Library", "Op", "Bottleneck", "Time", "Share", "Launches", "Mean", "FLOP/byte",
           "Achieved", "Of peak"},
          {true, false, false, false, false, true, true, true, true, true, true, true},
          {},
          "",
          {}};
  const auto& agg = analysis.agg;
  const auto deep = deep_launches_per_kernel(profile, agg);
  std::size_t n = shown(ctx.top, agg.kernels.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& row = agg.kernels[i];
    const auto& m = analysis.kernels[i].metrics;
    const auto& cls = agg.families[row.family].cls;
    auto achieved = m.achieved_flops_per_s();
    std::optional<double> of_peak;
    if (achieved && m.peak_flops_per_s && m.peak_flops_per_s->value > 0) of_peak = *achieved / m.peak_flops_per_s->value;
    const Provenance how = deep_provenance(m, deep[i]);
    auto deep_cell = [&how](Cell c) { return c.text == kMissing ? c : with_how(std::move(c), how); };
    Cell peak = deep_cell(percent_cell(of_peak));
    if (of_peak) peak.how->text += fmt::format("; peak {} ({})", human_si(m.peak_flops_per_s->value, "FLOP/s"), m.peak_flops_per_s->source);
    t.rows.push_back({count_cell(i + 1), name_cell(analysis::shown_name(profile, row), cls.base_name),
                      text_cell(std::string(names::to_string(cls.library))), text_cell(std::string(names::to_string(cls.op_class))),
                      text_cell(std::string(analysis::bottleneck_name(analysis.kernels[i].verdict.kind))),
                      with_how(duration_cell(row.total_ns), How::kMeasured,
                               fmt::format("measured: the durations of its {} launches", row.timed_launches)),
                      percent_cell(row.share), count_cell(row.launches), duration_cell(row.mean_ns),
                      deep_cell(number_cell(m.arithmetic_intensity(), [](double v) { return fmt::format("{:.3g}", v); })),
                      deep_cell(si_cell(achieved, "FLOP/s")), std::move(peak)});
    t.details.push_back(kernel_details(profile, analysis, i, deep[i]));
  }
  drop_empty_columns(t, {"FLOP/byte", "Achieved", "Of peak"});
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
  Table t{"op-classes", {"Op class", "Time", "Share", "Launches"}, {false, true, true, true}, {}, "", {}};
  for (const auto& c : time_by_op_class(analysis)) {
    t.rows.push_back({text_cell(c.op_class), duration_cell(c.total_ns), percent_cell(c.share), count_cell(c.launches)});
  }
  return t;
}

Table stall_table(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx) {
  Table t{"stalls", {"Kernel", "Share", "Top warp stalls (share of the cycles between two issues)"},
          {false, true, false}, {}, "", {}};
  const auto& kernels = analysis.agg.kernels;
  for (std::size_t i = 0; i < shown(ctx.top, kernels.size()); ++i) {
    const auto& stalls = analysis.kernels[i].metrics.top_stalls;
    if (stalls.empty()) continue;
    std::vector<std::string> parts;
    for (const auto& s : stalls) parts.push_back(fmt::format("{} {}", s.reason, human_percent(s.share)));
    const auto& base = analysis.agg.families[kernels[i].family].cls.base_name;
    t.rows.push_back({name_cell(analysis::shown_name(profile, kernels[i]), base), percent_cell(kernels[i].share),
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
    const std::string& name = analysis::shown_name(profile, kernels[i]);
    out.push_back({ellipsize(name, kNameChars), name, analysis.agg.families[kernels[i].family].cls.base_name,
                   kernels[i].share ? human_percent(*kernels[i].share) : std::string(kMissing),
                   std::string(analysis::bottleneck_name(insight.verdict.kind)), insight.verdict.reason, insight.advice});
  }
  return out;
}

}  // namespace kernlens::report

namespace kernlens::report {
namespace {

// The columns of a scaling table that say where a cell is, shown when they vary.
struct ScalingKey {
  const char* header;
  bool numeric;
  Cell (*cell)(const model::ScalingCell&);
};

Cell optional_count(std::optional<std::int64_t> v) {
  return v ? count_cell(static_cast<std::uint64_t>(*v)) : number_cell(std::nullopt, [](double) { return std::string(); });
}

constexpr ScalingKey kScalingKeys[] = {
    {"GPU", false, [](const model::ScalingCell& c) { return text_cell(c.gpu); }},
    {"dtype", false, [](const model::ScalingCell& c) { return text_cell(c.dtype); }},
    {"Model", false, [](const model::ScalingCell& c) { return text_cell(c.model); }},
    {"Batch", true, [](const model::ScalingCell& c) { return optional_count(c.batch); }},
    {"Tokens", true, [](const model::ScalingCell& c) { return optional_count(c.tokens); }},
};

// A page stays readable (and small) with a large sweep: the views hold every row.
constexpr std::size_t kScalingRows = 300;

bool varies(const std::vector<model::ScalingCell>& cells, const ScalingKey& key) {
  for (const auto& c : cells) {
    if (key.cell(c).text != key.cell(cells.front()).text) return true;
  }
  return false;
}

}  // namespace

Table scaling_table(const std::vector<model::ScalingCell>& cells, bool families, std::string id,
                    const std::string& db_name) {
  Table t;
  t.id = std::move(id);
  auto column = [&t](std::string header, bool numeric) {
    t.headers.push_back(std::move(header));
    t.numeric.push_back(numeric);
  };
  if (families) column("Family", false);
  column("Op class", false);
  std::vector<const ScalingKey*> keys;
  for (const auto& key : kScalingKeys) {
    if (!cells.empty() && (varies(cells, key) || std::string_view(key.header) == "Model")) keys.push_back(&key);
  }
  for (const auto* key : keys) column(key->header, key->numeric);
  for (const char* h : {"Runs", "Time per run", "Share", "SOL", "SM", "Memory", "FLOP/s", "DRAM", "Measured"}) column(h, true);
  auto pct = [](std::optional<double> v) { return number_cell(v, [](double x) { return fmt::format("{:.1f}%", x); }); };
  for (const auto& c : cells) {
    if (t.rows.size() == kScalingRows) {
      t.note = fmt::format("{} more rows: kernlens db query --db {} --view {}", cells.size() - kScalingRows, db_name,
                           families ? "family-scaling" : "class-scaling");
      break;
    }
    auto& row = t.rows.emplace_back();
    if (families) row.push_back(name_cell(c.base_name));
    row.push_back(text_cell(c.op_class));
    for (const auto* key : keys) row.push_back(key->cell(c));
    row.insert(row.end(), {count_cell(static_cast<std::uint64_t>(c.runs)), duration_cell(c.time_ns_per_run),
                           percent_cell(c.share_of_time), pct(c.sol_pct), pct(c.sm_pct), pct(c.memory_pct),
                           si_cell(c.flops_per_s, "FLOP/s"), si_cell(c.dram_bytes_per_s, "B/s"),
                           percent_cell(c.measured_share)});
  }
  return t;
}

}  // namespace kernlens::report

#include "kernlens/report/text_report.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "kernlens/common/text.h"
#include "kernlens/report/format.h"
#include "kernlens/report/rank_tables.h"
#include "kernlens/report/summary.h"

namespace kernlens::report {
namespace {

void append_header(std::string& out, const model::Profile& profile, const analysis::Analysis& analysis) {
  const analysis::Aggregate& agg = analysis.agg;
  for (const auto& in : profile.inputs) {
    out += fmt::format("input   {}  ({})\n", escape_controls(in.path), describe_input(in));
  }
  if (std::string gpu = device_line(profile, analysis); !gpu.empty()) out += fmt::format("gpu     {}\n", escape_controls(gpu));
  const auto& t = agg.totals;
  out += fmt::format("kernels {} launches of {} kernels", t.launches, t.unique_kernels);
  if (t.kernel_time_ns) out += fmt::format(", {} of GPU time", human_duration_ns(*t.kernel_time_ns));
  out += "\n";
  out += fmt::format("peaks   {}\n", analysis.peaks ? peaks_line(*analysis.peaks) : analysis.no_peaks_reason);
  out += fmt::format("metrics {}\n", coverage_line(analysis.coverage));
}

std::string time_cells(std::optional<double> total_ns, std::optional<double> share,
                       std::uint64_t launches) {
  return fmt::format("{:>10}  {:>6}  {:>8}", total_ns ? human_duration_ns(*total_ns) : "-",
                     share ? human_percent(*share) : "-", launches);
}

std::string time_cells(const analysis::TimeStats& t) {
  return time_cells(t.total_ns, t.share, t.launches);
}

// Library and operation columns, as wide as the longest value among the rows shown.
class ClassColumns {
 public:
  template <class Rows, class ClassOf>
  ClassColumns(const Rows& rows, std::size_t n, ClassOf class_of) {
    for (std::size_t i = 0; i < n; ++i) {
      const names::Classification& c = class_of(rows[i]);
      library_width_ = std::max(library_width_, to_string(c.library).size());
      op_width_ = std::max(op_width_, to_string(c.op_class).size());
    }
  }
  std::string header() const { return cells("library", "op"); }
  std::string cells(const names::Classification& c) const {
    return cells(to_string(c.library), to_string(c.op_class));
  }

 private:
  std::string cells(std::string_view library, std::string_view op) const {
    return fmt::format("{:<{}}  {:<{}}", library, library_width_, op, op_width_);
  }
  std::size_t library_width_ = 7;  // "library"
  std::size_t op_width_ = 2;       // "op"
};

// The line that sums the rows after the first `n`: "(12 more kernels)".
template <class Row>
void append_rest(std::string& out, const std::vector<Row>& rows, std::size_t n,
                 const analysis::Totals& totals, std::string_view what) {
  if (n >= rows.size() || !totals.kernel_time_ns) return;
  double rest = 0;
  std::uint64_t launches = 0;
  for (std::size_t i = n; i < rows.size(); ++i) {
    rest += rows[i].total_ns.value_or(0);
    launches += rows[i].launches;
  }
  std::string cells = time_cells(rest, rest / *totals.kernel_time_ns, launches);
  out += fmt::format("{:>4}  {}  ({} more {})\n", "", cells, rows.size() - n, what);
}

std::size_t rows_shown(std::size_t top, std::size_t size) {
  return top ? std::min(top, size) : size;
}

constexpr std::string_view kBoundHeader = "bound   ";  // the widest verdict: "compute", "latency"

std::string bound_cell(const analysis::KernelInsight& k) {
  return fmt::format("{:<8}", analysis::bottleneck_name(k.verdict.kind));
}

void append_kernels(std::string& out, const model::Profile& profile, const analysis::Analysis& analysis,
                    const TextOptions& options) {
  const analysis::Aggregate& agg = analysis.agg;
  std::size_t n = rows_shown(options.top, agg.kernels.size());
  auto class_of = [&](const analysis::KernelRow& k) -> const names::Classification& {
    return agg.families[k.family].cls;
  };
  ClassColumns columns(agg.kernels, n, class_of);
  out += fmt::format("\nTop {} of {} kernels by GPU time\n", n, agg.kernels.size());
  out += fmt::format("{:>4}  {:>10}  {:>6}  {:>8}  {:>10}  {}  {}  {}\n", "#", "time", "share",
                     "launches", "mean", kBoundHeader, columns.header(), "kernel");
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = agg.kernels[i];
    out += fmt::format("{:>4}  {}  {:>10}  {}  {}  {}\n", i + 1, time_cells(k),
                       k.mean_ns ? human_duration_ns(*k.mean_ns) : "-", bound_cell(analysis.kernels[i]),
                       columns.cells(class_of(k)), ellipsize(analysis::shown_name(profile, k), options.name_width));
  }
  append_rest(out, agg.kernels, n, agg.totals, "kernels");
}

void append_families(std::string& out, const analysis::Analysis& analysis, const TextOptions& options) {
  const analysis::Aggregate& agg = analysis.agg;
  std::size_t n = rows_shown(options.top, agg.families.size());
  auto class_of = [](const analysis::FamilyRow& f) -> const names::Classification& {
    return f.cls;
  };
  ClassColumns columns(agg.families, n, class_of);
  out += fmt::format("\nTop {} of {} kernel families (kernels of one base name)\n", n,
                     agg.families.size());
  out += fmt::format("{:>4}  {:>10}  {:>6}  {:>8}  {:>7}  {}  {}  {}\n", "#", "time", "share",
                     "launches", "kernels", kBoundHeader, columns.header(), "base name");
  for (std::size_t i = 0; i < n; ++i) {
    const auto& f = agg.families[i];
    out += fmt::format("{:>4}  {}  {:>7}  {}  {}  {}\n", i + 1, time_cells(f), f.kernels,
                       bound_cell(analysis.families[i]), columns.cells(f.cls),
                       ellipsize(f.cls.base_name, options.name_width));
  }
  append_rest(out, agg.families, n, agg.totals, "families");
}

// The measured line of a kernel: DRAM traffic and work against their roofs.
std::string traffic_line(const analysis::KernelMetrics& m) {
  std::vector<std::string> parts;
  if (m.dram_bytes) {
    std::string part = fmt::format("DRAM {}", human_si(m.dram_bytes->value, "B"));
    if (auto rate = m.achieved_dram_bytes_per_s()) {
      part += fmt::format(" at {}", human_si(*rate, "B/s"));
      if (m.peak_dram_bytes_per_s) part += fmt::format(" ({} of peak)", human_percent(*rate / m.peak_dram_bytes_per_s->value));
    }
    parts.push_back(std::move(part));
  }
  if (m.flops && m.flops->value == 0) {
    parts.emplace_back("no FLOPs");
  } else if (m.flops) {
    std::string part = human_si(m.flops->value, "FLOP");
    if (m.dominant_path) part += fmt::format(" mostly {}", analysis::path_name(*m.dominant_path));
    if (auto rate = m.achieved_flops_per_s()) {
      part += fmt::format(" at {}", human_si(*rate, "FLOP/s"));
      if (m.peak_flops_per_s) part += fmt::format(" ({} of peak)", human_percent(*rate / m.peak_flops_per_s->value));
    }
    parts.push_back(std::move(part));
  }
  if (auto ai = m.arithmetic_intensity(); ai && *ai > 0) parts.push_back(fmt::format("{:.3g} FLOP/byte", *ai));
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string occupancy_line(const analysis::KernelMetrics& m) {
  using analysis::Figure;
  std::vector<std::string> parts;
  if (auto a = m.value(Figure::kAchievedOccupancyPct)) parts.push_back(fmt::format("achieved {:.1f}%", *a));
  if (auto t = m.value(Figure::kTheoreticalOccupancyPct)) parts.push_back(fmt::format("theoretical {:.1f}%", *t));
  if (!m.occupancy_limiters.empty()) parts.push_back(fmt::format("limited by {}", fmt::join(m.occupancy_limiters, " and ")));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string stalls_line(const analysis::KernelMetrics& m) {
  std::vector<std::string> parts;
  for (const auto& s : m.top_stalls) parts.push_back(fmt::format("{} {}", s.reason, human_percent(s.share)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

constexpr std::size_t kWhyKernels = 5;   // kernels explained in the text output
constexpr std::size_t kAdvicePerKernel = 3;
constexpr std::size_t kTextWidth = 100;

void append_labeled(std::string& out, std::string_view label, const std::string& text) {
  if (text.empty()) return;
  constexpr std::size_t kIndent = 16;
  std::string prefix = fmt::format("      {:<10}", label);
  out += prefix + wrap(text, kTextWidth, kIndent) + "\n";
}

void append_why(std::string& out, const model::Profile& profile, const analysis::Analysis& analysis,
                const TextOptions& options) {
  const auto& kernels = analysis.agg.kernels;
  std::size_t n = std::min({kWhyKernels, kernels.size(), options.top ? options.top : kernels.size()});
  if (n == 0) return;
  out += fmt::format("\nWhy the top {} kernels are slow\n", n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& row = kernels[i];
    const auto& k = analysis.kernels[i];
    out += fmt::format("{:>4}  {}  ({} of GPU time)\n", i + 1, ellipsize(analysis::shown_name(profile, row), options.name_width),
                       row.share ? human_percent(*row.share) : "-");
    append_labeled(out, analysis::bottleneck_name(k.verdict.kind), k.verdict.reason);
    append_labeled(out, "work", traffic_line(k.metrics));
    append_labeled(out, "occupancy", occupancy_line(k.metrics));
    append_labeled(out, "stalls", stalls_line(k.metrics));
    for (std::size_t a = 0; a < std::min(kAdvicePerKernel, k.advice.size()); ++a) {
      const auto& advice = k.advice[a];
      std::string speedup = advice.est_speedup_pct ? fmt::format(", est. {:.0f}%", *advice.est_speedup_pct) : "";
      append_labeled(out, a == 0 ? "advice" : "", fmt::format("[{}{}] {}", advice.rule, speedup, first_sentence(advice.text)));
    }
  }
}

std::size_t code_points(std::string_view utf8) {
  return static_cast<std::size_t>(
      std::count_if(utf8.begin(), utf8.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// One line per distinct note; stages that share a note share the line.
void append_mfu_notes(std::string& out, const analysis::Analysis& analysis) {
  std::vector<std::pair<std::string, std::vector<std::string>>> notes;  // note -> stages
  for (std::size_t i = 0; i < analysis.agg.stages.size(); ++i) {
    std::string note = mfu_note(analysis.stages[i]);
    auto it = std::find_if(notes.begin(), notes.end(), [&](const auto& n) { return n.first == note; });
    if (it == notes.end()) it = notes.insert(notes.end(), {std::move(note), {}});
    it->second.push_back(analysis.agg.stages[i].name);
  }
  out += "MFU\n";
  for (const auto& [note, stages] : notes) {
    std::string who = notes.size() == 1 && stages.size() > 1 ? "all stages" : fmt::format("{}", fmt::join(stages, ", "));
    out += fmt::format("  {}\n", wrap(fmt::format("{}: {}", who, note), kTextWidth, 4));
  }
}

// The model's FLOPs beside the measured ones, for the stages it counts.
void append_analytic(std::string& out, const analysis::Analysis& analysis) {
  std::string lines;
  for (std::size_t i = 0; i < analysis.agg.stages.size(); ++i) {
    const auto& w = analysis.stages[i];
    if (!w.analytic_flops && w.flops_ratio_flag.empty()) continue;
    lines += fmt::format("  {}\n", wrap(fmt::format("{}: {}", analysis.agg.stages[i].name, analytic_note(w)), kTextWidth, 4));
  }
  if (lines.empty() && !analysis.whole.analytic_source.empty()) {
    lines = fmt::format("  {}\n", wrap(fmt::format("all kernels: {}", analytic_note(analysis.whole)), kTextWidth, 4));
  }
  if (!lines.empty()) out += "Analytic FLOPs (the model's config)\n" + lines;
}

void append_stages(std::string& out, const analysis::Analysis& analysis) {
  const analysis::Aggregate& agg = analysis.agg;
  if (agg.stages.empty()) return;
  const bool timeline = std::any_of(agg.stages.begin(), agg.stages.end(),
                                    [](const analysis::StageRow& s) { return s.wall_ns.has_value(); });
  out += "\nStages (NVTX ranges)\n";
  out += fmt::format("{:>10}  {:>6}  {:>8}", "time", "share", "launches");
  if (timeline) out += fmt::format("  {:>10}  {:>6}  {:>7}  {:>10}", "wall", "busy", "gaps", "largest");
  std::size_t mfu_width = 6;  // in code points: fmt pads UTF-8 text by them
  for (const auto& w : analysis.stages) mfu_width = std::max(mfu_width, code_points(mfu_text(w)));
  out += fmt::format("  {:>13}  {:>{}}  stage\n", "FLOPs", "MFU", mfu_width);
  for (std::size_t i = 0; i < agg.stages.size(); ++i) {
    const auto& s = agg.stages[i];
    const auto& work = analysis.stages[i];
    bool has_share = s.has_kernel_time && agg.totals.kernel_time_ns && *agg.totals.kernel_time_ns > 0;
    out += fmt::format("{:>10}  {:>6}  {:>8}", s.has_kernel_time ? human_duration_ns(s.kernel_time_ns) : "-",
                       has_share ? human_percent(s.kernel_time_ns / *agg.totals.kernel_time_ns) : "-",
                       s.launches);
    if (timeline) {
      auto f = s.busy_fraction();
      out += fmt::format("  {:>10}  {:>6}  {:>7}  {:>10}", s.wall_ns ? human_duration_ns(*s.wall_ns) : "-",
                         f ? human_percent(*f) : "-", s.gaps ? std::to_string(s.gaps->count) : "-",
                         s.gaps && s.gaps->count ? human_duration_ns(s.gaps->largest_ns) : "-");
    }
    out += fmt::format("  {:>13}  {:>{}}  {}{}\n", work.flops ? human_si(*work.flops, "FLOP") : "-",
                       mfu_text(work), mfu_width,
                       std::string(static_cast<std::size_t>(s.depth) * 2, ' '), escape_controls(s.label));
  }
  append_mfu_notes(out, analysis);
  append_analytic(out, analysis);
}

void append_memory_ops(std::string& out, const model::Profile& profile, const analysis::Aggregate& agg) {
  if (agg.memory_ops.empty()) return;
  out += "\nMemory copies and sets\n";
  out += fmt::format("{:>10}  {:>8}  {:>10}  {}\n", "time", "count", "bytes", "operation");
  for (const auto& m : agg.memory_ops) {
    out += fmt::format("{:>10}  {:>8}  {:>10}  {}\n", m.total_ns ? human_duration_ns(*m.total_ns) : "-",
                       m.count, m.bytes ? human_si(static_cast<double>(*m.bytes), "B") : "-",
                       escape_controls(profile.names[m.name]));
  }
}

// MFU over all kernels, when the user gave work for the whole profile or it was measured.
void append_whole_mfu(std::string& out, const analysis::Analysis& analysis) {
  const auto& w = analysis.whole;
  if (!w.flops) return;
  // A stage that holds every launch already says it.
  for (const auto& s : analysis.agg.stages) {
    if (s.launches == analysis.agg.totals.launches) return;
  }
  std::string line = w.mfu ? fmt::format("All kernels: MFU {} = {}", mfu_text(w), mfu_note(w))
                           : fmt::format("All kernels: {}", mfu_note(w));
  out += fmt::format("\n{}\n", wrap(line, kTextWidth, 4));
}

}  // namespace

std::string analysis_text(const model::Profile& profile, const analysis::Analysis& analysis,
                          const TextOptions& options) {
  const analysis::Aggregate& agg = analysis.agg;
  std::string out;
  append_header(out, profile, analysis);
  append_kernels(out, profile, analysis, options);
  append_families(out, analysis, options);
  append_why(out, profile, analysis, options);
  append_stages(out, analysis);
  append_whole_mfu(out, analysis);
  append_memory_ops(out, profile, agg);
  out += ranks_text(analysis.ranks, options.top);
  return out;
}

}  // namespace kernlens::report

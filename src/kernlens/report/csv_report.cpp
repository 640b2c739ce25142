#include "kernlens/report/csv_report.h"

#include <array>
#include <vector>

#include <fmt/format.h>

#include "kernlens/common/escape.h"

namespace kernlens::report {
namespace {

// A number as JSON writes it (shortest form that reads back the same); "" when absent.
std::string num(std::optional<double> v) { return v ? fmt::format("{}", *v) : std::string(); }
std::string count(std::uint64_t v) { return std::to_string(v); }

// One row of a table: the analysis and the index of the row in its table.
struct RowRef {
  const model::Profile& profile;
  const analysis::Analysis& analysis;
  std::size_t i;
};

template <std::size_t N>
using Columns = std::array<std::pair<std::string_view, std::string (*)(const RowRef&)>, N>;

const analysis::KernelMetrics& kernel_metrics(const RowRef& r) { return r.analysis.kernels[r.i].metrics; }
const analysis::KernelMetrics& family_metrics(const RowRef& r) { return r.analysis.families[r.i].metrics; }

// The deep figures kernels and families share, as the JSON output names them.
template <const analysis::KernelMetrics& (*M)(const RowRef&)>
constexpr Columns<10> metric_columns() {
  using analysis::Figure;
  return {{
      {"sm_pct", [](const RowRef& r) { return num(M(r).value(Figure::kSmPct)); }},
      {"memory_pct", [](const RowRef& r) { return num(M(r).value(Figure::kMemoryPct)); }},
      {"dram_pct", [](const RowRef& r) { return num(M(r).value(Figure::kDramPct)); }},
      {"achieved_occupancy_pct", [](const RowRef& r) { return num(M(r).value(Figure::kAchievedOccupancyPct)); }},
      {"flops", [](const RowRef& r) { return num(M(r).flops ? std::optional(M(r).flops->value) : std::nullopt); }},
      {"dram_bytes", [](const RowRef& r) { return num(M(r).dram_bytes ? std::optional(M(r).dram_bytes->value) : std::nullopt); }},
      {"arithmetic_intensity", [](const RowRef& r) { return num(M(r).arithmetic_intensity()); }},
      {"achieved_flops_per_s", [](const RowRef& r) { return num(M(r).achieved_flops_per_s()); }},
      {"peak_flops_per_s",
       [](const RowRef& r) { return num(M(r).peak_flops_per_s ? std::optional(M(r).peak_flops_per_s->value) : std::nullopt); }},
      {"coverage", [](const RowRef& r) { return M(r).time_ns > 0 ? num(M(r).deep_time_ns / M(r).time_ns) : std::string(); }},
  }};
}

const analysis::KernelRow& kernel(const RowRef& r) { return r.analysis.agg.kernels[r.i]; }
const analysis::FamilyRow& family(const RowRef& r) { return r.analysis.agg.families[r.i]; }
const names::Classification& kernel_class(const RowRef& r) { return r.analysis.agg.families[kernel(r).family].cls; }

constexpr Columns<10> kKernelColumns = {{
    {"rank", [](const RowRef& r) { return count(r.i + 1); }},
    {"name", [](const RowRef& r) { return analysis::shown_name(r.profile, kernel(r)); }},
    {"base_name", [](const RowRef& r) { return kernel_class(r).base_name; }},
    {"library", [](const RowRef& r) { return std::string(names::to_string(kernel_class(r).library)); }},
    {"op_class", [](const RowRef& r) { return std::string(names::to_string(kernel_class(r).op_class)); }},
    {"launches", [](const RowRef& r) { return count(kernel(r).launches); }},
    {"total_ns", [](const RowRef& r) { return num(kernel(r).total_ns); }},
    {"mean_ns", [](const RowRef& r) { return num(kernel(r).mean_ns); }},
    {"share", [](const RowRef& r) { return num(kernel(r).share); }},
    {"bottleneck", [](const RowRef& r) { return std::string(analysis::bottleneck_name(r.analysis.kernels[r.i].verdict.kind)); }},
}};

constexpr Columns<10> kFamilyColumns = {{
    {"rank", [](const RowRef& r) { return count(r.i + 1); }},
    {"base_name", [](const RowRef& r) { return family(r).cls.base_name; }},
    {"library", [](const RowRef& r) { return std::string(names::to_string(family(r).cls.library)); }},
    {"op_class", [](const RowRef& r) { return std::string(names::to_string(family(r).cls.op_class)); }},
    {"kernels", [](const RowRef& r) { return count(family(r).kernels); }},
    {"launches", [](const RowRef& r) { return count(family(r).launches); }},
    {"total_ns", [](const RowRef& r) { return num(family(r).total_ns); }},
    {"mean_ns", [](const RowRef& r) { return num(family(r).mean_ns); }},
    {"share", [](const RowRef& r) { return num(family(r).share); }},
    {"bottleneck", [](const RowRef& r) { return std::string(analysis::bottleneck_name(r.analysis.families[r.i].verdict.kind)); }},
}};

const analysis::StageRow& stage(const RowRef& r) { return r.analysis.agg.stages[r.i]; }
const analysis::StageWork& work(const RowRef& r) { return r.analysis.stages[r.i]; }

constexpr Columns<17> kStageColumns = {{
    {"name", [](const RowRef& r) { return stage(r).name; }},
    {"depth", [](const RowRef& r) { return std::to_string(stage(r).depth); }},
    {"launches", [](const RowRef& r) { return count(stage(r).launches); }},
    {"kernel_time_ns", [](const RowRef& r) { return stage(r).has_kernel_time ? num(stage(r).kernel_time_ns) : std::string(); }},
    {"wall_ns", [](const RowRef& r) { return num(stage(r).wall_ns); }},
    {"busy_ns", [](const RowRef& r) { return num(stage(r).busy_ns); }},
    {"busy_fraction", [](const RowRef& r) { return num(stage(r).busy_fraction()); }},
    {"gaps", [](const RowRef& r) { return stage(r).gaps ? count(stage(r).gaps->count) : std::string(); }},
    {"idle_ns", [](const RowRef& r) { return stage(r).gaps ? num(stage(r).gaps->total_ns) : std::string(); }},
    {"largest_gap_ns", [](const RowRef& r) { return stage(r).gaps ? num(stage(r).gaps->largest_ns) : std::string(); }},
    {"flops", [](const RowRef& r) { return num(work(r).flops); }},
    {"flops_source", [](const RowRef& r) { return work(r).flops_source; }},
    {"precision", [](const RowRef& r) { return work(r).precision ? std::string(analysis::path_name(*work(r).precision)) : std::string(); }},
    {"mfu", [](const RowRef& r) { return num(work(r).mfu); }},
    {"mfu_time_basis", [](const RowRef& r) { return work(r).mfu ? std::string(work(r).time_basis) : std::string(); }},
    {"mfu_missing", [](const RowRef& r) { return work(r).mfu_missing; }},
    {"coverage", [](const RowRef& r) { return num(work(r).coverage); }},
}};

template <class... ColumnSets>
std::string table_csv(const RowRef& first, std::size_t rows, const ColumnSets&... sets) {
  std::vector<std::string> header;
  (([&] { for (const auto& [name, value] : sets) header.push_back(csv_field(name)); })(), ...);
  std::string out = fmt::format("{}\r\n", fmt::join(header, ","));
  for (std::size_t i = 0; i < rows; ++i) {
    const RowRef row{first.profile, first.analysis, i};
    std::vector<std::string> fields;
    (([&] { for (const auto& [name, value] : sets) fields.push_back(csv_field(value(row))); })(), ...);
    out += fmt::format("{}\r\n", fmt::join(fields, ","));
  }
  return out;
}

constexpr std::array<std::pair<std::string_view, CsvTable>, 3> kTables = {{
    {"kernels", CsvTable::kKernels}, {"families", CsvTable::kFamilies}, {"stages", CsvTable::kStages}}};

std::string one_table(const RowRef& at, CsvTable table, std::size_t top) {
  const auto& agg = at.analysis.agg;
  auto shown = [top](std::size_t n) { return top ? std::min(top, n) : n; };
  switch (table) {
    case CsvTable::kKernels:
      return table_csv(at, shown(agg.kernels.size()), kKernelColumns, metric_columns<&kernel_metrics>());
    case CsvTable::kFamilies:
      return table_csv(at, shown(agg.families.size()), kFamilyColumns, metric_columns<&family_metrics>());
    case CsvTable::kStages: return table_csv(at, agg.stages.size(), kStageColumns);
  }
  return "";
}

}  // namespace

std::optional<CsvTable> csv_table(std::string_view name) {
  for (const auto& [n, t] : kTables) {
    if (n == name) return t;
  }
  return std::nullopt;
}

std::string analysis_csv(const model::Profile& profile, const analysis::Analysis& analysis,
                         std::optional<CsvTable> table, std::size_t top) {
  const RowRef at{profile, analysis, 0};
  if (table) return one_table(at, *table, top);
  std::string out;
  for (const auto& [name, t] : kTables) {
    if (!out.empty()) out += "\r\n";
    out += fmt::format("# {}\r\n{}", name, one_table(at, t, top));
  }
  return out;
}

}  // namespace kernlens::report

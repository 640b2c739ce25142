#include "kernlens/report/text_report.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "kernlens/ingest/detect.h"
#include "kernlens/report/format.h"

namespace kernlens::report {
namespace {

std::string describe_format(std::string_view id) {
  for (const auto& f : ingest::formats()) {
    if (f.id == id) return std::string(f.description);
  }
  return std::string(id);
}

void append_header(std::string& out, const model::Profile& profile, const analysis::Aggregate& agg) {
  for (const auto& in : profile.inputs) {
    out += fmt::format("input   {}  ({})\n", in.path, describe_format(in.format));
  }
  if (agg.device_ordinal) {
    if (const model::Device* d = profile.find_device(*agg.device_ordinal)) {
      std::string gpu = d->name.empty() ? fmt::format("device {}", d->ordinal) : d->name;
      if (!d->cc.empty()) gpu += fmt::format(", cc {}", d->cc);
      if (d->sm_count) gpu += fmt::format(", {} SMs", *d->sm_count);
      out += fmt::format("gpu     {}\n", gpu);
    }
  }
  const auto& t = agg.totals;
  out += fmt::format("kernels {} launches of {} kernels", t.launches, t.unique_kernels);
  if (t.kernel_time_ns) out += fmt::format(", {} of GPU time", human_duration_ns(*t.kernel_time_ns));
  out += "\n";
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

void append_kernels(std::string& out, const model::Profile& profile, const analysis::Aggregate& agg,
                    const TextOptions& options) {
  std::size_t n = rows_shown(options.top, agg.kernels.size());
  auto class_of = [&](const analysis::KernelRow& k) -> const names::Classification& {
    return agg.families[k.family].cls;
  };
  ClassColumns columns(agg.kernels, n, class_of);
  out += fmt::format("\nTop {} of {} kernels by GPU time\n", n, agg.kernels.size());
  out += fmt::format("{:>4}  {:>10}  {:>6}  {:>8}  {:>10}  {}  {}\n", "#", "time", "share",
                     "launches", "mean", columns.header(), "kernel");
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = agg.kernels[i];
    out += fmt::format("{:>4}  {}  {:>10}  {}  {}\n", i + 1, time_cells(k),
                       k.mean_ns ? human_duration_ns(*k.mean_ns) : "-", columns.cells(class_of(k)),
                       ellipsize(analysis::shown_name(profile, k), options.name_width));
  }
  append_rest(out, agg.kernels, n, agg.totals, "kernels");
}

void append_families(std::string& out, const analysis::Aggregate& agg, const TextOptions& options) {
  std::size_t n = rows_shown(options.top, agg.families.size());
  auto class_of = [](const analysis::FamilyRow& f) -> const names::Classification& {
    return f.cls;
  };
  ClassColumns columns(agg.families, n, class_of);
  out += fmt::format("\nTop {} of {} kernel families (kernels of one base name)\n", n,
                     agg.families.size());
  out += fmt::format("{:>4}  {:>10}  {:>6}  {:>8}  {:>7}  {}  {}\n", "#", "time", "share",
                     "launches", "kernels", columns.header(), "base name");
  for (std::size_t i = 0; i < n; ++i) {
    const auto& f = agg.families[i];
    out += fmt::format("{:>4}  {}  {:>7}  {}  {}\n", i + 1, time_cells(f), f.kernels,
                       columns.cells(f.cls), ellipsize(f.cls.base_name, options.name_width));
  }
  append_rest(out, agg.families, n, agg.totals, "families");
}

void append_stages(std::string& out, const analysis::Aggregate& agg) {
  if (agg.stages.empty()) return;
  out += "\nStages (NVTX ranges)\n";
  out += fmt::format("{:>10}  {:>6}  {:>8}  {}\n", "time", "share", "launches", "stage");
  for (const auto& s : agg.stages) {
    bool has_share = s.has_kernel_time && agg.totals.kernel_time_ns && *agg.totals.kernel_time_ns > 0;
    out += fmt::format("{:>10}  {:>6}  {:>8}  {}{}\n",
                       s.has_kernel_time ? human_duration_ns(s.kernel_time_ns) : "-",
                       has_share ? human_percent(s.kernel_time_ns / *agg.totals.kernel_time_ns) : "-",
                       s.launches, std::string(static_cast<std::size_t>(s.depth) * 2, ' '), s.label);
  }
}

}  // namespace

std::string analysis_text(const model::Profile& profile, const analysis::Aggregate& agg,
                          const TextOptions& options) {
  std::string out;
  append_header(out, profile, agg);
  append_kernels(out, profile, agg, options);
  append_families(out, agg, options);
  append_stages(out, agg);
  return out;
}

}  // namespace kernlens::report

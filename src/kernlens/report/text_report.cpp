#include "kernlens/report/text_report.h"

#include <algorithm>

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

void append_kernels(std::string& out, const model::Profile& profile, const analysis::Aggregate& agg,
                    const TextOptions& options) {
  std::size_t n = options.top ? std::min(options.top, agg.kernels.size()) : agg.kernels.size();
  out += fmt::format("\nTop {} of {} kernels by GPU time\n", n, agg.kernels.size());
  out += fmt::format("{:>4}  {:>10}  {:>6}  {:>8}  {:>10}  {}\n", "#", "time", "share", "launches",
                     "mean", "kernel");
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = agg.kernels[i];
    out += fmt::format("{:>4}  {:>10}  {:>6}  {:>8}  {:>10}  {}\n", i + 1,
                       k.total_ns ? human_duration_ns(*k.total_ns) : "-",
                       k.share ? human_percent(*k.share) : "-", k.launches,
                       k.mean_ns ? human_duration_ns(*k.mean_ns) : "-",
                       ellipsize(profile.names[k.name], options.name_width));
  }
  if (n < agg.kernels.size() && agg.totals.kernel_time_ns) {
    double rest = 0;
    std::uint64_t launches = 0;
    for (std::size_t i = n; i < agg.kernels.size(); ++i) {
      rest += agg.kernels[i].total_ns.value_or(0);
      launches += agg.kernels[i].launches;
    }
    out += fmt::format("{:>4}  {:>10}  {:>6}  {:>8}  {:>10}  ({} more kernels)\n", "",
                       human_duration_ns(rest), human_percent(rest / *agg.totals.kernel_time_ns),
                       launches, "", agg.kernels.size() - n);
  }
}

void append_stages(std::string& out, const analysis::Aggregate& agg) {
  if (agg.stages.empty()) return;
  const bool timeline = std::any_of(agg.stages.begin(), agg.stages.end(),
                                    [](const analysis::StageRow& s) { return s.wall_ns.has_value(); });
  out += "\nStages (NVTX ranges)\n";
  out += fmt::format("{:>10}  {:>6}  {:>8}", "time", "share", "launches");
  if (timeline) out += fmt::format("  {:>10}  {:>6}  {:>7}  {:>10}", "wall", "busy", "gaps", "largest");
  out += "  stage\n";
  for (const auto& s : agg.stages) {
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
    out += fmt::format("  {}{}\n", std::string(static_cast<std::size_t>(s.depth) * 2, ' '), s.label);
  }
}

void append_memory_ops(std::string& out, const model::Profile& profile, const analysis::Aggregate& agg) {
  if (agg.memory_ops.empty()) return;
  out += "\nMemory copies and sets\n";
  out += fmt::format("{:>10}  {:>8}  {:>10}  {}\n", "time", "count", "bytes", "operation");
  for (const auto& m : agg.memory_ops) {
    out += fmt::format("{:>10}  {:>8}  {:>10}  {}\n", m.total_ns ? human_duration_ns(*m.total_ns) : "-",
                       m.count, m.bytes ? std::to_string(*m.bytes) : "-", profile.names[m.name]);
  }
}

}  // namespace

std::string analysis_text(const model::Profile& profile, const analysis::Aggregate& agg,
                          const TextOptions& options) {
  std::string out;
  append_header(out, profile, agg);
  append_kernels(out, profile, agg, options);
  append_stages(out, agg);
  append_memory_ops(out, profile, agg);
  return out;
}

}  // namespace kernlens::report

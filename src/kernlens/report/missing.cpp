#include "kernlens/report/missing.h"

#include <algorithm>
#include <array>

#include "kernlens/report/charts.h"
#include "kernlens/report/tables.h"

namespace kernlens::report {
namespace {

struct Inputs {
  const model::Profile& profile;
  const analysis::Analysis& analysis;
  std::size_t top;
};

bool no_stages(const Inputs& in) { return in.analysis.agg.stages.empty(); }
bool no_timeline(const Inputs& in) { return !has_timeline(in.profile); }
bool no_roofline(const Inputs& in) { return !roofline_drawable(in.analysis); }
bool no_op_times(const Inputs& in) { return time_by_op_class(in.analysis).empty(); }
bool no_stalls(const Inputs& in) {
  const auto& kernels = in.analysis.kernels;
  auto end = kernels.begin() + static_cast<std::ptrdiff_t>(std::min(in.top, kernels.size()));
  return std::none_of(kernels.begin(), end, [](const auto& k) { return !k.metrics.top_stalls.empty(); });
}
bool no_advice(const Inputs& in) {
  return advice_list(in.profile, in.analysis, ReportContext{{}, in.top}).empty();
}

struct Rule {
  MissingPart part;
  bool (*absent)(const Inputs&);
};

// In report order. Each `needs` names the input, and the kernlens or profiler option that makes it.
constexpr std::array<Rule, 6> kRules = {{
    {{Part::kStages, "stages", "Stages (kernel time, GPU wall time and MFU per model stage)",
      "NVTX ranges around the model's stages (torch.cuda.nvtx.range, or record_function in a PyTorch trace)"},
     &no_stages},
    {{Part::kTimeline, "timeline", "GPU timeline, and the stages' GPU wall time, busy fraction and idle gaps",
      "a timeline: kernlens profile --discovery tracer or nsys, an Nsight Systems SQLite export, or a PyTorch "
      "profiler trace (Nsight Compute runs kernels one at a time)"},
     &no_timeline},
    {{Part::kRoofline, "roofline", "Roofline, and the kernels' FLOP/byte and achieved FLOP/s",
      "Nsight Compute's FLOP and DRAM counters: kernlens profile --tier roofline (ncu --set roofline)"},
     &no_roofline},
    {{Part::kOpClasses, "op-classes", "Time by operation class",
      "kernel durations: gpu__time_duration.sum in Nsight Compute's raw page, or any timeline"},
     &no_op_times},
    {{Part::kStalls, "stalls", "Warp stalls of the top kernels",
      "Nsight Compute's WarpStateStats section: kernlens profile --tier detailed"},
     &no_stalls},
    {{Part::kAdvice, "advice", "Why the top kernels are slow, and advice",
      "Nsight Compute's metrics for the top kernels (kernlens profile), and its details page for ncu's own rules"},
     &no_advice},
}};

}  // namespace

bool has_timeline(const model::Profile& profile) {
  return std::any_of(profile.launches.begin(), profile.launches.end(), [](const model::Launch& l) {
    return l.kind == model::LaunchKind::kKernel && l.start_ns && l.duration_ns;
  });
}

std::vector<MissingPart> missing_parts(const model::Profile& profile, const analysis::Analysis& analysis,
                                       std::size_t top) {
  const Inputs in{profile, analysis, top};
  std::vector<MissingPart> out;
  for (const auto& rule : kRules) {
    if (rule.absent(in)) out.push_back(rule.part);
  }
  return out;
}

bool is_missing(const std::vector<MissingPart>& missing, Part part) {
  return std::any_of(missing.begin(), missing.end(), [part](const MissingPart& m) { return m.part == part; });
}

}  // namespace kernlens::report

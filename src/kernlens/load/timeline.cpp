#include "kernlens/load/timeline.h"

#include "kernlens/analysis/analysis.h"
#include "kernlens/ingest/reconcile.h"
#include "kernlens/load/deep_join.h"
#include "kernlens/load/nvtx_path.h"

namespace kernlens::load {
namespace {

// Launches outside the --nvtx-include paths leave the timeline.
void keep_included_stages(model::Profile& profile, const std::vector<std::string>& paths) {
  if (paths.empty()) return;
  std::vector<std::vector<std::string>> wanted;
  for (const auto& p : paths) {
    NvtxPath path = parse_nvtx_path(p, true);
    std::vector<std::string> labels;
    for (auto& name : path.ranges) {
      labels.push_back(model::range_label(model::NvtxRange{path.domain, name, model::RangeKind::kPushPop}));
    }
    wanted.push_back(std::move(labels));
  }
  auto inside = [&](const model::Launch& l) {
    const auto& stack = profile.stages[l.stage].push_pop;
    for (const auto& labels : wanted) {
      if (labels.size() > stack.size()) continue;
      bool match = true;
      for (std::size_t i = 0; i < labels.size() && match; ++i) match = model::range_label(stack[i]) == labels[i];
      if (match) return true;
    }
    return false;
  };
  std::erase_if(profile.launches, [&](const model::Launch& l) { return !inside(l); });
}

}  // namespace

Status read_discovery(const std::vector<std::string>& paths, const std::vector<std::string>& nvtx_include,
                      bool filter_stages, model::Profile& timeline, const ingest::ReadOptions& options) {
  for (const auto& path : paths) {
    if (Status s = ingest::read_input(path, timeline, options); !s) return s;
  }
  if (filter_stages) keep_included_stages(timeline, nvtx_include);
  return ok_status();
}

std::vector<std::string> join_deep_exports(const std::vector<std::string>& csv_paths, model::Profile& timeline,
                                           const ingest::ReadOptions& options) {
  std::vector<std::string> warnings;
  model::Profile deep;
  for (const auto& csv : csv_paths) {
    if (Status s = ingest::read_input(csv, deep, options); !s) warnings.push_back(s.error().to_string());
  }
  ingest::reconcile_inputs(deep);
  DeepJoin join = join_deep_metrics(timeline, deep);
  for (const auto& name : join.unmatched) {
    warnings.push_back("the deep pass measured a kernel discovery did not see: " + name);
  }
  for (auto& in : deep.inputs) timeline.inputs.push_back(std::move(in));
  return warnings;
}

ingest::ReadOptions analysis_read_options() {
  ingest::ReadOptions options;
  options.all_metrics = false;
  options.metrics = analysis::analysis_metric_names();
  return options;
}

}  // namespace kernlens::load

#include "kernlens/load/timeline.h"

#include <algorithm>

#include "kernlens/analysis/analysis.h"
#include "kernlens/ingest/reconcile.h"
#include "kernlens/load/deep_join.h"
#include "kernlens/load/nvtx_path.h"

namespace kernlens::load {
namespace {

// Launches outside the --nvtx-include paths leave the timeline.
// NVTX keeps a push/pop stack per domain, and ncu matches --nvtx-include "[DOMAIN@]A/B/" on
// the stack of that domain alone: a library's own ranges (NCCL's "NCCL@ncclAllReduce", or its
// init range that a tracer saw open to the end of the program) do not hide the user's
// "prefill" from "prefill/". A stage's path holds every domain's ranges, outermost first; the
// wanted path must be a prefix of its ranges of the wanted domain.
void keep_included_stages(model::Profile& profile, const std::vector<std::string>& paths) {
  if (paths.empty()) return;
  std::vector<NvtxPath> wanted;
  for (const auto& p : paths) wanted.push_back(parse_nvtx_path(p, true));
  auto matches = [](const NvtxPath& want, const std::vector<model::NvtxRange>& stack) {
    std::size_t matched = 0;
    for (const auto& range : stack) {
      if (matched == want.ranges.size()) break;
      if (range.domain != want.domain) continue;
      if (range.name != want.ranges[matched]) return false;
      ++matched;
    }
    return matched == want.ranges.size();
  };
  std::vector<char> kept(profile.stages.size(), 0);  // by stage: 0 unknown, 1 kept, 2 left out
  std::erase_if(profile.launches, [&](const model::Launch& l) {
    char& k = kept[l.stage];
    if (k == 0) {
      const auto& stack = profile.stages[l.stage].push_pop;
      k = std::any_of(wanted.begin(), wanted.end(), [&](const NvtxPath& w) { return matches(w, stack); }) ? 1 : 2;
    }
    return k == 2;
  });
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

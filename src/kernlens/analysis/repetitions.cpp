#include "kernlens/analysis/repetitions.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

namespace kernlens::analysis {
namespace {

using model::NvtxRange;
using model::StageRange;

bool top_level(const model::StageKey& key) {
  return key.push_pop.size() == 1 && key.start_end.empty();
}

// The instances of each top-level range that ran exactly `repeat` times, by start time.
std::vector<std::pair<NvtxRange, std::vector<StageRange>>> repeated_ranges(const model::Profile& profile, int repeat) {
  std::map<model::StageId, std::vector<StageRange>> instances;
  for (const auto& r : profile.stage_ranges) {
    if (r.stage < profile.stages.size() && top_level(profile.stages[r.stage])) instances[r.stage].push_back(r);
  }
  std::vector<std::pair<NvtxRange, std::vector<StageRange>>> out;
  for (auto& [stage, list] : instances) {
    if (list.size() != static_cast<std::size_t>(repeat)) continue;
    std::sort(list.begin(), list.end(), [](const StageRange& a, const StageRange& b) { return a.start_ns < b.start_ns; });
    out.emplace_back(profile.stages[stage].push_pop[0], std::move(list));
  }
  return out;
}

// The repetition a launch belongs to, or -1.
int repetition_of(const model::Launch& launch, const model::Profile& profile,
                  const std::vector<std::pair<NvtxRange, std::vector<StageRange>>>& ranges) {
  const auto& key = profile.stages[launch.stage];
  if (key.push_pop.empty() || !launch.start_ns) return -1;
  for (const auto& [range, list] : ranges) {
    if (!(range == key.push_pop[0])) continue;
    auto after = std::upper_bound(list.begin(), list.end(), *launch.start_ns,
                                  [](std::int64_t t, const StageRange& r) { return t < r.start_ns; });
    if (after == list.begin() || *launch.start_ns > std::prev(after)->end_ns) return -1;
    return static_cast<int>(std::distance(list.begin(), after) - 1);
  }
  return -1;
}

struct Sums {
  double ns = 0;
  std::uint64_t launches = 0;
};

std::vector<model::RepetitionFigure> figures(const std::map<std::string, Sums>& sums, bool by_time) {
  std::vector<model::RepetitionFigure> out;
  for (const auto& [name, s] : sums) out.push_back({name, s.ns, s.launches});
  if (by_time) {
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.ns > b.ns; });
  }
  return out;
}

}  // namespace

Result<std::vector<model::RunRepetition>> split_repetitions(const model::Profile& profile, const Aggregate& aggregate,
                                                            int repeat) {
  if (repeat < 2) return std::vector<model::RunRepetition>{};
  const auto ranges = repeated_ranges(profile, repeat);
  if (ranges.empty()) {
    return make_error("", 0, fmt::format("--repeat {}: no top-level NVTX range ran {} times on the timeline (the "
                                         "workload did not repeat its measured region, or the discovery has no "
                                         "timeline); the run counts as one sample",
                                         repeat, repeat));
  }
  std::unordered_map<model::NameId, const std::string*> shown;
  for (const auto& row : aggregate.kernels) shown[row.name] = &shown_name(profile, row);
  std::vector<std::map<std::string, Sums>> kernels(static_cast<std::size_t>(repeat)), stages(kernels.size());
  std::vector<model::RunRepetition> reps(kernels.size());
  for (const auto& launch : profile.launches) {
    if (launch.kind != model::LaunchKind::kKernel || !launch.duration_ns) continue;
    const int rep = repetition_of(launch, profile, ranges);
    if (rep < 0) continue;
    const auto r = static_cast<std::size_t>(rep);
    const double ns = *launch.total_duration_ns();
    reps[r].kernel_time_ns += ns;
    reps[r].launches += launch.count;
    auto it = shown.find(launch.name);
    Sums& k = kernels[r][it == shown.end() ? profile.names[launch.name] : *it->second];
    k.ns += ns, k.launches += launch.count;
    for (const auto& stage : stage_row_names(profile.stages[launch.stage])) {
      Sums& s = stages[r][stage];
      s.ns += ns, s.launches += launch.count;
    }
  }
  for (std::size_t r = 0; r < reps.size(); ++r) {
    reps[r].kernels = figures(kernels[r], true);
    reps[r].stages = figures(stages[r], false);
  }
  return reps;
}

}  // namespace kernlens::analysis

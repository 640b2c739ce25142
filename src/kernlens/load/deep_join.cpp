#include "kernlens/load/deep_join.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "kernlens/common/numeric.h"
#include "kernlens/names/mangled.h"

namespace kernlens::load {
namespace {

using Candidates = std::unordered_map<std::string, std::vector<std::size_t>>;

// The same kernel as both tools print it, when the names differ: Nsight Compute demangles
// in its own style ("at::vectorized_elementwise_kernel<4, ...>(int, T2, T3)" where nsys and
// PyTorch print "at::native::vectorized_elementwise_kernel<4, ...>(int, ...)"); the base
// name is the same for both (names/base_name.h), and the launch shape tells apart the
// instantiations that share it.
std::string shape_key(const model::Profile& p, const model::Launch& l) {
  const std::string& name = p.names[l.name];
  const std::string base = names::kernel_base_name(name);
  const model::LaunchConfig& c = p.config_of(l);
  return fmt::format("{}|{}x{}x{}|{}x{}x{}", base, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z);
}

// Orders each kernel's launches by how close their duration is to the kernel's median:
// the first is the most representative.
void order_by_closeness_to_median(const model::Profile& p, Candidates& by_key) {
  for (auto& [key, launches] : by_key) {
    std::vector<double> durations;
    for (auto i : launches) durations.push_back(*p.launches[i].duration_ns);
    const double median_ns = median(std::move(durations));
    std::stable_sort(launches.begin(), launches.end(), [&](std::size_t a, std::size_t b) {
      return std::abs(*p.launches[a].duration_ns - median_ns) < std::abs(*p.launches[b].duration_ns - median_ns);
    });
  }
}

// The kernel's exact name and its launch shape: launches of one kernel with another grid (or
// the same grid and another duration, as a GEMM of another K) did other work, so a deep
// launch's metrics belong on a timeline launch like it.
std::string name_shape_key(const model::Profile& p, const model::Launch& l) {
  const model::LaunchConfig& c = p.config_of(l);
  return fmt::format("{}|{}x{}x{}|{}x{}x{}", p.names[l.name], c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y,
                     c.block.z);
}

struct TimelineIndex {
  Candidates by_name_shape, by_name, by_shape;
  std::vector<bool> taken;
  const model::Profile& p;

  explicit TimelineIndex(const model::Profile& profile) : taken(profile.launches.size(), false), p(profile) {
    for (std::size_t i = 0; i < p.launches.size(); ++i) {
      const auto& l = p.launches[i];
      if (l.kind != model::LaunchKind::kKernel || !l.duration_ns) continue;
      by_name[p.names[l.name]].push_back(i);
      by_shape[shape_key(p, l)].push_back(i);
      if (p.config_of(l).grid.known()) by_name_shape[name_shape_key(p, l)].push_back(i);
    }
    order_by_closeness_to_median(p, by_name);
    order_by_closeness_to_median(p, by_shape);
  }

  // The launch not yet joined under `key` whose duration is nearest `duration_ns` (by ratio).
  std::optional<std::size_t> take_nearest(const std::string& key, double duration_ns) {
    auto it = by_name_shape.find(key);
    if (it == by_name_shape.end() || duration_ns <= 0) return std::nullopt;
    std::optional<std::size_t> best;
    double best_ratio = 0;
    for (auto i : it->second) {
      const double d = *p.launches[i].duration_ns;
      if (taken[i] || d <= 0) continue;
      const double ratio = std::max(d / duration_ns, duration_ns / d);
      if (!best || ratio < best_ratio) best = i, best_ratio = ratio;
    }
    if (best) taken[*best] = true;
    return best;
  }

  // The most representative launch not yet joined, under `key`.
  std::optional<std::size_t> take(const Candidates& candidates, const std::string& key) {
    auto it = candidates.find(key);
    if (it == candidates.end()) return std::nullopt;
    for (auto i : it->second) {
      if (!taken[i]) {
        taken[i] = true;
        return i;
      }
    }
    return std::nullopt;
  }
};

void copy_metrics(model::Profile& to, model::Launch& launch, const model::Profile& from, const model::Launch& source) {
  for (const auto& s : from.metrics_of(source)) {
    const model::MetricInfo& info = from.metrics[s.id];
    to.add_metric(launch, {to.metrics.intern(info.name, info.unit), s.value});
  }
  auto rules = from.rules_of(source);
  if (!rules.empty() || launch.rules != 0) to.rules_to_add_to(launch).assign(rules.begin(), rules.end());
}

}  // namespace

DeepJoin join_deep_metrics(model::Profile& timeline, const model::Profile& deep) {
  DeepJoin join;
  TimelineIndex index(timeline);
  for (const auto& source : deep.launches) {
    if (source.kind != model::LaunchKind::kKernel || source.metrics_count == 0) continue;
    const std::string& name = deep.names[source.name];
    std::optional<std::size_t> target;
    if (deep.config_of(source).grid.known() && source.duration_ns) {
      target = index.take_nearest(name_shape_key(deep, source), *source.duration_ns);
    }
    if (!target) target = index.take(index.by_name, name);
    if (!target) target = index.take(index.by_shape, shape_key(deep, source));
    if (!target) {
      if (std::find(join.unmatched.begin(), join.unmatched.end(), name) == join.unmatched.end()) {
        join.unmatched.push_back(name);
      }
      continue;
    }
    copy_metrics(timeline, timeline.launches[*target], deep, source);
    ++join.launches_joined;
  }
  for (const auto& d : deep.devices) timeline.device(d.ordinal).fill_from(d);
  return join;
}

}  // namespace kernlens::load

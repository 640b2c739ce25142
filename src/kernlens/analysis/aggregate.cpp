#include "kernlens/analysis/aggregate.h"

#include "kernlens/analysis/timeline.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>

#include "kernlens/analysis/families.h"
#include "kernlens/common/parallel_chunks.h"

namespace kernlens::analysis {
namespace {

struct StageNode {
  StageRow row;
  std::vector<std::size_t> children;  // indices into the node list, first-seen order
};

// Stage rows as a forest keyed by path; a launch adds to every prefix of its path.
class StageTree {
 public:
  // Credits every node of stage `stage`'s path; the nodes are found (and made, in first-seen
  // order) at the stage's first launch, not again at each launch.
  void add(const model::Profile& profile, model::StageId stage, std::uint64_t count, std::optional<double> time_ns) {
    if (nodes_of_stage_.size() <= stage) nodes_of_stage_.resize(profile.stages.size());
    auto& nodes = nodes_of_stage_[stage];
    if (!nodes) nodes = find_nodes(profile.stages[stage]);
    for (std::size_t node : *nodes) credit(node, count, time_ns);
  }

  std::vector<StageRow> rows() const {
    std::vector<StageRow> out;
    for (auto root : roots_) emit(root, out);
    return out;
  }

 private:
  std::vector<std::size_t> find_nodes(const model::StageKey& key) {
    std::vector<std::size_t> nodes;
    std::string path;
    std::optional<std::size_t> parent;
    for (std::size_t i = 0; i < key.push_pop.size(); ++i) {
      if (i > 0) path += '/';
      path += model::range_label(key.push_pop[i]);
      const std::size_t node = node_for(path, model::range_label(key.push_pop[i]), static_cast<int>(i), parent);
      nodes.push_back(node);
      parent = node;
    }
    for (const auto& r : key.start_end) {
      std::string label = model::range_label(r);
      nodes.push_back(node_for(label, label, 0, std::nullopt));
    }
    return nodes;
  }

  std::size_t node_for(const std::string& path, const std::string& label, int depth,
                       std::optional<std::size_t> parent) {
    auto [it, is_new] = index_.try_emplace(path, nodes_.size());
    if (is_new) {
      StageNode node;
      node.row.name = path;
      node.row.label = label;
      node.row.depth = depth;
      nodes_.push_back(std::move(node));
      (parent ? nodes_[*parent].children : roots_).push_back(it->second);
    }
    return it->second;
  }

  void credit(std::size_t node, std::uint64_t count, std::optional<double> time_ns) {
    StageRow& row = nodes_[node].row;
    row.launches += count;
    if (time_ns) {
      row.kernel_time_ns += *time_ns;
      row.has_kernel_time = true;
    }
  }

  void emit(std::size_t node, std::vector<StageRow>& out) const {
    out.push_back(nodes_[node].row);
    for (auto child : nodes_[node].children) emit(child, out);
  }

  std::vector<StageNode> nodes_;
  std::vector<std::size_t> roots_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::optional<std::vector<std::size_t>>> nodes_of_stage_;
};

}  // namespace

std::vector<std::string> stage_row_names(const model::StageKey& key) {
  std::vector<std::string> names;
  std::string path;
  for (std::size_t i = 0; i < key.push_pop.size(); ++i) {
    if (i > 0) path += '/';
    path += model::range_label(key.push_pop[i]);
    names.push_back(path);
  }
  for (const auto& r : key.start_end) names.push_back(model::range_label(r));
  return names;
}

std::vector<std::string> launch_stage_labels(const model::StageKey& key) {
  std::vector<std::string> labels;
  if (!key.push_pop.empty()) labels.push_back(model::push_pop_path(key));
  for (const auto& r : key.start_end) labels.push_back(model::range_label(r));
  return labels;
}

const std::string& shown_name(const model::Profile& profile, const KernelRow& row) {
  return row.demangled.empty() ? profile.names[row.name] : row.demangled;
}

namespace {

// Adds `ns` to `stats`' time in stage label `label`, in first-seen order; `slots` maps
// (row, label id) to its index in the row's stage_ns.
void add_kernel_stage_ns(TimeStats& stats, std::size_t row, std::unordered_map<std::uint64_t, std::size_t>& slots,
                         const StageStrings& labels, std::uint32_t label, double ns) {
  auto [slot, added] = slots.try_emplace((std::uint64_t{row} << 32) | label, stats.stage_ns.size());
  if (added) stats.stage_ns.emplace_back(labels.names[label], 0.0);
  stats.stage_ns[slot->second].second += ns;
}

}  // namespace

StageStrings intern_stage_strings(const model::Profile& profile,
                                  std::vector<std::string> (*strings_of)(const model::StageKey&)) {
  StageStrings out;
  out.of_stage.resize(profile.stages.size());
  for (std::size_t s = 0; s < profile.stages.size(); ++s) {
    for (auto& name : strings_of(profile.stages[s])) {
      auto [it, added] = out.ids.try_emplace(name, static_cast<std::uint32_t>(out.names.size()));
      if (added) out.names.push_back(std::move(name));
      out.of_stage[s].push_back(it->second);
    }
  }
  return out;
}

void add_stage_ns(TimeStats& stats, std::map<std::string, std::size_t>& slots,
                  const std::string& label, double ns) {
  auto [slot, added] = slots.try_emplace(label, stats.stage_ns.size());
  if (added) stats.stage_ns.emplace_back(label, 0.0);
  stats.stage_ns[slot->second].second += ns;
}

void finish_time_stats(TimeStats& stats, const Totals& totals) {
  if (!stats.total_ns) return;
  stats.mean_ns = *stats.total_ns / static_cast<double>(stats.timed_launches);
  if (totals.kernel_time_ns && *totals.kernel_time_ns > 0) {
    stats.share = *stats.total_ns / *totals.kernel_time_ns;
  }
}

int compare_by_time(const TimeStats& a, const TimeStats& b) {
  double ta = a.total_ns.value_or(-1), tb = b.total_ns.value_or(-1);
  if (ta != tb) return ta > tb ? -1 : 1;
  if (a.launches != b.launches) return a.launches > b.launches ? -1 : 1;
  return 0;
}

namespace {

// The kernel and memory rows, families and stage rows: the aggregate but its timeline figures.
void add_rows(const model::Profile& profile, const names::KernelClassifier& classifier, Aggregate& out) {
  constexpr std::size_t kNoRow = SIZE_MAX;
  std::vector<std::size_t> row_of_name(profile.names.size(), kNoRow);
  const StageStrings labels = intern_stage_strings(profile, launch_stage_labels);
  std::unordered_map<std::uint64_t, std::size_t> stage_slot;  // (kernel row, label id) -> index in stage_ns
  StageTree tree;
  std::map<std::int32_t, std::uint64_t> launches_per_device;

  std::unordered_map<model::NameId, std::size_t> memory_row_of_name;
  for (const auto& launch : profile.launches) {
    if (launch.kind != model::LaunchKind::kKernel) {
      auto [it, is_new] = memory_row_of_name.try_emplace(launch.name, out.memory_ops.size());
      if (is_new) out.memory_ops.push_back(MemoryOpRow{launch.name, launch.kind, 0, {}, 0});
      MemoryOpRow& row = out.memory_ops[it->second];
      row.count += launch.count;
      if (auto t = launch.total_duration_ns()) row.total_ns = row.total_ns.value_or(0) + *t;
      if (row.bytes && launch.bytes >= 0) *row.bytes += launch.bytes * static_cast<std::int64_t>(launch.count);
      else row.bytes.reset();
      continue;
    }
    if (launch.name >= row_of_name.size()) row_of_name.resize(launch.name + std::size_t{1}, kNoRow);
    std::size_t& row_index = row_of_name[launch.name];
    if (row_index == kNoRow) {
      row_index = out.kernels.size();
      out.kernels.emplace_back().name = launch.name;
    }
    KernelRow& row = out.kernels[row_index];
    row.launches += launch.count;
    out.totals.launches += launch.count;
    std::optional<double> time = launch.total_duration_ns();
    if (time) {
      row.total_ns = row.total_ns.value_or(0) + *time;
      row.timed_launches += launch.count;
      out.totals.kernel_time_ns = out.totals.kernel_time_ns.value_or(0) + *time;
      for (std::uint32_t label : labels.of_stage[launch.stage]) {
        add_kernel_stage_ns(row, row_index, stage_slot, labels, label, *time);
      }
    }
    tree.add(profile, launch.stage, launch.count, time);
    if (launch.device_ordinal >= 0) launches_per_device[launch.device_ordinal] += launch.count;
  }
  for (const auto& [ordinal, n] : launches_per_device) {
    if (!out.device_ordinal || n > launches_per_device[*out.device_ordinal]) out.device_ordinal = ordinal;
  }

  for (auto& row : out.kernels) finish_time_stats(row, out.totals);
  std::sort(out.kernels.begin(), out.kernels.end(), [&](const KernelRow& a, const KernelRow& b) {
    if (int c = compare_by_time(a, b)) return c < 0;
    return profile.names[a.name] < profile.names[b.name];
  });
  out.totals.unique_kernels = out.kernels.size();
  out.families = group_families(out.kernels, profile, classifier, out.totals);
  out.stages = tree.rows();
  std::sort(out.memory_ops.begin(), out.memory_ops.end(), [&](const MemoryOpRow& a, const MemoryOpRow& b) {
    double ta = a.total_ns.value_or(-1), tb = b.total_ns.value_or(-1);
    if (ta != tb) return ta > tb;
    return profile.names[a.name] < profile.names[b.name];
  });
}

}  // namespace

// The timeline's pass over the kernels needs only the profile: it runs beside the rows' pass.
Aggregate aggregate(const model::Profile& profile, const names::KernelClassifier& classifier, const LaneMap* lanes) {
  Aggregate out;
  std::optional<TimelineSweep> timeline;
  run_side_by_side([&] { add_rows(profile, classifier, out); }, [&] { timeline.emplace(profile, lanes); });
  timeline->add_figures(out);
  return out;
}

}  // namespace kernlens::analysis

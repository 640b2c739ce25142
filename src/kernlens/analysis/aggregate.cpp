#include "kernlens/analysis/aggregate.h"

#include "kernlens/analysis/timeline.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace kernlens::analysis {
namespace {

struct StageNode {
  StageRow row;
  std::vector<std::size_t> children;  // indices into the node list, first-seen order
};

// Stage rows as a forest keyed by path; a launch adds to every prefix of its path.
class StageTree {
 public:
  void add(const model::StageKey& key, std::uint64_t count, std::optional<double> time_ns) {
    std::string path;
    std::optional<std::size_t> parent;
    for (std::size_t i = 0; i < key.push_pop.size(); ++i) {
      if (i > 0) path += '/';
      path += model::range_label(key.push_pop[i]);
      std::size_t node = node_for(path, model::range_label(key.push_pop[i]), static_cast<int>(i), parent);
      credit(node, count, time_ns);
      parent = node;
    }
    for (const auto& r : key.start_end) {
      std::string label = model::range_label(r);
      credit(node_for(label, label, 0, std::nullopt), count, time_ns);
    }
  }

  std::vector<StageRow> rows() const {
    std::vector<StageRow> out;
    for (auto root : roots_) emit(root, out);
    return out;
  }

 private:
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

Aggregate aggregate(const model::Profile& profile) {
  Aggregate out;
  std::unordered_map<model::NameId, std::size_t> row_of_name;
  std::vector<std::vector<std::string>> labels_of_stage(profile.stages.size());
  for (std::size_t s = 0; s < profile.stages.size(); ++s) {
    labels_of_stage[s] = launch_stage_labels(profile.stages[s]);
  }
  // Per kernel: stage label -> ns, in first-seen order.
  std::vector<std::map<std::string, std::size_t>> stage_slot;
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
    auto [it, is_new] = row_of_name.try_emplace(launch.name, out.kernels.size());
    if (is_new) {
      out.kernels.push_back(KernelRow{launch.name, 0, 0, {}, {}, {}, {}});
      stage_slot.emplace_back();
    }
    KernelRow& row = out.kernels[it->second];
    row.launches += launch.count;
    out.totals.launches += launch.count;
    std::optional<double> time = launch.total_duration_ns();
    if (time) {
      row.total_ns = row.total_ns.value_or(0) + *time;
      row.timed_launches += launch.count;
      out.totals.kernel_time_ns = out.totals.kernel_time_ns.value_or(0) + *time;
      for (const auto& label : labels_of_stage[launch.stage]) {
        auto& slots = stage_slot[it->second];
        auto [slot, added] = slots.try_emplace(label, row.stage_ns.size());
        if (added) row.stage_ns.emplace_back(label, 0.0);
        row.stage_ns[slot->second].second += *time;
      }
    }
    tree.add(profile.stages[launch.stage], launch.count, time);
    if (launch.device_ordinal >= 0) launches_per_device[launch.device_ordinal] += launch.count;
  }
  for (const auto& [ordinal, n] : launches_per_device) {
    if (!out.device_ordinal || n > launches_per_device[*out.device_ordinal]) out.device_ordinal = ordinal;
  }

  for (auto& row : out.kernels) {
    if (!row.total_ns) continue;
    row.mean_ns = *row.total_ns / static_cast<double>(row.timed_launches);
    if (out.totals.kernel_time_ns && *out.totals.kernel_time_ns > 0) {
      row.share = *row.total_ns / *out.totals.kernel_time_ns;
    }
  }
  std::sort(out.kernels.begin(), out.kernels.end(), [&](const KernelRow& a, const KernelRow& b) {
    double ta = a.total_ns.value_or(-1), tb = b.total_ns.value_or(-1);
    if (ta != tb) return ta > tb;
    if (a.launches != b.launches) return a.launches > b.launches;
    return profile.names[a.name] < profile.names[b.name];
  });
  out.totals.unique_kernels = out.kernels.size();
  out.stages = tree.rows();
  std::sort(out.memory_ops.begin(), out.memory_ops.end(), [&](const MemoryOpRow& a, const MemoryOpRow& b) {
    double ta = a.total_ns.value_or(-1), tb = b.total_ns.value_or(-1);
    if (ta != tb) return ta > tb;
    return profile.names[a.name] < profile.names[b.name];
  });
  add_timeline_figures(profile, out);
  return out;
}

}  // namespace kernlens::analysis

#include "kernlens/analysis/aggregate.h"

#include "kernlens/analysis/timeline.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>

#include "kernlens/analysis/families.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/step_times.h"

namespace kernlens::analysis {
namespace {

// A sum of launch times kept two ways: doubles added in launch order, what one pass over the
// launches gives; and whole nanoseconds, the same integer in any order and grouping. Where
// every time is a whole number of ns and their magnitudes sum below 2^52, each double sum is
// that integer exactly, so stretches of the launches summed on several threads and merged
// give what one pass gives. (The integers are summed modulo 2^64, which cannot overflow, and
// are right where that bound holds; elsewhere they are not used.)
struct TimeSum {
  double in_order = 0;
  std::uint64_t whole_ns = 0;

  void add(double ns, std::uint64_t whole) {
    in_order += ns;
    whole_ns += whole;
  }
  void add(const TimeSum& other) { add(other.in_order, other.whole_ns); }
  double value(bool whole) const {
    return whole ? static_cast<double>(static_cast<std::int64_t>(whole_ns)) : in_order;
  }
};

// A launch's time as a double and, where it is a whole number of ns small enough to sum
// exactly, as an integer (two's complement).
struct LaunchTime {
  double ns = 0;
  std::uint64_t whole_ns = 0;
  bool whole = false;
};

constexpr double kExactSumLimitNs = 0x1p52;

LaunchTime launch_time(double ns) {
  LaunchTime t{ns, 0, ns == std::trunc(ns) && std::fabs(ns) <= kExactSumLimitNs};
  if (t.whole) t.whole_ns = static_cast<std::uint64_t>(static_cast<std::int64_t>(ns));
  return t;
}

struct StageNode {
  StageRow row;
  TimeSum time;
  std::vector<std::size_t> children;  // indices into the node list, first-seen order
};

// Stage rows as a forest keyed by path; a launch adds to every prefix of its path.
class StageTree {
 public:
  // Credits every node of stage `stage`'s path; the nodes are found (and made, in first-seen
  // order) at the stage's first launch, not again at each launch.
  void add(const model::Profile& profile, model::StageId stage, std::uint64_t count, const std::optional<LaunchTime>& time) {
    for (std::size_t node : nodes_of(profile, stage)) credit(node, count, time);
  }

  // Adds the credits of `later`, a tree of later launches, as if they had come here.
  void absorb(const model::Profile& profile, const StageTree& later) {
    for (model::StageId stage : later.stages_seen_) nodes_of(profile, stage);
    for (const StageNode& node : later.nodes_) {
      StageNode& mine = nodes_[index_.at(node.row.name)];
      mine.row.launches += node.row.launches;
      mine.row.has_kernel_time |= node.row.has_kernel_time;
      mine.time.add(node.time);
    }
  }

  // The rows, their kernel time the whole-ns or the in-order sums.
  std::vector<StageRow> rows(bool whole) const {
    std::vector<StageRow> out;
    for (auto root : roots_) emit(root, whole, out);
    return out;
  }

 private:
  const std::vector<std::size_t>& nodes_of(const model::Profile& profile, model::StageId stage) {
    if (nodes_of_stage_.size() <= stage) nodes_of_stage_.resize(profile.stages.size());
    auto& nodes = nodes_of_stage_[stage];
    if (!nodes) {
      nodes = find_nodes(profile.stages[stage]);
      stages_seen_.push_back(stage);
    }
    return *nodes;
  }

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

  void credit(std::size_t node, std::uint64_t count, const std::optional<LaunchTime>& time) {
    StageNode& n = nodes_[node];
    n.row.launches += count;
    if (time) {
      n.time.add(time->ns, time->whole_ns);
      n.row.has_kernel_time = true;
    }
  }

  void emit(std::size_t node, bool whole, std::vector<StageRow>& out) const {
    out.push_back(nodes_[node].row);
    out.back().kernel_time_ns = nodes_[node].time.value(whole);
    for (auto child : nodes_[node].children) emit(child, whole, out);
  }

  std::vector<StageNode> nodes_;
  std::vector<std::size_t> roots_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::optional<std::vector<std::size_t>>> nodes_of_stage_;
  std::vector<model::StageId> stages_seen_;  // first-seen order
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

// What a stretch of the launches adds to the rows: the kernel and memory rows, the stage tree
// and the launches per GPU, each in the order the stretch met it. The parts of consecutive
// stretches, each absorbing the next in order, add up to what one pass over all of them gives
// (to the same doubles where TimeSum says so).
class alignas(kThreadStateAlign) RowsPart {
 public:
  RowsPart(const model::Profile& profile, const StageStrings& labels)
      : profile_(profile), labels_(labels), row_of_name_(profile.names.size(), kNoRow) {}

  void add(const model::Launch& launch) {
    std::optional<LaunchTime> time;
    if (auto t = launch.total_duration_ns()) {
      time = launch_time(*t);
      whole_ = whole_ && time->whole;
      magnitude_ns_ += std::fabs(*t);
    }
    if (launch.kind != model::LaunchKind::kKernel) {
      Memory& row = memory_row(launch.name, launch.kind);
      row.count += launch.count;
      if (time) add_time(row.time, row.timed, *time);
      if (row.bytes && launch.bytes >= 0) *row.bytes += launch.bytes * static_cast<std::int64_t>(launch.count);
      else row.bytes.reset();
      return;
    }
    const std::size_t row_index = kernel_row(launch.name);
    Kernel& row = kernels_[row_index];
    row.launches += launch.count;
    launches_ += launch.count;
    if (time) {
      add_time(row.time, row.timed, *time);
      row.timed_launches += launch.count;
      add_time(total_, timed_, *time);
      for (std::uint32_t label : labels_.of_stage[launch.stage]) stage_time(row_index, label).add(time->ns, time->whole_ns);
    }
    tree_.add(profile_, launch.stage, launch.count, time);
    if (launch.device_ordinal >= 0) launches_per_device_[launch.device_ordinal] += launch.count;
  }

  // Adds what `later`, the part of the launches after this part's, added.
  void absorb(const RowsPart& later) {
    for (const Kernel& k : later.kernels_) {
      const std::size_t r = kernel_row(k.name);
      Kernel& mine = kernels_[r];
      mine.launches += k.launches;
      mine.timed_launches += k.timed_launches;
      mine.timed = mine.timed || k.timed;
      mine.time.add(k.time);
      for (const auto& [label, t] : k.stage_ns) stage_time(r, label).add(t);
    }
    for (const Memory& m : later.memory_) {
      Memory& mine = memory_row(m.name, m.kind);
      mine.count += m.count;
      mine.timed = mine.timed || m.timed;
      mine.time.add(m.time);
      if (mine.bytes && m.bytes) *mine.bytes += *m.bytes;
      else mine.bytes.reset();
    }
    tree_.absorb(profile_, later.tree_);
    for (const auto& [ordinal, n] : later.launches_per_device_) launches_per_device_[ordinal] += n;
    launches_ += later.launches_;
    timed_ = timed_ || later.timed_;
    total_.add(later.total_);
    whole_ = whole_ && later.whole_;
    magnitude_ns_ += later.magnitude_ns_;
  }

  // Whether every time was a whole number of ns; the sum of the times' magnitudes.
  bool whole() const { return whole_; }
  double magnitude_ns() const { return magnitude_ns_; }

  // The rows, with the whole-ns sums or the in-order ones.
  void finish(const names::KernelClassifier& classifier, bool whole, Aggregate& out) const {
    out.totals.launches = launches_;
    if (timed_) out.totals.kernel_time_ns = total_.value(whole);
    for (const Kernel& k : kernels_) {
      KernelRow& row = out.kernels.emplace_back();
      row.name = k.name;
      row.launches = k.launches;
      row.timed_launches = k.timed_launches;
      if (k.timed) row.total_ns = k.time.value(whole);
      for (const auto& [label, t] : k.stage_ns) row.stage_ns.emplace_back(labels_.names[label], t.value(whole));
    }
    for (const Memory& m : memory_) {
      out.memory_ops.push_back(MemoryOpRow{m.name, m.kind, m.count, m.timed ? std::optional(m.time.value(whole)) : std::nullopt, m.bytes});
    }
    for (const auto& [ordinal, n] : launches_per_device_) {
      if (!out.device_ordinal || n > launches_per_device_.at(*out.device_ordinal)) out.device_ordinal = ordinal;
    }
    for (auto& row : out.kernels) finish_time_stats(row, out.totals);
    std::sort(out.kernels.begin(), out.kernels.end(), [&](const KernelRow& a, const KernelRow& b) {
      if (int c = compare_by_time(a, b)) return c < 0;
      return profile_.names[a.name] < profile_.names[b.name];
    });
    out.totals.unique_kernels = out.kernels.size();
    out.families = group_families(out.kernels, profile_, classifier, out.totals);
    out.stages = tree_.rows(whole);
    std::sort(out.memory_ops.begin(), out.memory_ops.end(), [&](const MemoryOpRow& a, const MemoryOpRow& b) {
      double ta = a.total_ns.value_or(-1), tb = b.total_ns.value_or(-1);
      if (ta != tb) return ta > tb;
      return profile_.names[a.name] < profile_.names[b.name];
    });
  }

 private:
  struct Kernel {
    model::NameId name = 0;
    std::uint64_t launches = 0, timed_launches = 0;
    bool timed = false;
    TimeSum time;
    std::vector<std::pair<std::uint32_t, TimeSum>> stage_ns;  // by stage label id, first-seen order
  };
  struct Memory {
    model::NameId name = 0;
    model::LaunchKind kind = model::LaunchKind::kMemcpy;
    std::uint64_t count = 0;
    bool timed = false;
    TimeSum time;
    std::optional<std::int64_t> bytes = 0;  // absent once one had no size
  };
  static constexpr std::uint32_t kNoRow = UINT32_MAX;

  static void add_time(TimeSum& sum, bool& timed, const LaunchTime& t) {
    sum.add(t.ns, t.whole_ns);
    timed = true;
  }

  std::size_t kernel_row(model::NameId name) {
    if (name >= row_of_name_.size()) row_of_name_.resize(name + std::size_t{1}, kNoRow);
    std::uint32_t& row = row_of_name_[name];
    if (row == kNoRow) {
      row = static_cast<std::uint32_t>(kernels_.size());
      kernels_.emplace_back().name = name;
    }
    return row;
  }

  // Kernel row `row`'s time in stage label `label`, added in first-seen order.
  TimeSum& stage_time(std::size_t row, std::uint32_t label) {
    auto& stage_ns = kernels_[row].stage_ns;
    auto [slot, added] = stage_slot_.try_emplace((std::uint64_t{row} << 32) | label, stage_ns.size());
    if (added) stage_ns.emplace_back(label, TimeSum{});
    return stage_ns[slot->second].second;
  }

  Memory& memory_row(model::NameId name, model::LaunchKind kind) {
    auto [it, is_new] = memory_row_of_name_.try_emplace(name, memory_.size());
    if (is_new) {
      Memory& row = memory_.emplace_back();
      row.name = name;
      row.kind = kind;
    }
    return memory_[it->second];
  }

  const model::Profile& profile_;
  const StageStrings& labels_;
  std::vector<std::uint32_t> row_of_name_;
  std::vector<Kernel> kernels_;
  std::unordered_map<std::uint64_t, std::size_t> stage_slot_;  // (kernel row, label id) -> index in its stage_ns
  std::unordered_map<model::NameId, std::size_t> memory_row_of_name_;
  std::vector<Memory> memory_;
  StageTree tree_;
  std::map<std::int32_t, std::uint64_t> launches_per_device_;
  std::uint64_t launches_ = 0;
  bool timed_ = false;
  TimeSum total_;
  bool whole_ = true;
  double magnitude_ns_ = 0;
};

// Stretches for the rows' pass, taken as threads come free (stretches_for_threads: it runs
// beside the timeline's sweep, which takes CPUs from it), of 4,096 launches at least, where the
// parts' tables of names (4 bytes a name each) come to no more than 4 bytes a launch.
std::size_t row_parts(const model::Profile& profile) {
  constexpr std::size_t kLeastLaunchesPerPart = 4096;
  const std::size_t launches = profile.launches.size();
  return stretches_for_threads(launches, std::max(kLeastLaunchesPerPart, profile.names.size()), default_threads());
}

// The kernel and memory rows, families and stage rows: the aggregate but its timeline figures.
// On several threads where every time is a whole number of ns (nsys, traces, kltrace: the
// sums are then exact in any order), else in one pass. Returns the parts it was cut into.
std::size_t add_rows(const model::Profile& profile, const names::KernelClassifier& classifier, Aggregate& out) {
  const StageStrings labels = intern_stage_strings(profile, launch_stage_labels);
  const std::size_t n = row_parts(profile);
  if (n > 1) {
    std::vector<RowsPart> parts;
    parts.reserve(n);
    for (std::size_t c = 0; c < n; ++c) parts.emplace_back(profile, labels);
    std::atomic<bool> fractional{false};
    run_in_chunks_on(profile.launches.size(), n, default_threads(), [&](std::size_t c, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end && !fractional.load(std::memory_order_relaxed); ++i) {
        parts[c].add(profile.launches[i]);
        if (!parts[c].whole()) fractional.store(true, std::memory_order_relaxed);
      }
    });
    double magnitude_ns = 0;
    for (const RowsPart& part : parts) magnitude_ns += part.magnitude_ns();
    if (!fractional && magnitude_ns <= kExactSumLimitNs) {
      for (std::size_t c = 1; c < n; ++c) parts[0].absorb(parts[c]);
      parts[0].finish(classifier, true, out);
      return n;
    }
  }
  RowsPart one(profile, labels);
  for (const auto& launch : profile.launches) one.add(launch);
  one.finish(classifier, false, out);
  return 1;
}

}  // namespace

// The timeline's pass over the kernels needs only the profile: it runs beside the rows' pass.
Aggregate aggregate(const model::Profile& profile, const names::KernelClassifier& classifier, const LaneMap* lanes,
                    StepTimes* times) {
  Aggregate out;
  std::optional<TimelineSweep> timeline;
  std::size_t rows_cut_in = 1;
  CpuTally rows_cpu, timeline_cpu;  // each side's wall and its threads' CPU (--verbose)
  run_side_by_side(
      [&] {
        const CpuTally::Charge charge(times ? &rows_cpu : nullptr);
        rows_cut_in = add_rows(profile, classifier, out);
      },
      [&] {
        const CpuTally::Charge charge(times ? &timeline_cpu : nullptr);
        timeline.emplace(profile, lanes);
      });
  if (times) {
    times->add(in_parts("kernel and stage rows", rows_cut_in), rows_cpu);
    times->add(in_parts("timeline", timeline->parts()), timeline_cpu);
  }
  timeline->add_figures(out);
  return out;
}

}  // namespace kernlens::analysis

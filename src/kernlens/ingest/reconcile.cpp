#include "kernlens/ingest/reconcile.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

namespace kernlens::ingest {
namespace {

using model::InputFormat;

bool is_launch_level(InputFormat format) {
  return format == InputFormat::kNcuRawCsv || format == InputFormat::kNcuDetailsCsv;
}

// Moves what `from` knows and `into` lacks (same launch seen through another page).
void merge_launch(model::Profile& profile, model::Launch& into, model::Launch& from) {
  for (std::uint32_t i = 0; i < from.metrics_count; ++i) {
    model::MetricSample m = profile.metric_samples[from.metrics_first + i];
    if (!profile.find_metric(into, m.id)) profile.add_metric(into, m);
  }
  if (from.rules != 0 && from.rules != into.rules) {
    auto& rules = profile.rules_to_add_to(into);  // first: it may add a set
    for (auto& r : profile.rule_sets[from.rules]) rules.push_back(std::move(r));
    profile.rule_sets[from.rules].clear();
  }
  if (!into.duration_ns) into.duration_ns = from.duration_ns;
  const model::LaunchConfig theirs = profile.config_of(from);
  profile.edit_config(into, [&](model::LaunchConfig& mine) {
    if (mine.registers_per_thread < 0) mine.registers_per_thread = theirs.registers_per_thread;
    if (mine.static_shared_bytes < 0) mine.static_shared_bytes = theirs.static_shared_bytes;
    if (mine.dynamic_shared_bytes < 0) mine.dynamic_shared_bytes = theirs.dynamic_shared_bytes;
  });
}

struct LaunchKey {
  std::uint32_t process;
  std::int64_t id;
  model::NameId name;
  bool operator==(const LaunchKey&) const = default;
};

struct LaunchKeyHash {
  std::size_t operator()(const LaunchKey& k) const {
    return std::hash<std::int64_t>{}(k.id) * 31 + (std::size_t{k.process} << 32 ^ k.name);
  }
};

}  // namespace

void reconcile_inputs(model::Profile& profile) {
  if (profile.inputs.size() < 2) return;  // one input never holds a launch twice
  auto format_of = [&](const model::Launch& l) {
    return profile.inputs[l.input].format;
  };
  // 1. The same launch (process, ID, name) read from two pages of different formats.
  std::unordered_map<LaunchKey, std::size_t, LaunchKeyHash> first_seen;
  std::vector<bool> drop(profile.launches.size(), false);
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    model::Launch& l = profile.launches[i];
    if (!is_launch_level(format_of(l)) || l.id == model::kUnknown || l.process == 0) continue;
    auto [it, is_new] = first_seen.try_emplace(LaunchKey{l.process, l.id, l.name}, i);
    if (is_new) continue;
    model::Launch& kept = profile.launches[it->second];
    if (format_of(kept) == format_of(l)) continue;  // two reports of one format: both count
    // Keep the raw page's record: its numbers carry full precision.
    if (format_of(l) == InputFormat::kNcuRawCsv) std::swap(kept, l);
    merge_launch(profile, kept, l);
    drop[i] = true;
  }
  // 2. Summary rows of a process whose launches another input already holds.
  std::map<std::uint32_t, std::uint32_t> process_input;  // process -> launch-level input
  for (const auto& l : profile.launches) {
    if (is_launch_level(format_of(l)) && l.process != 0) process_input.emplace(l.process, l.input);
  }
  std::map<std::uint32_t, std::pair<std::size_t, std::uint32_t>> dropped_groups;  // input -> n, other
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    const model::Launch& l = profile.launches[i];
    if (format_of(l) != InputFormat::kNcuSummaryCsv || l.process == 0) continue;
    auto it = process_input.find(l.process);
    if (it == process_input.end()) continue;
    drop[i] = true;
    auto& entry = dropped_groups[l.input];
    ++entry.first;
    entry.second = it->second;
  }
  for (const auto& [input, entry] : dropped_groups) {
    profile.inputs[input].warnings.push_back(make_error(
        profile.inputs[input].path, 0,
        std::to_string(entry.first) + " kernel groups summarise launches already read from " +
            profile.inputs[entry.second].path + "; they are not counted twice"));
  }
  std::size_t out = 0;
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    if (drop[i]) continue;
    if (out != i) profile.launches[out] = std::move(profile.launches[i]);
    ++out;
  }
  profile.launches.resize(out);
}

}  // namespace kernlens::ingest

#include "kernlens/model/profile.h"

#include <xxhash.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace kernlens::model {
namespace {

// A collision-free text form of a StageKey, used only as a hash-map key.
std::string stage_key_text(const StageKey& key) {
  std::string out;
  for (const auto* list : {&key.push_pop, &key.start_end}) {
    for (const auto& r : *list) {
      out += r.domain;
      out += '\x1f';
      out += r.name;
      out += '\x1e';
    }
    out += '\x1d';
  }
  return out;
}

}  // namespace

std::string range_label(const NvtxRange& range) {
  return range.domain.empty() ? range.name : range.domain + "@" + range.name;
}

std::string push_pop_path(const StageKey& key) {
  std::string path;
  for (const auto& r : key.push_pop) {
    if (!path.empty()) path += '/';
    path += range_label(r);
  }
  return path;
}

const MetricSample* Profile::find_metric(const Launch& launch, MetricId metric) const {
  for (const auto& m : metrics_of(launch)) {
    if (m.id == metric) return &m;
  }
  return nullptr;
}

void Profile::check_metric_pool_end(std::size_t end) {
  if (end > std::numeric_limits<std::uint32_t>::max()) throw std::length_error("more than 2^32 metric samples in one profile");
}

void Profile::start_metrics_at_end(Launch& launch) {
  const std::size_t first = metric_samples.size();
  check_metric_pool_end(first + launch.metrics_count);
  if (launch.metrics_count > 0) {  // move this launch's samples after the others
    auto begin = metric_samples.begin() + static_cast<std::ptrdiff_t>(launch.metrics_first);
    std::vector<MetricSample> mine(begin, begin + launch.metrics_count);
    metric_samples.insert(metric_samples.end(), mine.begin(), mine.end());
  }
  launch.metrics_first = static_cast<std::uint32_t>(first);
}

std::optional<std::string> Device::fill_from(const Device& other) {
  std::optional<std::string> conflict;
  if (!name.empty() && !other.name.empty() && name != other.name) {
    conflict = "GPU " + std::to_string(ordinal) + " is a " + other.name + " here but a " + name + " in an earlier input";
  } else if (sm_clock_max_hz && other.sm_clock_max_hz && *sm_clock_max_hz != *other.sm_clock_max_hz) {
    conflict = "GPU " + std::to_string(ordinal) + " has an SM clock of " + std::to_string(*other.sm_clock_max_hz / 1e6) +
               " MHz here but " + std::to_string(*sm_clock_max_hz / 1e6) + " MHz in an earlier input";
  }
  if (name.empty()) name = other.name;
  if (cc.empty()) cc = other.cc;
  auto fill = [](auto& mine, const auto& theirs) {
    if (!mine && theirs) mine = theirs;
  };
  fill(sm_count, other.sm_count);
  fill(sm_clock_max_hz, other.sm_clock_max_hz);
  fill(memory_clock_max_hz, other.memory_clock_max_hz);
  fill(memory_bus_width_bits, other.memory_bus_width_bits);
  fill(l2_cache_bytes, other.l2_cache_bytes);
  fill(memory_total_bytes, other.memory_total_bytes);
  fill(max_threads_per_sm, other.max_threads_per_sm);
  fill(max_shared_memory_per_sm_bytes, other.max_shared_memory_per_sm_bytes);
  return conflict;
}

std::size_t TextHash::operator()(std::string_view text) const noexcept {
  return static_cast<std::size_t>(XXH3_64bits(text.data(), text.size()));
}

std::uint32_t StringTable::intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  auto id = static_cast<std::uint32_t>(strings_.size());
  const std::string& stored = strings_.emplace_back(s);
  index_.emplace(stored, id);
  return id;
}

std::size_t StringTable::rewrite(const TextFix& fix) {
  std::size_t changed = 0;
  for (auto& s : strings_) {
    if (auto fixed = fix(s)) {
      s = std::move(*fixed);
      ++changed;
    }
  }
  if (changed == 0) return 0;
  index_.clear();
  for (std::uint32_t id = 0; id < strings_.size(); ++id) index_.emplace(strings_[id], id);
  return changed;
}

MetricId MetricCatalog::intern(std::string_view name, std::string_view unit) {
  std::string key;
  key.reserve(name.size() + unit.size() + 1);
  key.append(name).push_back('\x1f');
  key.append(unit);
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  auto id = static_cast<MetricId>(metrics_.size());
  const MetricInfo& info = metrics_.emplace_back(MetricInfo{std::string(name), std::string(unit)});
  index_.emplace(std::move(key), id);
  by_name_.emplace(info.name, id);
  return id;
}

std::optional<MetricId> MetricCatalog::find(std::string_view name) const {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  return std::nullopt;
}

Profile::Profile() {
  configs.emplace_back();
  config_index_.emplace(configs.front(), 0);
  rule_sets.emplace_back();
  processes.emplace_back();
  stages.emplace_back();
  stage_index_.emplace(stage_key_text(stages.front()), 0);
}

std::size_t Profile::rewrite_text(const TextFix& fix) {
  std::size_t changed = names.rewrite(fix);
  auto apply = [&](std::string& s) {
    if (auto fixed = fix(s)) {
      s = std::move(*fixed);
      ++changed;
    }
  };
  const std::size_t before_stages = changed;
  for (auto& key : stages) {
    for (auto* ranges : {&key.push_pop, &key.start_end}) {
      for (auto& r : *ranges) {
        apply(r.domain);
        apply(r.name);
      }
    }
  }
  if (changed != before_stages) {
    stage_index_.clear();
    for (StageId id = 0; id < stages.size(); ++id) stage_index_.emplace(stage_key_text(stages[id]), id);
  }
  for (auto& p : processes) {
    apply(p.host);
    apply(p.name);
  }
  for (auto& d : devices) apply(d.name);
  for (auto& rules : rule_sets) {
    for (auto& r : rules) {
      for (auto* s : {&r.section, &r.rule, &r.type, &r.text, &r.speedup_type}) apply(*s);
    }
  }
  return changed;
}

std::size_t LaunchConfigHash::operator()(const LaunchConfig& c) const {
  std::size_t h = 0;
  for (std::uint64_t v : {std::uint64_t{c.grid.x}, std::uint64_t{c.grid.y}, std::uint64_t{c.grid.z},
                          std::uint64_t{c.block.x}, std::uint64_t{c.block.y}, std::uint64_t{c.block.z},
                          static_cast<std::uint64_t>(c.registers_per_thread),
                          static_cast<std::uint64_t>(c.static_shared_bytes),
                          static_cast<std::uint64_t>(c.dynamic_shared_bytes)}) {
    h = (h ^ v) * 0x100000001b3ull;  // FNV-1a over the fields
  }
  return h;
}

ConfigId Profile::intern_config(const LaunchConfig& config) {
  auto [it, is_new] = config_index_.try_emplace(config, static_cast<ConfigId>(configs.size()));
  if (is_new) configs.push_back(config);
  return it->second;
}

std::vector<RuleResult>& Profile::rules_to_add_to(Launch& launch) {
  if (launch.rules == 0) {
    launch.rules = static_cast<RuleSetId>(rule_sets.size());
    rule_sets.emplace_back();
  }
  return rule_sets[launch.rules];
}

StageId Profile::intern_stage(StageKey key) {
  std::string text = stage_key_text(key);
  if (auto it = stage_index_.find(text); it != stage_index_.end()) return it->second;
  auto id = static_cast<StageId>(stages.size());
  stages.push_back(std::move(key));
  stage_index_.emplace(std::move(text), id);
  return id;
}

std::uint32_t Profile::intern_process(ProcessInfo process) {
  auto it = std::find(processes.begin(), processes.end(), process);
  if (it != processes.end()) return static_cast<std::uint32_t>(it - processes.begin());
  processes.push_back(std::move(process));
  return static_cast<std::uint32_t>(processes.size() - 1);
}

Device& Profile::device(std::int32_t ordinal) {
  for (auto& d : devices) {
    if (d.ordinal == ordinal) return d;
  }
  Device& d = devices.emplace_back();
  d.ordinal = ordinal;
  return d;
}

const Device* Profile::find_device(std::int32_t ordinal) const {
  for (const auto& d : devices) {
    if (d.ordinal == ordinal) return &d;
  }
  return nullptr;
}

}  // namespace kernlens::model

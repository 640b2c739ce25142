// The model in the middle of the pipeline: what readers produce and analysis consumes.
// Plain data. Units are explicit in names (`_ns`, `_bytes`, `_hz`); an unknown number is
// std::nullopt or the documented sentinel kUnknown, never 0.
//
//   Launch     one kernel execution (or, for summary pages, `count` identical ones), or
//              one memory copy or memset on a timeline; kept small (a million of them is
//              a big timeline): its LaunchConfig and ncu rule results live in the Profile,
//              its times are PackedOptional
//   Device     one GPU as the export describes it
//   StageKey   the NVTX ranges enclosing a launch (push/pop stack + start/end ranges)
//   Profile    everything read from the inputs of one analysis
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/model/input_format.h"

namespace kernlens::model {

inline constexpr std::int64_t kUnknown = -1;

// std::optional's interface in the size of its value: one value no source gives (the lowest
// integer, NaN) stands for "none". A launch holds two; at a million launches that is 16 MB.
template <class T>
class PackedOptional {
 public:
  constexpr PackedOptional() = default;
  constexpr PackedOptional(std::nullopt_t) {}  // NOLINT: implicit, as std::optional's
  // Any number into a floating-point one; only integers into an integer one.
  template <class U>
    requires std::is_arithmetic_v<U> && (std::is_floating_point_v<T> || std::is_integral_v<U>)
  constexpr PackedOptional(U value) : value_(static_cast<T>(value)) {}  // NOLINT
  constexpr PackedOptional(const std::optional<T>& o) : value_(o ? *o : none()) {}  // NOLINT

  constexpr bool has_value() const { return !is_none(value_); }
  constexpr explicit operator bool() const { return has_value(); }
  constexpr const T& operator*() const { return value_; }
  constexpr T& operator*() { return value_; }
  constexpr T value_or(T fallback) const { return has_value() ? value_ : fallback; }
  const T& value() const {
    if (!has_value()) throw std::bad_optional_access();
    return value_;
  }
  constexpr void reset() { value_ = none(); }
  constexpr operator std::optional<T>() const {  // NOLINT: implicit, to pass where one is taken
    return has_value() ? std::optional<T>(value_) : std::nullopt;
  }

  friend constexpr bool operator==(const PackedOptional& a, const PackedOptional& b) {
    return a.has_value() == b.has_value() && (!a.has_value() || a.value_ == b.value_);
  }
  friend constexpr bool operator==(const PackedOptional& a, std::nullopt_t) { return !a.has_value(); }
  friend constexpr bool operator==(const PackedOptional& a, const T& b) { return a.has_value() && a.value_ == b; }

 private:
  static constexpr T none() {
    if constexpr (std::is_floating_point_v<T>) {
      return std::numeric_limits<T>::quiet_NaN();
    } else {
      return std::numeric_limits<T>::min();
    }
  }
  static constexpr bool is_none(T v) {
    if constexpr (std::is_floating_point_v<T>) {
      return v != v;  // NaN
    } else {
      return v == std::numeric_limits<T>::min();
    }
  }
  T value_ = none();
};

struct Dim3 {
  std::uint32_t x = 0, y = 0, z = 0;  // all 0 when unknown
  bool known() const { return x > 0; }
  std::uint64_t volume() const { return std::uint64_t{x} * y * z; }
  bool operator==(const Dim3&) const = default;
};

using NameId = std::uint32_t;
using StageId = std::uint32_t;
// A launch's index in Profile::launches, where an analysis keeps lists of them (a million
// launches: 4 bytes each, not 8). Analysis refuses a profile of more launches than it holds.
using LaunchIndex = std::uint32_t;
using MetricId = std::uint32_t;

// A metric as a source names it, with the base unit its values were converted to
// ("ns", "byte", "byte/s", "hz", "%", or the source's own unit when it has no scale).
struct MetricInfo {
  std::string name;
  std::string unit;
};

struct MetricSample {
  MetricId id;
  double value;
};

enum class RangeKind : std::uint8_t { kPushPop, kStartEnd };

struct NvtxRange {
  std::string domain;  // empty for the default domain
  std::string name;
  RangeKind kind = RangeKind::kPushPop;
  bool operator==(const NvtxRange&) const = default;
};

// The NVTX context of a launch. Push/pop ranges are outermost first.
struct StageKey {
  std::vector<NvtxRange> push_pop;
  std::vector<NvtxRange> start_end;
  bool empty() const { return push_pop.empty() && start_end.empty(); }
  bool operator==(const StageKey&) const = default;
};

// "name" for the default domain, "domain@name" otherwise (ncu's NVTX filter spelling).
std::string range_label(const NvtxRange& range);
// The push/pop stack as one path: "step/decode/layer0"; empty when outside every range.
std::string push_pop_path(const StageKey& key);

// A rule result from Nsight Compute's details page (its own advice).
struct RuleResult {
  std::string section;       // section identifier, e.g. "SpeedOfLight"
  std::string rule;          // e.g. "SOLBottleneck"
  std::string type;          // OPT, WRN, INF, ERR as ncu prints it
  std::string text;
  std::string speedup_type;  // "local" / "global" / empty
  std::optional<double> est_speedup_pct;
};

enum class LaunchKind : std::uint8_t { kKernel, kMemcpy, kMemset };

// How a kernel was launched. Launches of one kernel mostly share one, so a profile keeps each
// configuration once (Profile::configs) and a launch its index: a million-launch timeline
// holds a few hundred, 4 bytes a launch instead of 44.
struct LaunchConfig {
  Dim3 grid, block;
  std::int32_t registers_per_thread = -1;
  std::int64_t static_shared_bytes = kUnknown;
  std::int64_t dynamic_shared_bytes = kUnknown;
  bool operator==(const LaunchConfig&) const = default;
};

struct LaunchConfigHash {
  std::size_t operator()(const LaunchConfig& c) const;
};

using ConfigId = std::uint32_t;
using RuleSetId = std::uint32_t;

// Stream and context ids: CUPTI numbers both with 32 bits (streamId, contextId of its activity
// records), so a launch keeps 4 bytes for each; -1 (kUnknown) when unknown.
using StreamId = std::int32_t;
// `id` as a launch's stream or context id; nullopt when it needs more than 32 bits (a reader
// says so with the input's position rather than keep a wrapped number).
constexpr std::optional<StreamId> stream_id_of(std::int64_t id) {
  if (id < std::numeric_limits<StreamId>::min() || id > std::numeric_limits<StreamId>::max()) return std::nullopt;
  return static_cast<StreamId>(id);
}

// A launch's id (ncu's launch ID, a timeline's correlation id) or the CPU thread that launched
// it, in 4 bytes: CUPTI numbers correlations with 32 bits and Linux numbers threads below 2^22.
// Reads as an int64, kUnknown when unknown. A value it cannot hold (negative, or 2^32 - 1 and
// above) is kept as unknown, never wrapped; a reader that must say so checks fits() first.
class Id32 {
 public:
  constexpr Id32() = default;
  constexpr Id32(std::int64_t v) : v_(fits(v) ? static_cast<std::uint32_t>(v) : kNone) {}  // implicit, as the int64 it was
  static constexpr bool fits(std::int64_t v) { return v >= 0 && v < std::int64_t{kNone}; }
  constexpr operator std::int64_t() const { return v_ == kNone ? kUnknown : std::int64_t{v_}; }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t v_ = kNone;
};

struct Launch {
  NameId name = 0;                    // index into Profile::names; the name as the source spells it
  StageId stage = 0;                  // index into Profile::stages (0: outside every range)
  std::uint32_t process = 0;          // index into Profile::processes (0: unknown)
  std::uint32_t input = 0;            // index into Profile::inputs
  ConfigId config = 0;                // index into Profile::configs (0: nothing known)
  RuleSetId rules = 0;                // index into Profile::rule_sets (0: no rule results)
  std::uint32_t metrics_count = 0;    // see metrics_first
  // This launch's metrics: samples [metrics_first, metrics_first + metrics_count) of
  // Profile::metric_samples (one pool: a wide raw page has ~600 per launch; 2^32 samples would
  // be 64 GiB, and Profile::add_metric refuses more).
  std::uint32_t metrics_first = 0;
  std::int16_t device_ordinal = -1;   // GPUs of one host are numbered far below 2^15
  LaunchKind kind = LaunchKind::kKernel;
  StreamId context_id = kUnknown;
  StreamId stream_id = kUnknown;
  // Executions this record stands for: 1 for a launch; a summary row's instances, which its
  // reader refuses above 2^32 - 1.
  std::uint32_t count = 1;
  Id32 id;         // ncu launch ID, or the correlation id of a timeline
  Id32 thread_id;  // the CPU thread of the launch call
  std::int64_t bytes = kUnknown;  // memcpy/memset size; a collective kernel's message size
  PackedOptional<std::int64_t> start_ns;
  PackedOptional<double> duration_ns;  // per execution (a mean when count > 1)

  std::optional<double> total_duration_ns() const {
    if (!duration_ns) return std::nullopt;
    return *duration_ns * static_cast<double>(count);
  }
};

// A launch stays small: a million-launch timeline is a million of them in memory at once.
static_assert(sizeof(Launch) <= 80);

struct Device {
  std::int32_t ordinal = -1;
  std::string name;  // as the driver reports it, e.g. "NVIDIA H100 80GB HBM3"
  std::string cc;    // compute capability "9.0"
  std::optional<std::int64_t> sm_count;
  std::optional<double> sm_clock_max_hz;
  std::optional<double> memory_clock_max_hz;
  std::optional<std::int64_t> memory_bus_width_bits;
  std::optional<std::int64_t> l2_cache_bytes;
  std::optional<std::int64_t> memory_total_bytes;
  std::optional<std::int64_t> max_threads_per_sm;
  std::optional<std::int64_t> max_shared_memory_per_sm_bytes;

  // Fills what this one lacks from `other` (same GPU seen by another input). When both know
  // the GPU's model or SM clock and they differ (ranks on different GPUs under one ordinal),
  // what differs, for a warning; this one's values are kept.
  std::optional<std::string> fill_from(const Device& other);
};

struct ProcessInfo {
  std::string host;
  std::int64_t pid = kUnknown;
  std::string name;
  bool operator==(const ProcessInfo&) const = default;
};

// The GPU-side extent of one instance of a stage's range: from the start of the first
// kernel it launched to the end of the last (timeline inputs only; ncu serialises kernels).
// Readers project CPU-side ranges onto the GPU; a stage's wall time is the union of these.
struct StageRange {
  StageId stage;
  std::int64_t start_ns;
  std::int64_t end_ns;
  std::uint32_t input = 0;  // index into Profile::inputs (set by ingest for every reader)
};

// What a PyTorch trace's top-level "distributedInfo" says about the process that wrote it.
struct DistributedInfo {
  std::int64_t rank = kUnknown;
  std::int64_t world_size = kUnknown;
  std::string backend;  // "nccl", "gloo", ...
};

struct InputInfo {
  std::string path;
  InputFormat format = InputFormat::kUnknown;
  std::string description;      // the format for people, as its reader names it; empty: format_id
  std::vector<Error> warnings;  // problems that did not stop the read
  std::optional<DistributedInfo> distributed;  // the rank the input says it is, when it says
};

// A correction of one string: the new text, or nullopt to keep it.
using TextFix = std::function<std::optional<std::string>(std::string_view)>;

// A hash of text for the interning tables: XXH3 (libxxhash), a tenth of std::hash's cost on
// the long kernel names every launch of a trace interns.
struct TextHash {
  std::size_t operator()(std::string_view text) const noexcept;
};

// Interns strings: equal strings get equal ids; ids are dense from 0.
class StringTable {
 public:
  std::uint32_t intern(std::string_view s);
  // Replaces each string by fix(string) where that is not nullopt, keeping every id; the
  // number replaced.
  std::size_t rewrite(const TextFix& fix);
  const std::string& operator[](std::uint32_t id) const { return strings_[id]; }
  std::size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // deque: element addresses stay valid as it grows
  std::unordered_map<std::string_view, std::uint32_t, TextHash> index_;
};

class MetricCatalog {
 public:
  MetricId intern(std::string_view name, std::string_view unit);
  const MetricInfo& operator[](MetricId id) const { return metrics_[id]; }
  std::size_t size() const { return metrics_.size(); }
  std::optional<MetricId> find(std::string_view name) const;

 private:
  std::deque<MetricInfo> metrics_;
  std::unordered_map<std::string, MetricId> index_;  // name + '\x1f' + unit
  std::unordered_map<std::string_view, MetricId> by_name_;  // first unit seen for a name
};

struct Profile {
  Profile();

  std::vector<InputInfo> inputs;
  std::vector<Device> devices;
  std::vector<ProcessInfo> processes;  // [0] is the unknown process
  std::vector<StageKey> stages;        // [0] is the empty key: outside every range
  std::vector<StageRange> stage_ranges;
  StringTable names;
  MetricCatalog metrics;
  std::vector<MetricSample> metric_samples;  // the pool Launch::metrics_* point into
  std::vector<LaunchConfig> configs;         // [0]: nothing known
  std::vector<std::vector<RuleResult>> rule_sets;  // [0]: none (only ncu's details page has any)
  std::vector<Launch> launches;

  const LaunchConfig& config_of(const Launch& launch) const { return configs[launch.config]; }
  ConfigId intern_config(const LaunchConfig& config);
  // Gives the launch its configuration changed by edit(LaunchConfig&).
  template <class Edit>
  void edit_config(Launch& launch, Edit&& edit) {
    LaunchConfig config = configs[launch.config];
    edit(config);
    launch.config = intern_config(config);
  }
  std::span<const RuleResult> rules_of(const Launch& launch) const { return rule_sets[launch.rules]; }
  // The launch's rule results, to add to (a set of its own from the first one added).
  std::vector<RuleResult>& rules_to_add_to(Launch& launch);

  std::span<const MetricSample> metrics_of(const Launch& launch) const {
    return {metric_samples.data() + launch.metrics_first, launch.metrics_count};
  }
  const MetricSample* find_metric(const Launch& launch, MetricId metric) const;
  // Appends to the launch's samples, keeping them contiguous (moved to the pool's end
  // when another launch's samples were added after them).
  void add_metric(Launch& launch, MetricSample sample) {
    if (launch.metrics_count == 0 || launch.metrics_first + launch.metrics_count != metric_samples.size()) {
      start_metrics_at_end(launch);
    }
    metric_samples.push_back(sample);
    ++launch.metrics_count;
  }

  // Throws std::length_error when samples [0, end) would pass what a launch's 32-bit
  // metrics_first reaches (64 GiB of samples: as running out of memory would).
  static void check_metric_pool_end(std::size_t end);

  // Passes the text read from inputs (kernel names, NVTX ranges, process and device names,
  // ncu's rule results) through `fix`; ids and indexes stay valid. The strings changed.
  std::size_t rewrite_text(const TextFix& fix);

  StageId intern_stage(StageKey key);
  std::uint32_t intern_process(ProcessInfo process);
  // The device with this ordinal, added when new.
  Device& device(std::int32_t ordinal);
  const Device* find_device(std::int32_t ordinal) const;

 private:
  void start_metrics_at_end(Launch& launch);
  std::unordered_map<std::string, StageId> stage_index_;
  std::unordered_map<LaunchConfig, ConfigId, LaunchConfigHash> config_index_;
};

}  // namespace kernlens::model

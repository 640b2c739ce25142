// Aggregation: launches -> one row per kernel (grouped by exact name), totals, and the
// stage table (every NVTX push/pop path prefix, plus start/end ranges).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernlens/model/profile.h"

namespace kernlens::analysis {

struct KernelRow {
  model::NameId name = 0;
  std::uint64_t launches = 0;
  std::uint64_t timed_launches = 0;  // launches with a known duration
  std::optional<double> total_ns;  // absent when no launch of it has a duration
  std::optional<double> mean_ns;
  std::optional<double> share;     // of all kernel time, 0..1
  // Time per stage the launches ran in: the full push/pop path and any start/end range.
  std::vector<std::pair<std::string, double>> stage_ns;
};

struct StageRow {
  std::string name;   // push/pop path ("step/decode") or start/end range label
  std::string label;  // the last range of the path ("decode")
  int depth = 0;      // nesting level of a push/pop path; 0 for start/end ranges
  std::uint64_t launches = 0;
  double kernel_time_ns = 0;  // launches inside, nested stages included
  bool has_kernel_time = false;
};

struct Totals {
  std::optional<double> kernel_time_ns;
  std::uint64_t launches = 0;
  std::uint64_t unique_kernels = 0;
};

struct Aggregate {
  Totals totals;
  std::optional<std::int32_t> device_ordinal;  // the GPU most launches ran on
  std::vector<KernelRow> kernels;  // by total time, descending; then by name
  std::vector<StageRow> stages;    // tree order: a stage, then its nested stages
};

Aggregate aggregate(const model::Profile& profile);

// The stage labels a launch counts toward in KernelRow::stage_ns.
std::vector<std::string> launch_stage_labels(const model::StageKey& key);

}  // namespace kernlens::analysis

// How operation classes and kernel families fare across models, batch sizes and sequence
// lengths: the database's scaling views (store/schema.h) as plain data, read by store/ and
// drawn by report/ (`kernlens report --db`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kernlens::model {

// One operation class (or family) at one point: GPU, dtype, model, batch, tokens. Figures
// are absent when not measured.
struct ScalingCell {
  std::string gpu, dtype, model;
  std::optional<std::int64_t> batch, tokens;
  std::string op_class;
  std::string base_name, library;  // families only
  std::int64_t runs = 0;
  std::optional<double> time_ns_per_run, share_of_time;  // share of the point's kernel time, 0..1
  std::optional<double> sol_pct;                          // max(SM, memory throughput), % of peak
  std::optional<double> sm_pct, memory_pct, flops_per_s, dram_bytes_per_s;
  std::optional<double> measured_share;  // share of the class's time whose SOL ncu measured
};

struct CrossModel {
  std::int64_t runs = 0;
  std::vector<std::string> models, gpus;  // distinct, sorted
  std::vector<ScalingCell> op_classes;    // every class at every point
  std::vector<ScalingCell> families;      // the families with the most time, at every point
};

}  // namespace kernlens::model

// One run summed up for the database and for compare: what was run (metadata and tags), on
// which GPU, and its kernel and stage tables with the figures the analysis gave them.
// Plain data; analysis/run_summary.h fills it from an analysis, store/ saves and loads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kernlens::model {

// What was run. Empty strings and absent numbers were not known.
struct RunMeta {
  // Identifies the run in the database, so that ingesting it again changes nothing:
  // "<manifest run_id>-<content hash>" for a run directory, "file-<content hash>" for an export.
  std::string run_key;
  std::string source_path;    // as the user gave it
  std::string source_format;  // "kernlens-run" or an export's format id
  std::string command;        // the profiled command line, arguments joined by spaces
  std::string model, dtype;
  std::optional<std::int64_t> batch, tokens;
  std::string gpu, driver, cuda_version, ncu_version, nsys_version, torch_version;
  std::vector<std::pair<std::string, std::string>> tags;  // key -> value, keys unique
};

struct RunDevice {
  std::string name, cc;
  std::optional<std::int64_t> sm_count, memory_total_bytes, l2_cache_bytes;
};

// One kernel (grouped by exact name) with its analysis. Figures are absent when not measured.
struct RunKernel {
  std::string name, base_name, library, op_class;
  std::string grid, block;  // the launch shape of its longest launch, "x,y,z"; empty: unknown
  std::uint64_t launches = 0;
  std::optional<double> total_ns, mean_ns, share;
  std::optional<double> sm_pct, memory_pct, dram_pct, l1_hit_pct, l2_hit_pct;
  std::optional<double> achieved_occupancy_pct, theoretical_occupancy_pct, tensor_pipe_pct;
  std::optional<double> flops, dram_bytes, arithmetic_intensity, achieved_flops_per_s;
  std::optional<double> peak_flops_per_s, peak_dram_bytes_per_s;
  std::string occupancy_limiter;  // limiters joined by ','; empty when unknown
  std::string bottleneck = "unknown";
  std::string bottleneck_reason;
};

struct RunStage {
  std::string name;
  int depth = 0;
  std::uint64_t launches = 0;
  std::optional<double> kernel_time_ns, wall_ns, busy_fraction, gap_total_ns;
  std::optional<std::int64_t> gap_count;
  std::optional<double> flops, mfu;
};

// One figure of one repetition: a kernel's (by exact name) or a stage's time and launches.
struct RepetitionFigure {
  std::string name;
  double ns = 0;
  std::uint64_t launches = 0;
};

// One repetition of the workload's measured region (`kernlens profile --repeat N`,
// analysis/repetitions.h): a sample for compare's statistics.
struct RunRepetition {
  double kernel_time_ns = 0;
  std::uint64_t launches = 0;
  std::vector<RepetitionFigure> kernels;  // by total time, descending
  std::vector<RepetitionFigure> stages;   // stage rows (push/pop paths) the launches count toward
};

// One rank's stage row (analysis/ranks.h): its kernel time, wall time and communication.
struct RunRankStage {
  std::string name;
  double kernel_time_ns = 0;
  std::optional<double> wall_ns;
  double comm_ns = 0, exposed_comm_ns = 0;
};

// One rank of a multi-rank run (analysis/ranks.h): kernel time (the sum of its kernels'
// durations), communication and the part of it not hidden under computation, and its role.
struct RunRank {
  std::int64_t rank = 0;
  std::string input;  // the input it came from
  std::uint64_t launches = 0;
  double kernel_time_ns = 0;
  std::optional<double> busy_ns, wall_ns;  // summed over its GPU lanes
  double comm_ns = 0, exposed_comm_ns = 0;
  std::string role = "-";  // "straggler", "waiting" or "-"
  std::vector<RunRankStage> stages;
};

struct RunRecord {
  RunMeta meta;
  int repeat = 1;  // the manifest's repeat count (`profile --repeat`); 1 for an export
  std::vector<RunRepetition> repetitions;  // empty: not repeated (the run is one sample)
  std::optional<RunDevice> device;
  std::optional<double> kernel_time_ns;
  std::uint64_t launches = 0;
  std::vector<RunKernel> kernels;  // by total time, descending
  std::vector<RunStage> stages;    // tree order
  std::vector<RunRank> ranks;      // by rank; empty for a run of one rank
};

}  // namespace kernlens::model

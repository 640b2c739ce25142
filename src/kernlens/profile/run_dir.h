// The run directory `kernlens profile` writes (DESIGN.md §5), and its manifest:
//   <out>/<run_id>/manifest.json   what ran, with which tools, how it ended
//   <out>/<run_id>/discovery/      timeline export + kernels.csv (all kernels, ranked)
//   <out>/<run_id>/deep/           *.ncu-rep, raw and details CSV exports, profiler logs
//   <out>/<run_id>/analysis.json   what `analyze --format json` prints for the run
// The manifest is rewritten after every step, so an interrupted run still says what it did.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernlens/common/error.h"

namespace kernlens::profile {

struct RunDir {
  std::string run_id;
  std::filesystem::path root, discovery, deep;

  std::filesystem::path manifest() const { return root / "manifest.json"; }
  std::filesystem::path analysis() const { return root / "analysis.json"; }
};

// "20261122-181503-python3": UTC time, then the program's file name (letters, digits, '-',
// '_', '.' kept; anything else becomes '_'), so runs sort by time and say what ran.
std::string make_run_id(std::chrono::system_clock::time_point now, std::string_view program);

// Creates <out>/<run_id>/ with discovery/ and deep/. An existing run directory is an error
// (a run never overwrites another) unless `force_overwrite`, and even then only a kernlens run
// directory (it holds manifest.json) or an empty directory is replaced, never anything else.
Result<RunDir> create_run_dir(const std::filesystem::path& out, const std::string& run_id,
                              bool force_overwrite = false);

// One profiler or program run, as the manifest records it.
struct ToolRun {
  std::string step;                // "discovery", "deep 1/2", "export raw", ...
  std::vector<std::string> argv;   // exactly as run
  std::optional<int> exit_code;    // when it exited
  std::optional<int> signal;       // when a signal ended it
  bool timed_out = false;
  bool interrupted = false;        // the user pressed Ctrl-C (or kernlens got SIGTERM)
  std::int64_t wall_ns = 0;
  std::string stdout_log, stderr_log;  // relative to the run directory
  std::vector<int> signals_sent;       // to its process group, when kernlens had to end it
  // ncu runs: the kernels ncu said it profiled, and when the first and the last of them ended
  // (from the run's start): start-up, profiling and what came after, apart.
  std::uint64_t kernels_profiled = 0;
  std::optional<std::int64_t> first_kernel_ns, last_kernel_ns;
};

// Where the time of a run went, step by step: kernlens's own steps and each child's run.
struct StepTime {
  std::string step;
  std::int64_t wall_ns = 0;
};

struct Manifest {
  std::string run_id;
  std::vector<std::string> command;  // the user's program and its arguments
  std::string cwd;
  std::map<std::string, std::string> env;  // the subset that changes a GPU run (see env_subset)
  nlohmann::ordered_json tools = nlohmann::ordered_json::object();  // versions, paths, GPU
  nlohmann::ordered_json options = nlohmann::ordered_json::object();  // profile's own options
  std::string clock_control;           // passed to ncu explicitly; "none" unless asked
  std::string status = "running";      // running, complete, interrupted, failed
  std::string status_reason;           // why, when not complete
  std::vector<ToolRun> runs;
  std::map<std::string, std::int64_t> step_wall_ns;  // per step name
  // The user's --tag KEY=VALUE, in the order given ("tags": an object).
  std::vector<std::pair<std::string, std::string>> tags;
  // Which discovery ran and why the others did not: {"requested", "method", "attempts": [...]}.
  nlohmann::ordered_json discovery = nlohmann::ordered_json::object();
  std::vector<StepTime> timings;  // in the order the steps ran
  std::int64_t total_ns = 0;      // the whole command so far
  // A run that did not complete: the files it left (relative paths), for the user to reuse.
  std::vector<std::string> kept;
};

// The files under the run directory, relative to it, sorted (manifest.json left out).
std::vector<std::string> run_dir_files(const RunDir& dir);

// The variables worth recording: CUDA_*, NVIDIA_*, NCCL_*, PYTORCH_*, TORCH_*, rank and
// world-size variables, LD_LIBRARY_PATH. Names that look like secrets are left out.
std::map<std::string, std::string> env_subset(char** environ_list);

nlohmann::ordered_json manifest_json(const Manifest& manifest);
// Written whole, atomically (a reader never sees half a manifest).
Status write_manifest(const RunDir& dir, const Manifest& manifest);

}  // namespace kernlens::profile

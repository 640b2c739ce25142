// manifest.json, the run directory's record of what ran (DESIGN.md §5): written by `kernlens
// profile` after every step, so an interrupted run still says what it did; read back by
// load/ (a run's discovery method, stage filter, command and tags), --discovery-from and
// `sweep status`. This is the one place that parses or writes it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernlens/common/error.h"
#include "kernlens/rundir/layout.h"
#include "kernlens/rundir/tags.h"

namespace kernlens::rundir {

inline constexpr std::string_view kManifestSchema = "kernlens.manifest/1";
// `kernlens profile` under a launcher: the job's manifest, one run directory per rank inside
// (rank-N/, profile/rank_lockstep.h).
inline constexpr std::string_view kRanksManifestSchema = "kernlens.ranks/1";

// One profiler or program run, as the manifest records it.
struct ToolRun {
  std::string step;                // "discovery", "deep 1/2", "export raw", ...
  std::vector<std::string> argv;   // exactly as run
  std::optional<int> exit_code;    // when it exited
  std::optional<int> signal;       // when a signal ended it
  bool timed_out = false;
  bool interrupted = false;        // the user pressed Ctrl-C (or kernlens got SIGTERM)
  bool stopped = false;            // kernlens ended it on purpose once it was of no use: not a failure
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
  // The workload's tags: `profile --tag KEY=VALUE` in the order given ("tags": an object).
  Tags tags;
  // Which discovery ran and why the others did not: {"requested", "method", "attempts": [...]}.
  nlohmann::ordered_json discovery = nlohmann::ordered_json::object();
  std::vector<StepTime> timings;  // in the order the steps ran
  std::int64_t total_ns = 0;      // the whole command so far
  // A run that did not complete: the files it left (relative paths), for the user to reuse.
  std::vector<std::string> kept;

  // What a reader of the run needs, from `options`: the method whose timeline discovery/ holds
  // ("tracer", "nsys", "ncu"; "auto" or empty when discovery never ended), and the
  // --nvtx-include paths.
  std::string discovery_method() const;
  std::vector<std::string> nvtx_include() const;
  // How many times the program ran its measured region (`profile --repeat`); 1 when not given.
  int repeat() const;
  // The value of tag `key`; nullopt when the manifest has none.
  std::optional<std::string> tag(std::string_view key) const;
  // A string at `pointer` ("/tools/gpu") of the manifest's tools; empty when absent.
  std::string tool(const std::string& pointer) const;
};

// The variables worth recording: CUDA_*, NVIDIA_*, NCCL_*, PYTORCH_*, TORCH_*, rank and
// world-size variables, LD_LIBRARY_PATH. Names that look like secrets are left out.
std::map<std::string, std::string> env_subset(char** environ_list);

nlohmann::ordered_json manifest_json(const Manifest& manifest);
// A manifest's bytes as kernlens writes them: indented by two, a newline at the end (a string
// that is not valid UTF-8 gets U+FFFD in its bad bytes' place).
std::string manifest_text(const nlohmann::ordered_json& manifest);
// Written whole, atomically (a reader never sees half a manifest).
Status write_manifest(const RunDir& dir, const Manifest& manifest);

// Reads the manifest of run directory `dir`: what manifest_json() writes, but the runs and
// timings (what happened, not what a reader needs). Tags may also be a list of "KEY=VALUE"
// strings, and a number's tag is its text. Errors (at manifest.json): no JSON object, or one
// of another schema.
Result<Manifest> read_manifest(const std::string& dir);

}  // namespace kernlens::rundir

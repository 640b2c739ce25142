// `kernlens profile`, end to end: find the profilers, discover where the GPU time goes (nsys
// timeline, or ncu in timing mode), choose the few kernels that make up most of it, measure
// one launch of each with Nsight Compute, export, join and analyze, into a run directory
// (rundir/layout.h). Every command is an argv; every step is recorded in the manifest as it ends,
// so an interrupted or failed run keeps what it has and says so.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/analysis/analysis.h"
#include "kernlens/names/classify.h"
#include "kernlens/profile/ncu_command.h"
#include "kernlens/profile/selection.h"
#include "kernlens/rundir/layout.h"

namespace kernlens::profile {

// --discovery: a method, or std::nullopt for auto (each in turn, cheapest first).
using DiscoveryRequest = std::optional<rundir::DiscoveryMethod>;
// "auto" or a method's name. Error: another name.
Result<DiscoveryRequest> parse_discovery(std::string_view name);
std::string_view discovery_name(DiscoveryRequest request);

// What a run writes from its analysis, in the caller's formats (the CLI's report writers:
// profile/ hands over the analysis and never formats it). Either may be empty.
struct AnalysisWriters {
  // The text of the run directory's analysis.json.
  std::function<std::string(const model::Profile&, const analysis::Analysis&)> analysis_json;
  // What the run prints on `out` when it ends.
  std::function<std::string(const model::Profile&, const analysis::Analysis&)> summary;
};

struct ProfileRunOptions {
  std::vector<std::string> command;  // the user's program and its arguments
  DiscoveryRequest discovery;           // auto
  SelectionOptions selection;
  Tier tier = Tier::kRoofline;
  ReplayMode replay = ReplayMode::kKernel;
  ClockControl clock_control = ClockControl::kNone;
  // Push/pop paths as kernlens prints stages ("prefill", "llm@decode/layer_0": '@' after a
  // domain, '/' between nested ranges, '\' before a literal '@', '/' or '\').
  std::vector<std::string> nvtx_include;
  std::vector<std::string> nvtx_ranges;  // start/end ranges, "[DOMAIN@]NAME"
  std::string out = "kernlens-runs";
  std::string run_id;                    // empty: made from the time and the program
  bool force_overwrite = false;          // replace an existing run directory of that id
  std::vector<std::pair<std::string, std::string>> tags;  // KEY=VALUE for the manifest's "tags"
  // A previous run directory whose discovery this run reuses instead of running its own.
  std::string discovery_from;
  double timeout_s = 0;                  // per profiler run; 0: none
  // Repetitions of the workload's measured region (analysis/repetitions.h): every child gets
  // KERNLENS_REPEAT=<repeat> in its environment when above 1, and the manifest records it.
  int repeat = 1;
  bool discovery_only = false;  // skip the deep pass: the timeline and its analysis alone
  // Under a launcher (torchrun, mpirun, srun): the ranks whose kernels the deep pass measures
  // (empty: every rank); the others run their program untouched, in step (rank_lockstep.h).
  std::vector<int> ranks;
  double deep_timeout_s = 0;             // under a launcher, per deep run; 0: from discovery's time
  bool dry_run = false;
  // End the program once the deep pass has profiled its last planned launch (kernel replay
  // only). Off under a launcher: the other ranks would wait for the killed one.
  bool kill_after_last = true;
  // How many copies of the deep pass's program start beside discovery under `ncu --mode launch`,
  // for the first deep runs to attach to once the kernels are chosen (early_start.h); 0: none.
  std::size_t early_programs = 2;
  // How long the attach tries again while ncu finds no program to attach to (it has not reached
  // its first CUDA call yet).
  double attach_patience_s = 120;
  std::string ncu_path, nsys_path;       // empty: searched for
  std::string tracer_path;               // libkernlens_tracer.so; empty: beside kernlens
  bool progress_tty = false;             // redraw a progress bar (stderr is a terminal)
  bool echo_program_output = true;
  bool verbose = false;                  // print where the time went, step by step
  analysis::AnalysisOptions analysis;
  AnalysisWriters writers;
};

// Exit codes as DESIGN.md §3: 0 ok, 2 bad usage, 3 the program or a profiler failed.
struct ProfileRunResult {
  int exit_code = 0;
  std::string run_dir;  // empty for --dry-run or when it could not be created
};

// Writes what `options.writers` make of the analysis to the run directory and `out`, and
// progress, warnings and errors to `err`.
ProfileRunResult run_profile(const ProfileRunOptions& options, const names::KernelClassifier& classifier,
                             std::ostream& out, std::ostream& err);

// This process's rank under torchrun, mpirun or srun: the first of RANK,
// OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID that is set (LOCAL_RANK last: it repeats
// across nodes). std::nullopt when none is set or it is not a number.
std::optional<int> launcher_rank(char** environ_list);

// "[DOMAIN@]A/B/C" -> ncu's --nvtx-include expression for those push/pop ranges; "\@", "\/"
// and "\\" are a literal '@', '/' and '\'. ncu's own spelling is accepted too: a trailing '/'
// ("prefill/", "LLM@prefill/") is ncu's mark of a push/pop range, not an empty range name.
// Error for an empty range name.
Result<std::string> nvtx_include_expression(std::string_view user_path);
Result<std::string> nvtx_range_expression(std::string_view user_range);

}  // namespace kernlens::profile

// The deep pass's programs started beside discovery (issue 15's cost). Each program run pays the
// program's start-up (imports, building the model on the CPU: 31-39 s of a 4- or 8-layer
// transformers model under ncu on the H100), and discovery and the deep pass each ran the
// program. Started early under `ncu --mode launch`, the deep pass's programs start up while
// discovery runs and stop at their first CUDA call; once discovery has chosen the kernels, the
// deep pass's first ncu runs attach to them, one each, with what to measure (deep_pass.cpp).
// Two by default: kernels that share no launch number (lm_head, once a pass, beside the
// per-layer kernels) then cost a second attach (about 4 s) instead of a window of 30-40 launches
// at 0.6 s each, and selection knows it (SelectionOptions::attached_runs). Programs the
// selection does not need are ended as soon as it is made. They are used only when discovery saw
// one process (ncu launches only the program's own process, so a child that uses CUDA is neither
// held nor measured), and ended unused otherwise; the deep pass then runs as before. The
// manifest's options.early_start says what happened.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "kernlens/model/profile.h"
#include "kernlens/profile/process.h"
#include "kernlens/profile/run_context.h"

namespace kernlens::profile {

struct EarlyProgram {
  BackgroundProcess process;
  std::vector<std::string> argv;  // ncu --mode launch ... PROGRAM
  int port = 0;                   // where it waits for the attach
};
// In the order of the deep runs they serve: the front one is the next run's.
using EarlyPrograms = std::deque<EarlyProgram>;

// Why this run does not start its deep pass early (an option, the replay mode, a launcher, no
// discovery to overlap), or empty.
std::string early_start_refused(const RunContext& run);

// Starts run.opt.early_programs copies of the program under `ncu --mode launch`, each on free
// ports of 127.0.0.1 of its own, or says why not (a warning; fewer or none). Records the
// decision in the manifest.
EarlyPrograms start_early_programs(RunContext& run);

// After discovery: why the early program cannot serve the deep pass of `timeline`, or empty.
std::string early_program_unusable(const model::Profile& timeline);

// Ends the early programs after the first `keep`, which will not be used, recording why in the
// manifest (options.early_start; they are not among the runs: they never got past their first
// CUDA call).
void drop_early_programs(RunContext& run, EarlyPrograms& early, const std::string& why, std::size_t keep = 0);

// Records the front early program's end, after its attach, as one of the manifest's runs, and
// takes it out of `early`.
void record_early_program(RunContext& run, EarlyPrograms& early, const std::string& step,
                          const ProcessResult& result);

}  // namespace kernlens::profile

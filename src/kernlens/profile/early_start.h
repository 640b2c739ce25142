// The deep pass's program started beside discovery (issue 15's cost). Each program run pays the
// program's start-up (imports, building the model on the CPU: 31-39 s of a 4- or 8-layer
// transformers model under ncu on the H100), and discovery and the deep pass each ran the
// program. Started early under `ncu --mode launch`, the deep pass's program starts up while
// discovery runs and stops at its first CUDA call; once discovery has chosen the kernels, the
// deep pass's first ncu run attaches to it with what to measure (deep_pass.cpp). It is used
// only when discovery saw one process (ncu launches only the program's own process, so a child
// that uses CUDA is neither held nor measured), and ended unused otherwise; the deep pass then
// runs as before. The manifest's options.early_start says what happened.
#pragma once

#include <optional>
#include <string>

#include "kernlens/model/profile.h"
#include "kernlens/profile/process.h"
#include "kernlens/profile/run_context.h"

namespace kernlens::profile {

struct EarlyProgram {
  BackgroundProcess process;
  std::vector<std::string> argv;  // ncu --mode launch ... PROGRAM
  int port = 0;                   // where it waits for the attach
};

// Why this run does not start its deep pass early (an option, the replay mode, a launcher, no
// discovery to overlap), or empty.
std::string early_start_refused(const RunContext& run);

// Starts the program under `ncu --mode launch` on a free port of 127.0.0.1, or says why not
// (a warning) and returns std::nullopt. Records the decision in the manifest.
std::optional<EarlyProgram> start_early_program(RunContext& run);

// After discovery: why the early program cannot serve the deep pass of `timeline`, or empty.
std::string early_program_unusable(const model::Profile& timeline);

// Ends an early program that will not be used, recording why in the manifest (options.early_start;
// it is not one of the runs: it never got past its first CUDA call).
void drop_early_program(RunContext& run, std::optional<EarlyProgram>& early, const std::string& why);

// Records the early program's end, after its attach, as one of the manifest's runs.
void record_early_program(RunContext& run, const EarlyProgram& early, const std::string& step,
                          const ProcessResult& result);

// The first of `count` TCP ports of 127.0.0.1 in a row that are free now, or an Error.
Result<int> free_local_ports(int count);

}  // namespace kernlens::profile

// Discovery: every kernel launch of the program timed, by one of three methods (a table of
// backends in discovery.cpp; what each leaves in discovery/ is rundir/layout.h's):
//   tracer  the kernlens CUPTI tracer injected into the program: the program's own speed and
//           no export step, so the cheapest
//   nsys    Nsight Systems (`nsys profile --trace=cuda,nvtx`), exported to SQLite
//   ncu     Nsight Compute in timing mode: one metric, every launch replayed once
// `--discovery auto` tries them in that order, skips those whose tool is not found, and falls
// back to the next, with a warning, when one fails for the profiler's sake (an nsys that cannot
// import its own capture, a tracer that wrote nothing); a program that itself fails stops the
// run. The manifest's "discovery" says which method ran and why each other one did not.
// `--discovery-from RUN_DIR` reuses the discovery of an earlier run instead.
#pragma once

#include <nlohmann/json.hpp>

#include "kernlens/model/profile.h"
#include "kernlens/profile/run_context.h"

namespace kernlens::profile {

// Finds the tracer and nsys for the methods --discovery may run, recording what was found in
// `tools`. Error (a usage error): the tool of a method asked for by name is missing.
Status locate_discovery_tools(RunContext& run, nlohmann::ordered_json& tools);

// Runs discovery (or reads the one --discovery-from names) into `timeline`, keeping only the
// launches inside --nvtx-include. Returns why it failed; empty when it worked.
std::string discover(RunContext& run, model::Profile& timeline);

// --dry-run: the methods in the order they would be tried and the commands of the first one
// that is found.
void print_discovery_plan(RunContext& run);

}  // namespace kernlens::profile

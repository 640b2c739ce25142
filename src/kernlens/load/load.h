// The one loading path (DESIGN.md §2): inputs -> {Profile, Analysis, Manifest, warnings}, for
// every command that reads profiles (analyze, report, export, demo, compare, db ingest, sweep
// ingest) and the Python module. A run directory of `kernlens profile` is read as profile made
// its analysis.json (its discovery timeline with the deep pass joined on, the --nvtx-include
// stages kept); export files are read in the order given and reconciled (ingest/reconcile.h).
// The library never prints: warnings come back in Loaded, for the caller to show.
//
//   auto loaded = load::load({"runs/llama"}, classifier, {});
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernlens/analysis/analysis.h"
#include "kernlens/common/error.h"
#include "kernlens/load/workload.h"
#include "kernlens/model/profile.h"
#include "kernlens/names/classify.h"
#include "kernlens/rundir/manifest.h"

namespace kernlens::load {

struct LoadOptions {
  analysis::AnalysisOptions analysis;  // its work.analytic comes from `workload`
  WorkloadOptions workload;            // analytic FLOPs: given, completed from a run directory's tags
};

struct Loaded {
  model::Profile profile;
  analysis::Analysis analysis;
  std::optional<rundir::Manifest> manifest;  // a run directory's
  std::vector<Error> warnings;               // the readers', input by input

  // The profiled program's argv (a run directory's); empty for export files.
  std::vector<std::string> command() const { return manifest ? manifest->command : std::vector<std::string>{}; }
};

// Reads `inputs` (a run directory alone, or any number of export files), reconciles and
// analyzes them with `classifier`, which must outlive the result (the analysis points into
// it). Errors: bad input (FILE:LINE), or a bad option (the workload, a stage that is not there).
Result<Loaded> load(const std::vector<std::string>& inputs, const names::KernelClassifier& classifier,
                    const LoadOptions& options = {});

}  // namespace kernlens::load

// The read + reconcile + analyze sequence that analyze, report and demo share: inputs (a run
// directory or export files) into one profile, its analysis, and the profiled command.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"
#include "kernlens/names/classify.h"

namespace kernlens::cli {

struct LoadedAnalysis {
  std::optional<names::KernelClassifier> classifier;  // the analysis points into it
  model::Profile profile;
  analysis::Analysis analysis;
  std::vector<std::string> command;  // the profiled program's argv, for a run directory
};

// Reads `inputs` (only the metrics the analysis reads), prints the readers' warnings, and
// analyzes. Null after printing the error (bad input: exit code kExitBadInput).
std::unique_ptr<LoadedAnalysis> load_analysis(const std::vector<std::string>& inputs,
                                              const std::vector<std::string>& rule_files,
                                              const analysis::AnalysisOptions& options);

}  // namespace kernlens::cli

#include "kernlens/cli/load_analysis.h"

#include "kernlens/cli/analytic_options.h"
#include "kernlens/cli/commands.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/profile/run_reader.h"

namespace kernlens::cli {

std::unique_ptr<LoadedAnalysis> load_analysis(const std::vector<std::string>& inputs,
                                              const std::vector<std::string>& rule_files,
                                              const analysis::AnalysisOptions& options) {
  auto loaded = std::make_unique<LoadedAnalysis>();
  loaded->classifier = load_classifier(rule_files);
  if (!loaded->classifier) return nullptr;
  const ingest::ReadOptions read_options = profile::analysis_read_options();
  for (const auto& path : inputs) {
    if (Status s = profile::read_profile_input(path, loaded->profile, read_options); !s) {
      bad_input(s.error());
      return nullptr;
    }
    if (profile::is_run_directory(path)) loaded->command = profile::read_run_command(path);
  }
  ingest::reconcile_inputs(loaded->profile);
  for (const auto& in : loaded->profile.inputs) {
    for (const auto& w : in.warnings) print_warning(w.to_string());
  }
  analysis::AnalysisOptions with_tags = options;
  if (!with_tags.work.analytic) {  // a run directory's tags may name the model (report, demo)
    auto analytic = analytic_work({}, inputs);
    if (!analytic) {
      bad_input(analytic.error());
      return nullptr;
    }
    with_tags.work.analytic = std::move(analytic).value();
  }
  auto result = analysis::analyze(loaded->profile, *loaded->classifier, with_tags);
  if (!result) {
    bad_input(result.error());
    return nullptr;
  }
  loaded->analysis = std::move(result).value();
  return loaded;
}

}  // namespace kernlens::cli

#include "kernlens/cli/load_analysis.h"

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
  auto result = analysis::analyze(loaded->profile, *loaded->classifier, options);
  if (!result) {
    bad_input(result.error());
    return nullptr;
  }
  loaded->analysis = std::move(result).value();
  return loaded;
}

}  // namespace kernlens::cli

#include "kernlens/load/load.h"

#include <new>

#include <fmt/format.h>

#include "kernlens/common/step_times.h"
#include "kernlens/ingest/reconcile.h"
#include "kernlens/load/timeline.h"
#include "kernlens/rundir/layout.h"

namespace kernlens::load {
namespace {

constexpr std::string_view kAlone = "a run directory is a profile of its own: give it without other inputs";

// `profile` must be empty: a run directory is a profile of its own. The discovery exports of
// the manifest's method, then deep/'s; the join's warnings go to the run directory's input.
Status read_run_directory(const std::string& dir, const rundir::Manifest& manifest, model::Profile& profile,
                          const ingest::ReadOptions& options) {
  if (!profile.launches.empty() || !profile.inputs.empty()) return make_error(dir, 0, std::string(kAlone));
  const std::string method = manifest.discovery_method();
  const rundir::DiscoveryLayout* layout = rundir::find_discovery_layout(method);
  const std::vector<std::string> timeline = rundir::discovery_exports(dir, method);
  if (timeline.empty()) {
    return make_error(dir, 0, fmt::format("a run directory without a discovery export ({}): the run failed before "
                                          "discovery ended",
                                          rundir::discovery_export_names()));
  }
  profile.inputs.push_back({dir, model::InputFormat::kRunDirectory, "", {}, {}});
  const bool filter_stages = layout && layout->records_every_launch;
  if (Status s = read_discovery(timeline, manifest.nvtx_include(), filter_stages, profile, options); !s) return s;
  for (const auto& warning : join_deep_exports(rundir::deep_exports(dir), profile, options)) {
    profile.inputs.front().warnings.push_back(make_error(dir, 0, warning));
  }
  return ok_status();
}

// One input into `loaded`: the run directory whose manifest `loaded` holds, or an export file.
Status read_one(const std::string& path, Loaded& loaded, const ingest::ReadOptions& options) {
  model::Profile& profile = loaded.profile;
  if (rundir::is_run_directory(path)) return read_run_directory(path, *loaded.manifest, profile, options);
  if (!profile.inputs.empty() && profile.inputs.front().format == model::InputFormat::kRunDirectory) {
    return make_error(path, 0, std::string(kAlone));
  }
  return ingest::read_input(path, profile, options);
}

// The first run directory among `inputs`; null when there is none.
const std::string* first_run_directory(const std::vector<std::string>& inputs) {
  for (const auto& input : inputs) {
    if (rundir::is_run_directory(input)) return &input;
  }
  return nullptr;
}

}  // namespace

Result<Loaded> load(const std::vector<std::string>& inputs, const names::KernelClassifier& classifier,
                    const LoadOptions& options) {
  Loaded loaded;
  const std::string* run_dir = first_run_directory(inputs);
  if (run_dir) {
    auto manifest = rundir::read_manifest(*run_dir);
    if (!manifest) return manifest.error();
    loaded.manifest = std::move(manifest).value();
  }
  analysis::AnalysisOptions analysis_options = options.analysis;
  auto analytic = analytic_work(options.workload, run_dir ? &*loaded.manifest : nullptr, run_dir ? *run_dir : "");
  if (!analytic) return analytic.error();
  analysis_options.work.analytic = std::move(analytic).value();

  ingest::ReadOptions read_options = analysis_read_options();
  read_options.step_times = options.analysis.step_times;
  for (const auto& path : inputs) {
    Status s = ok_status();
    try {
      s = timed_step(options.analysis.step_times, "read " + path, [&] { return read_one(path, loaded, read_options); });
    } catch (const std::bad_alloc&) {  // say which input took the memory
      s = make_error(path, 0, "out of memory while reading it (see the limits in the user guide)");
    }
    if (!s) return s.error();
  }
  timed_step(options.analysis.step_times, "reconcile", [&] { ingest::reconcile_inputs(loaded.profile); });
  for (const auto& in : loaded.profile.inputs) {
    loaded.warnings.insert(loaded.warnings.end(), in.warnings.begin(), in.warnings.end());
  }
  auto result = timed_step(options.analysis.step_times, "analysis",
                           [&] { return analysis::analyze(loaded.profile, classifier, analysis_options); });
  if (!result) return result.error();
  loaded.analysis = std::move(result).value();
  return loaded;
}

}  // namespace kernlens::load

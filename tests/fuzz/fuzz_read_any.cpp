// libFuzzer harness: the whole `analyze` pipeline on any bytes: format detection, the
// reader it picks, reconciliation, the analysis (aggregation, names, metrics, verdicts, MFU)
// and both writers. Bytes are split at NUL (which no text export contains) into up to 4
// inputs, so that pages of one report (raw + details, summary) meet in reconcile_inputs as
// they do on the command line.
#include <cmath>

#include <nlohmann/json.hpp>

#include "fuzz_common.h"

#include "kernlens/analysis/analysis.h"
#include "kernlens/ingest/reconcile.h"
#include "kernlens/report/json_report.h"
#include "kernlens/report/text_report.h"

using namespace kernlens;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest = fuzz::as_text(data, size);
  model::Profile profile;
  for (int i = 0; i < 4 && !rest.empty(); ++i) {
    std::string_view piece = rest.substr(0, rest.find('\0'));
    rest.remove_prefix(std::min(rest.size(), piece.size() + 1));
    Status status = ingest::read_input_bytes(piece, "in" + std::to_string(i) + ".csv", profile);
    if (!status) {  // the CLI stops at the first input that does not read
      fuzz::check_error_line(status.error(), piece);
      return 0;
    }
  }
  fuzz::check_profile(profile);
  ingest::reconcile_inputs(profile);
  fuzz::check_profile(profile);
  auto analyzed = analysis::analyze(profile, fuzz::builtin_classifier(), {});
  fuzz::check(analyzed.ok(), "analyze without user options cannot fail");
  const analysis::Analysis& a = *analyzed;
  fuzz::check(a.kernels.size() == a.agg.kernels.size(), "one insight per kernel row");
  fuzz::check(a.stages.size() == a.agg.stages.size(), "one work row per stage row");
  fuzz::check(a.families.size() == a.agg.families.size(), "one insight per family row");
  for (const auto& k : a.agg.kernels) fuzz::check(k.name < profile.names.size(), "kernel row name");
  for (const auto& k : a.kernels) {
    for (const auto& [key, value] : k.verdict.evidence) fuzz::check(std::isfinite(value), "evidence is finite");
    for (const auto& f : k.metrics.figures) fuzz::check(!f || std::isfinite(f->value), "figure is finite");
  }
  for (const auto& w : a.stages) fuzz::check(!w.mfu || std::isfinite(*w.mfu), "mfu is finite");
  std::string json = report::analysis_json(profile, a, {});
  // The document must be valid JSON: tools downstream parse it.
  fuzz::check(nlohmann::json::accept(json), "analysis_json wrote invalid JSON");
  std::string text = report::analysis_text(profile, a, {});
  fuzz::check(!text.empty(), "analysis_text wrote nothing");
  return 0;
}

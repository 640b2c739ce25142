// Shared by the libFuzzer harnesses: running one reader the way read_input_bytes does, and
// checks that what a reader produced is self-consistent. An index out of range would only
// crash later (in analysis or a writer), far from its cause, so it is caught here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kernlens/ingest/reader.h"
#include "kernlens/ingest/registry.h"
#include "kernlens/model/profile.h"
#include "kernlens/names/classify.h"

namespace kernlens::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Aborts, so that libFuzzer saves the input, when an invariant does not hold.
inline void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "kernlens fuzz invariant violated: %s\n", what);
  std::abort();
}

// FILE:LINE must point into the file, or just past its last line (an error at the end).
// Line breaks are "\n", "\r\n" or a lone "\r" (as CsvScanner counts them), so counting
// both characters bounds the number of lines from above.
// The classifier of the built-in kernel rules, loaded once.
inline const names::KernelClassifier& builtin_classifier() {
  static const names::KernelClassifier classifier = [] {
    auto loaded = names::KernelClassifier::load({});
    check(loaded.ok(), "the built-in kernel rules do not load");
    return std::move(loaded).value();
  }();
  return classifier;
}

inline void check_error_line(const Error& e, std::string_view bytes) {
  auto lines = std::count(bytes.begin(), bytes.end(), '\n') +
               std::count(bytes.begin(), bytes.end(), '\r') +
               (bytes.empty() || bytes.back() == '\n' || bytes.back() == '\r' ? 0 : 1);
  check(e.line >= 0 && e.line <= lines + 1, "error line beyond the end of the file");
  check(!e.message.empty(), "error without a message");
}

inline void check_profile(const model::Profile& p) {
  check(!p.stages.empty() && p.stages[0].empty(), "stage 0 is not the empty key");
  check(!p.processes.empty(), "process 0 (unknown) missing");
  for (const auto& l : p.launches) {
    check(l.name < p.names.size(), "launch name out of range");
    check(l.stage < p.stages.size(), "launch stage out of range");
    check(l.process < p.processes.size(), "launch process out of range");
    check(l.input < p.inputs.size(), "launch input out of range");
    check(l.config < p.configs.size(), "launch configuration out of range");
    check(l.rules < p.rule_sets.size(), "launch rule set out of range");
    check(l.metrics_first + l.metrics_count <= p.metric_samples.size(), "metrics span out of range");
    for (const auto& m : p.metrics_of(l)) check(m.id < p.metrics.size(), "metric id out of range");
  }
  for (const auto& r : p.stage_ranges) check(r.stage < p.stages.size(), "stage range stage out of range");
}

// One format's reader on a fresh profile, as read_input_bytes calls it once the format is
// detected.
inline void run_reader(model::InputFormat format, std::string_view bytes) {
  model::Profile profile;
  profile.inputs.push_back(model::InputInfo{"fuzz.csv", format, "", {}, {}});
  ingest::ReadContext ctx{"fuzz.csv", profile, 0, {}};
  Status status = ingest::find_format(format)->read(bytes, ctx);
  if (!status) check_error_line(status.error(), bytes);
  for (const auto& w : profile.inputs[0].warnings) check_error_line(w, bytes);
  check_profile(profile);
}

}  // namespace kernlens::fuzz

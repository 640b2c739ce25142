// Helpers of the `kernlens profile` tests: options for a run against the fake ncu
// (tests/fixtures/fake_tools), running it, and reading what it wrote.
#pragma once

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernlens/profile/profile_run.h"
#include "kernlens/report/json_report.h"
#include "kernlens/report/text_report.h"
#include "test_util.h"

namespace kernlens::test {

inline const std::string kFakeNcu = fixture("fake_tools/bin/ncu");
inline const std::string kFakeNsys = fixture("fake_tools/bin/nsys");

struct Outcome {
  profile::ProfileRunResult result;
  std::string out, err;
};

// ncu discovery with the fake ncu, into DIR/runs/r1, with analysis.json and the text report
// as `kernlens profile` writes them.
inline profile::ProfileRunOptions options(const TempDir& dir, std::vector<std::string> command) {
  profile::ProfileRunOptions o;
  o.command = std::move(command);
  o.discovery = rundir::DiscoveryMethod::kNcu;
  o.writers.analysis_json = [](const auto& p, const auto& a) { return report::analysis_json(p, a, {}); };
  o.writers.summary = [](const auto& p, const auto& a) { return report::analysis_text(p, a, {20, 100}); };
  o.ncu_path = kFakeNcu;
  o.out = dir.file("runs");
  o.run_id = "r1";
  return o;
}

// Runs `kernlens profile` with the fake ncu in FAKE_NCU_MODE `fake_mode`.
inline Outcome run(const profile::ProfileRunOptions& o, const char* fake_mode = "") {
  setenv("FAKE_NCU_MODE", fake_mode, 1);
  std::ostringstream out, err;
  Outcome r{profile::run_profile(o, builtin_classifier(), out, err), out.str(), err.str()};
  unsetenv("FAKE_NCU_MODE");
  return r;
}

// --dry-run's output without its "# environment: {...}" line, which depends on this machine.
inline std::string without_environment_line(const std::string& out) {
  const auto at = out.find("# environment: {");
  if (at == std::string::npos) return out;
  return out.substr(0, at) + out.substr(out.find('\n', at) + 1);
}

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace kernlens::test

// The deep pass: one ncu run per invocation of the selection (selection.h), each run's report
// exported to CSV (raw page in base units, details page), with a progress line. An ncu run that
// profiled nothing (ncu exits 0 then) is said so, with ncu's own lines and the usual causes.
#pragma once

#include <string>
#include <vector>

#include "kernlens/profile/early_start.h"
#include "kernlens/profile/run_context.h"
#include "kernlens/profile/selection.h"

namespace kernlens::profile {

struct DeepPassResult {
  std::vector<std::string> csvs;  // the exports written
  std::string why;                // why the pass failed or stopped; empty when it did not
};

// `early`: the programs started beside discovery (early_start.h), which the first runs attach
// to, one each; they are used up (emptied) either way.
DeepPassResult deep_pass(RunContext& run, const Selection& selection, EarlyPrograms& early);

// The deep pass's first ncu run for --dry-run, with placeholders for what discovery decides.
std::vector<std::vector<std::string>> deep_pass_plan(const RunContext& run);

}  // namespace kernlens::profile

// The `analyze --format json` document (schema kernlens.analysis/1, DESIGN.md §4).
// Values not measured are left out, never written as 0.
#pragma once

#include <cstddef>
#include <string>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"

namespace kernlens::report {

struct JsonOptions {
  std::size_t top = 0;  // kernels (and kernel families) to list; 0 = all
};

std::string analysis_json(const model::Profile& profile, const analysis::Analysis& analysis,
                          const JsonOptions& options);

}  // namespace kernlens::report

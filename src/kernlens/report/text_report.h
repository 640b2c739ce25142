// The `analyze` text output: a summary and readable tables of the top kernels, the top kernel
// families (kernels of one base name) and the stages.
#pragma once

#include <cstddef>
#include <string>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"

namespace kernlens::report {

struct TextOptions {
  std::size_t top = 20;          // kernels (and kernel families) to list; 0 = all
  std::size_t name_width = 100;  // longest kernel name shown; 0 = no limit
};

std::string analysis_text(const model::Profile& profile, const analysis::Analysis& analysis,
                          const TextOptions& options);

}  // namespace kernlens::report

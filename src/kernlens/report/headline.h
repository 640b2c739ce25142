// The few lines a person reads first: where the time goes, the worst stage, the top kernel and
// why, the MFU. `kernlens demo` prints them and the HTML report opens with them.
#pragma once

#include <string>
#include <vector>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"

namespace kernlens::report {

struct HeadlineLine {
  std::string label;  // "time", "worst stage", "top kernel", "MFU"
  std::string text;
};

std::vector<HeadlineLine> headline(const model::Profile& profile, const analysis::Analysis& analysis);

// The lines as text, "  label:  text", labels aligned, each wrapped at `width` columns (0: never).
std::string headline_text(const std::vector<HeadlineLine>& lines, std::size_t width = 100);

}  // namespace kernlens::report

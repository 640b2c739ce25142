// discovery/kernels.csv of a run directory: every kernel of the discovery pass, ranked by
// total GPU time, with its share, the running share (what --coverage is compared with) and
// whether the deep pass measures it. RFC 4180 CSV: kernel names hold commas and quotes.
#pragma once

#include <string>
#include <unordered_set>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/model/profile.h"

namespace kernlens::profile {

// `selected`: names (as the profile spells them) of the kernels the deep pass measures.
std::string kernels_csv(const model::Profile& profile, const analysis::Aggregate& agg,
                        const std::unordered_set<std::string>& selected);

}  // namespace kernlens::profile

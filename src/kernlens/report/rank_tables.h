// The per-rank section of the text and JSON reports: one row per rank (kernel time, busy,
// communication, exposed communication, role), its GPU lanes, its collectives, and the skew
// table. Empty / absent for a profile of one rank.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kernlens/analysis/ranks.h"

namespace kernlens::report {

// The text section, "" for one rank. `top` caps the skew rows (0: all).
std::string ranks_text(const analysis::RankAnalysis& ranks, std::size_t top);

// The "ranks" object of kernlens.analysis/1 (docs/schema); null for one rank.
nlohmann::ordered_json ranks_json(const analysis::RankAnalysis& ranks);

}  // namespace kernlens::report

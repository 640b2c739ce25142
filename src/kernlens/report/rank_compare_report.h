// The per-rank part of a comparison (analysis/rank_compare.h) in compare's text, Markdown and
// JSON: "" / absent when neither run has several ranks, so single-rank outputs stay as they were.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "kernlens/analysis/rank_compare.h"

namespace kernlens::report {

// `normalized`: the rest of the comparison is normalised (per token, ...); rank figures never
// are. `top`: stage rows listed per rank, by the size of the change (0: all); JSON lists all.
std::string rank_compare_text(const analysis::RankComparison& c, bool normalized, std::size_t top);
std::string rank_compare_markdown(const analysis::RankComparison& c, bool normalized, std::size_t top);
// The "ranks" object of kernlens.compare/1 (docs/schema); null when there is nothing to say.
nlohmann::ordered_json rank_compare_json(const analysis::RankComparison& c);

}  // namespace kernlens::report

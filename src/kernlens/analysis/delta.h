// A figure before and after (compare.h, rank_compare.h).
#pragma once

#include <optional>

namespace kernlens::analysis {

struct Delta {
  std::optional<double> base_ns, candidate_ns;
  double delta_ns() const { return candidate_ns.value_or(0) - base_ns.value_or(0); }
  // Relative change in percent; absent when the base time is absent or 0.
  std::optional<double> delta_pct() const;
};

}  // namespace kernlens::analysis

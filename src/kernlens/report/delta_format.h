// A figure before and after (analysis/delta.h) as compare's writers show it.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kernlens/analysis/delta.h"

namespace kernlens::report {

std::string ns_or_dash(const std::optional<double>& ns);  // "1.2 ms", or "-" when absent
std::string signed_ns(double ns);                         // "+1.2 ms", "-3 us"
std::string change_text(const analysis::Delta& d);        // "+3.1%", or "new" / "gone"
nlohmann::ordered_json opt_json(const std::optional<double>& v);  // the number, or null
// {"base_ns", "candidate_ns", "delta_ns", "delta_pct"}
nlohmann::ordered_json delta_json(const analysis::Delta& d);

}  // namespace kernlens::report

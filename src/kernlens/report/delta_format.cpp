#include "kernlens/report/delta_format.h"

#include <cmath>

#include <fmt/format.h>

#include "kernlens/report/format.h"

namespace kernlens::report {

std::string ns_or_dash(const std::optional<double>& ns) {
  return ns ? human_duration_ns(*ns) : "-";
}

std::string signed_ns(double ns) {
  return (ns >= 0 ? "+" : "-") + human_duration_ns(std::abs(ns));
}

std::string change_text(const analysis::Delta& d) {
  if (auto pct = d.delta_pct()) return fmt::format("{:+.1f}%", *pct);
  return d.base_ns ? "gone" : "new";
}

nlohmann::ordered_json opt_json(const std::optional<double>& v) {
  return v ? json_number(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json delta_json(const analysis::Delta& d) {
  return nlohmann::ordered_json{{"base_ns", opt_json(d.base_ns)}, {"candidate_ns", opt_json(d.candidate_ns)},
                                {"delta_ns", json_number(d.delta_ns())}, {"delta_pct", opt_json(d.delta_pct())}};
}

}  // namespace kernlens::report

// Small formatting helpers shared by the writers.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kernlens::report {

// 1234567 -> "1.235 ms"; 850 -> "850 ns". Four significant digits, for people.
std::string human_duration_ns(double ns);
// 0.1234 -> "12.3%".
std::string human_percent(double fraction);
// Cuts `s` to `width` characters (counting UTF-8 code points) with a trailing "…"; 0 = no limit.
std::string ellipsize(std::string_view s, std::size_t width);
// A JSON number that prints integral values without a fraction ("12128", not "12128.0").
nlohmann::ordered_json json_number(double v);

}  // namespace kernlens::report

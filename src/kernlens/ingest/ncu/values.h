// Decoding Nsight Compute cell values: numbers with thousands separators ("2,589,629.63"),
// metric instance lists ("2,490,368 (524,288; 393,216)" and "1 (0: 1)"), no-value tokens
// ("n/a", "no data", ""), and launch dimensions ("(128, 1, 1)").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "kernlens/model/profile.h"

namespace kernlens::ingest {

enum class CellKind { kNumber, kNoValue, kInvalid };

struct NcuNumber {
  CellKind kind = CellKind::kInvalid;
  double value = 0;
};

// Parses a numeric cell and multiplies it by 10^pow10 (a unit conversion) exactly: the
// exponent is applied to the decimal digits before rounding to double, so "12.128 us"
// becomes exactly 12128 ns. Thousands separators must group by three ("1,5" is invalid:
// it could be a decimal comma). For instance lists only the aggregate before " (" counts.
NcuNumber parse_ncu_number(std::string_view cell, int pow10 = 0);

// Parses an integer cell ("1,024" allowed); nullopt when it is not one.
std::optional<std::int64_t> parse_ncu_integer(std::string_view cell);
// A summary row's count of executions (ncu's Invocations, nsys's Instances): a positive
// integer that fits a launch's 32-bit count; nullopt otherwise.
std::optional<std::uint32_t> parse_execution_count(std::string_view cell);

// "(128, 1, 1)" or a plain "128" (then y = z = 1). nullopt when malformed.
std::optional<model::Dim3> parse_dim3(std::string_view cell);

// Removes spaces and tabs on both ends.
std::string_view trim(std::string_view s);

}  // namespace kernlens::ingest

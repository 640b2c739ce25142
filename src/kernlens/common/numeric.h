// Checked conversions from the doubles that parsers produce to integers: a value that does
// not fit (1e30 registers) is reported, never cast (which is undefined behaviour).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace kernlens {

// The integer `v` holds exactly, when it is integral and fits in T.
template <class T>
std::optional<T> exact_integer(double v) {
  static_assert(std::numeric_limits<T>::is_integer);
  // Bounds as doubles: min() is a power of two (exact); max()+1 is one too.
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double hi_exclusive = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
  if (!std::isfinite(v) || v < lo || v >= hi_exclusive || v != std::floor(v)) return std::nullopt;
  return static_cast<T>(v);
}

}  // namespace kernlens

// Checked conversions from the doubles that parsers produce to integers: a value that does
// not fit (1e30 registers) is reported, never cast (which is undefined behaviour). And the
// median of durations.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

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

// The longest time an export may hold for a kernel, or a summary's total over its launches:
// 1e16 ns, about 116 days. A larger value (1e26 ns) is damage, not a measurement.
inline constexpr double kMaxPlausibleNs = 1e16;

inline bool plausible_duration_ns(double ns) {
  return std::isfinite(ns) && ns >= 0 && ns <= kMaxPlausibleNs;
}

// The median (the mean of the two middle values for an even count); 0 for none.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  if (values.size() % 2 == 1) return *mid;
  double upper = *mid;
  double lower = *std::max_element(values.begin(), mid);
  return (lower + upper) / 2;
}

}  // namespace kernlens

// Bit tricks of the SIMD scanners (CSV, JSON): one bit per byte of a 64-byte block.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace kernlens {

// Bit i of the result is the XOR of bits 0..i. Over quote positions: 1 from an opening
// quote up to (not including) its closing quote, the inside of quoted text.
inline std::uint64_t prefix_xor(std::uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// The bits below bit n (all 64 from n = 64 on).
inline std::uint64_t bits_below(unsigned n) { return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

// How many bytes of p[0, n) equal `c`. Counted in 8-bit lanes, 64 bytes a step, emptied
// before they can overflow: the compiler makes SIMD of it, about five times std::count's
// speed (whose 64-bit counter it cannot widen as well).
inline std::size_t count_byte(const char* p, std::size_t n, char c) {
  std::size_t total = 0;
  while (n > 0) {
    const std::size_t block = std::min<std::size_t>(n, 255 * 64);
    std::uint8_t lanes[64] = {};
    std::size_t i = 0;
    for (; i + 64 <= block; i += 64) {
      for (int k = 0; k < 64; ++k) lanes[k] = static_cast<std::uint8_t>(lanes[k] + (p[i + k] == c));
    }
    for (int k = 0; k < 64; ++k) total += lanes[k];
    for (; i < block; ++i) total += p[i] == c;
    p += block;
    n -= block;
  }
  return total;
}

}  // namespace kernlens

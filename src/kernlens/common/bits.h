// Bit tricks of the SIMD scanners (CSV, JSON): one bit per byte of a 64-byte block.
#pragma once

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

}  // namespace kernlens

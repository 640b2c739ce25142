// Run-time choice of x86 SIMD for the byte scanners (CSV, JSON): the target attributes that
// compile one function for AVX2 or AVX-512 in a build for any x86-64, whether this CPU has
// them, and the carry-less-multiply prefix XOR both wider paths use. Off x86-64 (or GCC/Clang)
// KERNLENS_HAVE_X86_DISPATCH is 0 and the scanners keep their portable path.
//
// KERNLENS_SIMD=portable in the environment keeps them on the portable path (SSE2 on x86-64)
// whatever the CPU has: the tests run each scanner both ways on one machine (CTest's
// unit_scanners_portable_simd).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string_view>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KERNLENS_HAVE_X86_DISPATCH 1
#define KERNLENS_AVX2_TARGET __attribute__((target("avx2,pclmul,popcnt,bmi,bmi2,lzcnt")))
#define KERNLENS_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx2,pclmul,popcnt,bmi,bmi2,lzcnt")))
#else
#define KERNLENS_HAVE_X86_DISPATCH 0
#endif

namespace kernlens {

// Whether KERNLENS_SIMD=portable asks for the portable path.
inline bool simd_forced_portable() {
  const char* value = std::getenv("KERNLENS_SIMD");
  return value != nullptr && std::string_view(value) == "portable";
}

#if KERNLENS_HAVE_X86_DISPATCH
// AVX2 with what KERNLENS_AVX2_TARGET assumes beside it (false under KERNLENS_SIMD=portable).
inline bool cpu_has_avx2() {
  static const bool has = !simd_forced_portable() && __builtin_cpu_supports("avx2") &&
                          __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("popcnt") &&
                          __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  return has;
}

// AVX-512 (F and BW) with what KERNLENS_AVX512_TARGET assumes beside it.
inline bool cpu_has_avx512() {
  static const bool has = cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  return has;
}

// Which of the 64 bytes held in `lo` (the first 32) and `hi` equal `c`: one bit per byte.
inline KERNLENS_AVX2_TARGET std::uint64_t avx2_equal_mask(__m256i lo, __m256i hi, char c) {
  const __m256i v = _mm256_set1_epi8(c);
  const auto low = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, v)));
  const auto high = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, v)));
  return std::uint64_t{low} | std::uint64_t{high} << 32;
}

// prefix_xor (common/bits.h) as one carry-less multiply by all ones: 3 instructions for 12.
inline KERNLENS_AVX2_TARGET std::uint64_t prefix_xor_clmul(std::uint64_t x) {
  const __m128i product = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<long long>(x)),
                                               _mm_set1_epi8(static_cast<char>(0xFF)), 0);
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(product));
}
#endif

}  // namespace kernlens

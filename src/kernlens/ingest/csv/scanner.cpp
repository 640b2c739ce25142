#include "kernlens/ingest/csv/scanner.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#include "kernlens/common/bits.h"
#include "kernlens/common/simd.h"

namespace kernlens::ingest {
namespace {

// Where the three characters that matter sit in 64 bytes: one bit per byte.
struct CsvMasks {
  std::uint64_t quote = 0, comma = 0, newline = 0;
};

#if defined(__GNUC__)
#define KERNLENS_INLINE inline __attribute__((always_inline))
#else
#define KERNLENS_INLINE inline
#endif

// The baseline: SSE2 compares 16 bytes at a time (or plain C++ off x86).
struct CsvBaselineIsa {
  static KERNLENS_INLINE CsvMasks classify(const char* p) {
    CsvMasks m;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), comma = _mm_set1_epi8(','), newline = _mm_set1_epi8('\n');
    for (int i = 0; i < 4; ++i) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      auto bits = [&](__m128i c) {
        return static_cast<std::uint64_t>(static_cast<std::uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, c))))
               << (16 * i);
      };
      m.quote |= bits(quote);
      m.comma |= bits(comma);
      m.newline |= bits(newline);
    }
#else
    for (int i = 0; i < 64; ++i) {
      std::uint64_t bit = std::uint64_t{1} << i;
      if (p[i] == '"') m.quote |= bit;
      if (p[i] == ',') m.comma |= bit;
      if (p[i] == '\n') m.newline |= bit;
    }
#endif
    return m;
  }
  // Doubled quotes toggle twice and so stay inside.
  static KERNLENS_INLINE std::uint64_t prefix_xor(std::uint64_t x) { return kernlens::prefix_xor(x); }
};

#if KERNLENS_HAVE_X86_DISPATCH
// AVX2 compares 32 bytes at a time; a carry-less multiply by all ones is the prefix XOR.
struct CsvAvx2Isa {
  static inline KERNLENS_AVX2_TARGET CsvMasks classify(const char* p) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    return CsvMasks{avx2_equal_mask(lo, hi, '"'), avx2_equal_mask(lo, hi, ','), avx2_equal_mask(lo, hi, '\n')};
  }
  static inline KERNLENS_AVX2_TARGET std::uint64_t prefix_xor(std::uint64_t x) { return prefix_xor_clmul(x); }
};

// AVX-512BW compares all 64 bytes at once, straight into bit masks.
struct CsvAvx512Isa {
  static inline KERNLENS_AVX512_TARGET CsvMasks classify(const char* p) {
    const __m512i v = _mm512_loadu_si512(p);
    return CsvMasks{_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"')),
                      _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(',')),
                      _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\n'))};
  }
  static inline KERNLENS_AVX512_TARGET std::uint64_t prefix_xor(std::uint64_t x) { return prefix_xor_clmul(x); }
};
#endif

}  // namespace

CsvScanner::CsvScanner(std::string_view data, std::int64_t first_line)
    : data_(data), line_(first_line) {}

std::string_view strip_bom(std::string_view data) {
  if (data.size() >= 3 && data.substr(0, 3) == "\xEF\xBB\xBF") data.remove_prefix(3);
  return data;
}

bool is_ncu_console_line(std::string_view line) {
  // "==" WORD "==" where WORD is upper-case letters: ==PROF==, ==WARNING==, ==ERROR==.
  if (line.size() < 5 || line[0] != '=' || line[1] != '=') return false;
  std::size_t i = 2;
  while (i < line.size() && line[i] >= 'A' && line[i] <= 'Z') ++i;
  return i > 2 && i + 1 < line.size() && line[i] == '=' && line[i + 1] == '=';
}

std::string_view CsvScanner::peek_line() const {
  std::string_view rest = data_.substr(pos_);
  std::string_view line = rest.substr(0, rest.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

void CsvScanner::skip_line() {
  std::size_t nl = data_.find('\n', pos_);
  pos_ = nl == std::string_view::npos ? data_.size() : nl + 1;
  ++line_;
}

void CsvScanner::select_fields(std::vector<std::size_t> indices) { selected_ = std::move(indices); }

// The text of the field data_[begin, end). Fields are short: counting their quotes here is
// cheaper than tracking quote counts for every separator in the scan.
inline std::string_view CsvScanner::field_text(std::size_t begin, std::size_t end, bool ends_line) {
  std::string_view raw(data_.data() + begin, end - begin);
  if (ends_line && !raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  if (raw.empty() || raw.front() != '"') return raw;  // unquoted (stray quotes kept as text)
  std::size_t quotes = 0;
  for (char c : raw) quotes += c == '"';
  if (quotes == 2 && raw.size() >= 2 && raw.back() == '"') return raw.substr(1, raw.size() - 2);
  return unescape(raw);
}

// Doubled quotes to undo, or text after the closing quote ("ab"c -> ab"c, lenient).
// Rare: kept out of line so the scan loops stay small.
__attribute__((noinline)) std::string_view CsvScanner::unescape(std::string_view raw) {
  // Reuse the strings of earlier records (their capacity stays): no allocation per row.
  if (owned_used_ == owned_.size()) owned_.emplace_back();
  std::string& copy = owned_[owned_used_++];
  copy.clear();
  copy.reserve(raw.size());
  bool inside = false;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c != '"') {
      copy += c;
    } else if (!inside) {
      inside = true;
      if (i > 0) copy += c;
    } else if (i + 1 < raw.size() && raw[i + 1] == '"') {
      copy += '"';
      ++i;
    } else {
      inside = false;
    }
  }
  return copy;
}

// The scan loop, instantiated once per instruction set below. The entry points are
// `flatten`: everything is inlined into them, so the AVX2 one is compiled for AVX2 whole
// (a default-target function may not inline AVX2 code, but an AVX2 one may inline it all).
template <class Isa>
bool CsvScanner::scan(CsvRecord& rec) {
  const bool all = selected_.empty();
  if (all) rec.fields.clear();
  owned_used_ = 0;
  if (pos_ >= data_.size()) return false;
  rec.line = line_;
  rec.closed = true;

  const std::size_t size = data_.size();
  std::size_t field_begin = pos_;
  std::size_t field_index = 0;
  std::size_t next_selected = 0;       // position in selected_
  std::uint64_t newlines_inside = 0;   // line breaks inside quotes, for line counting
  std::uint64_t inside_carry = 0;      // all ones when the previous block ended inside quotes
  auto emit = [&](std::size_t end, bool line_end) {
    if (all) {
      if (rec.fields.size() < kMaxFields) rec.fields.push_back(field_text(field_begin, end, line_end));
    } else if (field_index < kMaxFields) {
      if (rec.fields.size() <= field_index) rec.fields.resize(field_index + 1);
      if (next_selected < selected_.size() && selected_[next_selected] == field_index) {
        rec.fields[field_index] = field_text(field_begin, end, line_end);
        ++next_selected;
      }
    }
    ++field_index;
  };
  char tail[64];
  for (std::size_t base = pos_; base < size; base += 64) {
    const std::size_t valid = size - base < 64 ? size - base : 64;
    const char* block = data_.data() + base;
    if (valid < 64) {  // the last block: pad with zeros, classify only what is there
      std::memset(tail, 0, sizeof(tail));
      std::memcpy(tail, block, valid);
      block = tail;
    }
    CsvMasks m = Isa::classify(block);
    const std::uint64_t in_range = bits_below(static_cast<unsigned>(valid));
    const std::uint64_t inside = Isa::prefix_xor(m.quote & in_range) ^ inside_carry;
    inside_carry = static_cast<std::uint64_t>(static_cast<std::int64_t>(inside) >> 63);
    const std::uint64_t line_ends = m.newline & ~inside & in_range;
    std::uint64_t structural = (m.comma & ~inside & in_range) | line_ends;
    newlines_inside += static_cast<std::uint64_t>(std::popcount(m.newline & inside & in_range));
    if (!all && !line_ends && structural) {
      // No line end here: skip the block whole unless a selected field ends in it.
      const auto fields_here = static_cast<std::size_t>(std::popcount(structural));
      const std::size_t want = next_selected < selected_.size() ? selected_[next_selected] : SIZE_MAX;
      if (field_index + fields_here <= want) {
        field_index += fields_here;
        field_begin = base + 64 - static_cast<unsigned>(std::countl_zero(structural));
        continue;
      }
    }
    while (structural) {
      if (!all) {
        // The fields before the next selected one that end here, before any line end, are
        // passed by their separators alone: most of a wide row is fields nobody asked for.
        const std::size_t want = next_selected < selected_.size() ? selected_[next_selected] : SIZE_MAX;
        const std::uint64_t before_line_end = line_ends ? (line_ends & (0 - line_ends)) - 1 : ~std::uint64_t{0};
        const auto passable = static_cast<std::size_t>(std::popcount(structural & before_line_end));
        std::size_t skip = std::min(want - field_index, passable);
        if (skip > 0) {
          field_index += skip;
          for (; skip > 1; --skip) structural &= structural - 1;
          field_begin = base + static_cast<unsigned>(std::countr_zero(structural)) + 1;
          structural &= structural - 1;
          continue;
        }
      }
      const unsigned bit = static_cast<unsigned>(std::countr_zero(structural));
      structural &= structural - 1;
      const std::size_t end = base + bit;
      const bool line_end = (line_ends >> bit) & 1;
      emit(end, line_end);
      if (line_end) {
        const std::uint64_t later_inside = static_cast<std::uint64_t>(
            std::popcount(m.newline & inside & in_range & ~bits_below(bit)));
        line_ += 1 + static_cast<std::int64_t>(newlines_inside - later_inside);
        pos_ = end + 1;
        if (!all) rec.fields.resize(std::min(field_index, kMaxFields));
        return true;
      }
      field_begin = end + 1;
    }
  }
  // The data ended without a line break: the last field runs to the end.
  emit(size, false);
  if (!all) rec.fields.resize(std::min(field_index, kMaxFields));
  rec.closed = inside_carry == 0;
  line_ += static_cast<std::int64_t>(newlines_inside);
  pos_ = size;
  return true;
}

std::optional<std::string> unclosed_quote(const CsvRecord& rec, const CsvScanner& scanner) {
  // At the end of the data the scanner has counted the line breaks inside the open quote.
  const std::int64_t swallowed = scanner.line() - rec.line;
  if (rec.closed || swallowed <= 1) return std::nullopt;
  return "a quote opened in this row is never closed: the " + std::to_string(swallowed) +
         " lines after it would be read as one field (a stray '\"'?)";
}

__attribute__((flatten)) bool CsvScanner::next_baseline(CsvRecord& rec) { return scan<CsvBaselineIsa>(rec); }

#if KERNLENS_HAVE_X86_DISPATCH
KERNLENS_AVX2_TARGET __attribute__((flatten)) bool CsvScanner::next_avx2(CsvRecord& rec) {
  return scan<CsvAvx2Isa>(rec);
}

KERNLENS_AVX512_TARGET __attribute__((flatten)) bool CsvScanner::next_avx512(CsvRecord& rec) {
  return scan<CsvAvx512Isa>(rec);
}

bool CsvScanner::next(CsvRecord& rec) {
  if (cpu_has_avx512()) return next_avx512(rec);
  return cpu_has_avx2() ? next_avx2(rec) : next_baseline(rec);
}
#else
bool CsvScanner::next(CsvRecord& rec) { return next_baseline(rec); }
#endif

}  // namespace kernlens::ingest

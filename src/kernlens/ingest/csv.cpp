#include "kernlens/ingest/csv.h"

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kernlens::ingest {
namespace {

// Where the three characters that matter sit in 64 bytes: one bit per byte.
struct BlockMasks {
  std::uint64_t quote = 0, comma = 0, newline = 0;
};

BlockMasks classify(const char* p) {
  BlockMasks m;
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

// Bit i of the result is the XOR of bits 0..i: 1 from an opening quote up to (not
// including) its closing quote. Doubled quotes toggle twice and so stay inside.
std::uint64_t prefix_xor(std::uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

std::uint64_t bits_below(unsigned n) { return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

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

// The text of the field data_[begin, end) holding `quotes` quote characters.
inline std::string_view CsvScanner::field_text(std::size_t begin, std::size_t end, std::uint64_t quotes,
                                               bool ends_line) {
  std::string_view raw(data_.data() + begin, end - begin);
  if (ends_line && !raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  if (quotes == 0 || raw.empty() || raw.front() != '"') return raw;  // unquoted (stray quotes kept)
  if (quotes == 2 && raw.size() >= 2 && raw.back() == '"') return raw.substr(1, raw.size() - 2);
  return unescape(raw);
}

// Doubled quotes to undo, or text after the closing quote ("ab"c -> ab"c, lenient).
std::string_view CsvScanner::unescape(std::string_view raw) {
  std::string& copy = owned_.emplace_back();
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

bool CsvScanner::next(CsvRecord& rec) {
  const bool all = selected_.empty();
  if (all) rec.fields.clear();
  owned_.clear();
  if (pos_ >= data_.size()) return false;
  rec.line = line_;
  rec.closed = true;

  const std::size_t size = data_.size();
  std::size_t field_begin = pos_;
  std::size_t field_index = 0;
  std::size_t next_selected = 0;        // position in selected_
  std::uint64_t quotes_before = 0;      // quotes between the record start and the current block
  std::uint64_t field_quotes_at = 0;    // quotes before the current field
  std::uint64_t newlines_inside = 0;    // line breaks inside quotes, for line counting
  std::uint64_t inside_carry = 0;       // all ones when the previous block ended inside quotes
  auto emit = [&](std::size_t end, std::uint64_t quotes_at, bool line_end) {
    if (all) {
      rec.fields.push_back(field_text(field_begin, end, quotes_at - field_quotes_at, line_end));
    } else {
      if (rec.fields.size() <= field_index) rec.fields.resize(field_index + 1);
      if (next_selected < selected_.size() && selected_[next_selected] == field_index) {
        rec.fields[field_index] = field_text(field_begin, end, quotes_at - field_quotes_at, line_end);
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
    BlockMasks m = classify(block);
    const std::uint64_t in_range = bits_below(static_cast<unsigned>(valid));
    m.quote &= in_range;
    const std::uint64_t inside = prefix_xor(m.quote) ^ inside_carry;
    inside_carry = static_cast<std::uint64_t>(static_cast<std::int64_t>(inside) >> 63);
    std::uint64_t structural = (m.comma | m.newline) & ~inside & in_range;
    newlines_inside += static_cast<std::uint64_t>(std::popcount(m.newline & inside & in_range));
    if (!all && !(structural & m.newline) && structural) {
      // No line end here: skip the block whole unless a selected field ends in it.
      const auto fields_here = static_cast<std::size_t>(std::popcount(structural));
      const std::size_t want = next_selected < selected_.size() ? selected_[next_selected] : SIZE_MAX;
      if (field_index + fields_here <= want) {
        const unsigned last = 63u - static_cast<unsigned>(std::countl_zero(structural));
        field_index += fields_here;
        field_begin = base + last + 1;
        field_quotes_at = quotes_before + static_cast<std::uint64_t>(std::popcount(m.quote & bits_below(last)));
        quotes_before += static_cast<std::uint64_t>(std::popcount(m.quote));
        continue;
      }
    }
    while (structural) {
      const unsigned bit = static_cast<unsigned>(std::countr_zero(structural));
      structural &= structural - 1;
      const std::size_t end = base + bit;
      const std::uint64_t quotes_at =
          quotes_before + static_cast<std::uint64_t>(std::popcount(m.quote & bits_below(bit)));
      const bool line_end = data_[end] == '\n';
      emit(end, quotes_at, line_end);
      if (line_end) {
        const std::uint64_t later_inside = static_cast<std::uint64_t>(
            std::popcount(m.newline & inside & in_range & ~bits_below(bit)));
        line_ += 1 + static_cast<std::int64_t>(newlines_inside - later_inside);
        pos_ = end + 1;
        if (!all) rec.fields.resize(field_index);
        return true;
      }
      field_begin = end + 1;
      field_quotes_at = quotes_at;
    }
    quotes_before += static_cast<std::uint64_t>(std::popcount(m.quote));
  }
  // The data ended without a line break: the last field runs to the end.
  emit(size, quotes_before, false);
  if (!all) rec.fields.resize(field_index);
  rec.closed = inside_carry == 0;
  line_ += static_cast<std::int64_t>(newlines_inside);
  pos_ = size;
  return true;
}

}  // namespace kernlens::ingest

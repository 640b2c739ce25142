#include "kernlens/ingest/json/trace_tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "kernlens/common/ascii.h"
#include "kernlens/common/bits.h"
#include "kernlens/common/simd.h"

namespace kernlens::ingest {
namespace {

constexpr std::size_t npos = std::string_view::npos;

// Where the bytes that shape a JSON value sit in 64 bytes: one bit per byte.
struct BlockMasks {
  std::uint64_t quote = 0, backslash = 0, open = 0, close = 0, newline = 0;
};

// SSE2 (every x86-64) compares 16 bytes at a time; plain C++ elsewhere. '{' and '[' differ
// only in bit 0x20, as do '}' and ']': one compare of (byte | 0x20) finds both.
struct BaselineIsa {
  static BlockMasks classify(const char* p) {
    BlockMasks m;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), newline = _mm_set1_epi8('\n');
    const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}'), case_bit = _mm_set1_epi8(0x20);
    for (int i = 0; i < 4; ++i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      const __m128i folded = _mm_or_si128(v, case_bit);
      auto bits = [&](__m128i eq) {
        return std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(eq))} << (16 * i);
      };
      m.quote |= bits(_mm_cmpeq_epi8(v, quote));
      m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
      m.newline |= bits(_mm_cmpeq_epi8(v, newline));
      m.open |= bits(_mm_cmpeq_epi8(folded, open));
      m.close |= bits(_mm_cmpeq_epi8(folded, close));
    }
#else
    for (int i = 0; i < 64; ++i) {
      const std::uint64_t bit = std::uint64_t{1} << i;
      const char folded = static_cast<char>(p[i] | 0x20);
      if (p[i] == '"') m.quote |= bit;
      if (p[i] == '\\') m.backslash |= bit;
      if (p[i] == '\n') m.newline |= bit;
      if (folded == '{') m.open |= bit;
      if (folded == '}') m.close |= bit;
    }
#endif
    return m;
  }
  static std::uint64_t prefix_xor(std::uint64_t x) { return kernlens::prefix_xor(x); }
};

#if KERNLENS_HAVE_X86_DISPATCH
// AVX2 compares 32 bytes at a time, and a carry-less multiply makes the prefix XOR: value_end
// was a seventh of reading a trace with SSE2.
struct Avx2Isa {
  static inline KERNLENS_AVX2_TARGET BlockMasks classify(const char* p) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    const __m256i case_bit = _mm256_set1_epi8(0x20);
    const __m256i lo_folded = _mm256_or_si256(lo, case_bit), hi_folded = _mm256_or_si256(hi, case_bit);
    return BlockMasks{avx2_equal_mask(lo, hi, '"'), avx2_equal_mask(lo, hi, '\\'),
                      avx2_equal_mask(lo_folded, hi_folded, '{'), avx2_equal_mask(lo_folded, hi_folded, '}'),
                      avx2_equal_mask(lo, hi, '\n')};
  }
  static inline KERNLENS_AVX2_TARGET std::uint64_t prefix_xor(std::uint64_t x) { return prefix_xor_clmul(x); }
};

// AVX-512BW compares all 64 bytes at once, straight into bit masks (the AVX2 classify is two
// loads, ten compares and ten mask moves a block).
struct Avx512Isa {
  static inline KERNLENS_AVX512_TARGET BlockMasks classify(const char* p) {
    const __m512i v = _mm512_loadu_si512(p);
    const __m512i folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    return BlockMasks{_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"')), _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\')),
                      _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8('{')),
                      _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8('}')),
                      _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\n'))};
  }
  static inline KERNLENS_AVX512_TARGET std::uint64_t prefix_xor(std::uint64_t x) { return prefix_xor_clmul(x); }
};
#endif

// The state of a compound value's scan between blocks.
struct ScanState {
  std::int64_t depth = 0;
  std::int64_t newlines = 0;
  bool in_string = false;
  bool escape_next = false;  // the block before ended in a backslash inside a string
};

// One block with a backslash in it, byte by byte: escapes are rare in traces. The end of
// the value within the block (one past it), or npos.
std::size_t scan_block_bytes(const char* p, std::size_t len, ScanState& s) {
  for (std::size_t i = 0; i < len; ++i) {
    const char c = p[i];
    s.newlines += c == '\n';
    if (s.in_string) {
      if (s.escape_next) {
        s.escape_next = false;
      } else if (c == '\\') {
        s.escape_next = true;
      } else if (c == '"') {
        s.in_string = false;
      }
      continue;
    }
    const char folded = static_cast<char>(c | 0x20);
    if (c == '"') {
      s.in_string = true;
    } else if (folded == '{') {
      ++s.depth;
    } else if (folded == '}' && --s.depth == 0) {
      return i + 1;
    }
  }
  return npos;
}

// One block without backslashes: quotes pair up, so a prefix XOR marks what is inside
// strings, and only the brackets outside them are visited.
template <class Isa>
inline std::size_t scan_block(const BlockMasks& m, ScanState& s) {
  const std::uint64_t inside = Isa::prefix_xor(m.quote) ^ (s.in_string ? ~std::uint64_t{0} : 0);
  std::uint64_t brackets = (m.open | m.close) & ~inside;
  while (brackets) {
    const auto i = static_cast<unsigned>(std::countr_zero(brackets));
    s.depth += (m.open >> i & 1) ? 1 : -1;
    if (s.depth == 0) {
      s.newlines += std::popcount(m.newline & bits_below(i + 1));
      return i + 1;
    }
    brackets &= brackets - 1;
  }
  s.in_string = inside >> 63;
  s.newlines += std::popcount(m.newline);
  return npos;
}

// The end (one past it) of the object or array at data[at], or npos when data[0, n) cuts it;
// `lines` grows by the line breaks inside it.
template <class Isa>
inline std::size_t compound_end(const char* data, std::size_t n, std::size_t at, std::int64_t& lines) {
  ScanState state;
  char tail[64];
  for (std::size_t block = at; block < n; block += 64) {
    const std::size_t len = std::min<std::size_t>(64, n - block);
    const char* p = data + block;
    if (len < 64) {  // the window's last bytes, padded with spaces (which change nothing)
      std::memset(tail, ' ', sizeof(tail));
      std::memcpy(tail, p, len);
      p = tail;
    }
    const BlockMasks m = Isa::classify(p);
    const std::size_t end =
        m.backslash || state.escape_next ? scan_block_bytes(p, len, state) : scan_block<Isa>(m, state);
    if (end != npos) {
      lines += state.newlines;
      return block + end;
    }
  }
  return npos;
}

#if KERNLENS_HAVE_X86_DISPATCH
KERNLENS_AVX2_TARGET __attribute__((flatten)) std::size_t compound_end_avx2(const char* data, std::size_t n,
                                                                            std::size_t at, std::int64_t& lines) {
  return compound_end<Avx2Isa>(data, n, at, lines);
}

KERNLENS_AVX512_TARGET __attribute__((flatten)) std::size_t compound_end_avx512(const char* data, std::size_t n,
                                                                                std::size_t at, std::int64_t& lines) {
  return compound_end<Avx512Isa>(data, n, at, lines);
}
#endif

std::string describe(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof(buf), "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

}  // namespace

void TraceTokenizer::set_window(std::string_view window, bool last) {
  base_ += pos_;
  window_ = window;
  last_ = last;
  pos_ = 0;
}

bool TraceTokenizer::skip_space() {
  while (pos_ < window_.size() && is_json_space(window_[pos_])) {
    if (window_[pos_] == '\n') ++line_;
    ++pos_;
  }
  return pos_ < window_.size();
}

std::size_t TraceTokenizer::string_end(std::size_t at) const {
  while (true) {
    const void* q = std::memchr(window_.data() + at, '"', window_.size() - at);
    if (!q) return npos;
    const auto quote = static_cast<std::size_t>(static_cast<const char*>(q) - window_.data());
    std::size_t backslashes = 0;  // an odd run of them escapes the quote
    while (quote - backslashes > at && window_[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote + 1;
    at = quote + 1;
  }
}

std::size_t TraceTokenizer::value_end(std::size_t at, std::int64_t& lines) const {
  const char first = window_[at];
  if (first == '"') return string_end(at + 1);
  const std::size_t n = window_.size();
  if (first != '{' && first != '[') {  // a number, true, false or null: checked when decoded
    std::size_t i = at;
    while (i < n && !is_json_space(window_[i]) && window_[i] != ',' && window_[i] != '}' && window_[i] != ']') ++i;
    return i < n || last_ ? i : npos;
  }
#if KERNLENS_HAVE_X86_DISPATCH
  if (cpu_has_avx512()) return compound_end_avx512(window_.data(), n, at, lines);
  if (cpu_has_avx2()) return compound_end_avx2(window_.data(), n, at, lines);
#endif
  return compound_end<BaselineIsa>(window_.data(), n, at, lines);
}

Error TraceTokenizer::error_at(std::size_t at, std::int64_t line, const std::string& message) const {
  return make_error(path_, line, message + " (byte " + std::to_string(base_ + at) + ")");
}

Error TraceTokenizer::error_here(const std::string& message) const { return error_at(pos_, line_, message); }

Result<std::optional<TracePart>> TraceTokenizer::cut(const char* what) const {
  if (!last_) return std::optional<TracePart>();
  return error_here(std::string("the file ends inside ") + what + ": the trace is truncated");
}

Result<char> TraceTokenizer::punctuation(char a, char b, const char* after) {
  const char c = window_[pos_];
  if (c != a && c != b) {
    // fmt, not string operator+: GCC 12 warns falsely (-Warray-bounds) on that chain.
    return error_here(fmt::format("expected '{}' or '{}' after {}, found {}", a, b, after, describe(c)));
  }
  ++pos_;
  return c;
}

Result<std::optional<TracePart>> TraceTokenizer::member() {
  if (window_[pos_] != '"') {
    return error_here("expected a member name in quotes, found " + describe(window_[pos_]));
  }
  const std::size_t key_end = string_end(pos_ + 1);
  if (key_end == npos) return cut("a member name");
  std::int64_t lines = 0;
  auto skip = [&](std::size_t at) {
    for (; at < window_.size() && is_json_space(window_[at]); ++at) lines += window_[at] == '\n';
    return at;
  };
  std::size_t at = skip(key_end);
  if (at == window_.size()) return cut("a member");
  if (window_[at] != ':') {
    return error_at(at, line_ + lines, "expected ':' after a member name, found " + describe(window_[at]));
  }
  at = skip(at + 1);
  if (at == window_.size()) return cut("a member");
  const std::string_view key = window_.substr(pos_ + 1, key_end - pos_ - 2);
  const std::int64_t value_line = line_ + lines;
  if (key == "traceEvents" && window_[at] == '[') {
    pos_ = at + 1;
    line_ = value_line;
    saw_events_ = true;
    state_ = State::kFirstEvent;
    return std::optional<TracePart>();  // the caller goes on with the events
  }
  const std::size_t end = value_end(at, lines);
  if (end == npos) return cut("a member");
  if (end == at) {
    return error_at(at, value_line, "expected a value, found " + describe(window_[at]));
  }
  TracePart part{TracePart::Kind::kMember, key, window_.substr(at, end - at), base_ + at, value_line};
  pos_ = end;
  line_ += lines;
  state_ = State::kAfterMember;
  return std::optional<TracePart>(part);
}

Result<std::optional<TracePart>> TraceTokenizer::event() {
  if (window_[pos_] != '{') {
    return error_here("expected an event (a JSON object) in \"traceEvents\", found " + describe(window_[pos_]));
  }
  std::int64_t lines = 0;
  const std::size_t end = value_end(pos_, lines);
  if (end == npos) return cut("an event");
  TracePart part{TracePart::Kind::kEvent, {}, window_.substr(pos_, end - pos_), offset(), line_};
  pos_ = end;
  line_ += lines;
  state_ = State::kAfterEvent;
  return std::optional<TracePart>(part);
}

bool TraceTokenizer::in_events() const {
  return state_ == State::kFirstEvent || state_ == State::kEvent || state_ == State::kAfterEvent;
}

void TraceTokenizer::resume_event_at(std::size_t pos) {
  pos_ = pos;
  line_ = 1;
  state_ = State::kEvent;
}

void TraceTokenizer::stop_at(std::size_t limit, bool array_end) {
  limit_ = limit;
  stop_at_array_end_ = array_end;
}

bool TraceTokenizer::stopped_at(std::size_t limit) const { return state_ == State::kEvent && pos_ == limit; }

TraceEventCuts::TraceEventCuts(std::string_view text, std::size_t parts, std::size_t min_bytes)
    : text_(text), parts_(parts), min_bytes_(min_bytes), target_(std::max(min_bytes, text.size() / std::max<std::size_t>(1, parts))) {
  if (parts < 2 || text.size() < 2 * min_bytes) k_ = parts_ = 0;  // one part
}

std::size_t TraceEventCuts::next() {
  if (k_ >= parts_) return npos;
  auto after_space = [&](std::size_t at) {
    while (at < text_.size() && is_json_space(text_[at])) ++at;
    return at;
  };
  std::size_t at = std::max(from_ + min_bytes_, k_ * target_);
  std::size_t cut = npos;
  while (at + min_bytes_ <= text_.size()) {
    const std::size_t close = text_.find('}', at);
    if (close == npos) break;
    const std::size_t comma = after_space(close + 1);
    const std::size_t open = comma < text_.size() && text_[comma] == ',' ? after_space(comma + 1) : npos;
    if (open != npos && open < text_.size() && text_[open] == '{') {
      cut = open;
      break;
    }
    at = close + 1;
  }
  if (cut == npos || cut + min_bytes_ > text_.size()) {
    k_ = parts_;  // no more
    return npos;
  }
  ++k_;
  from_ = cut;
  return cut;
}

Result<std::optional<TracePart>> TraceTokenizer::next() {
  while (true) {
    if (!skip_space()) {
      if (!last_ || state_ == State::kDone) return std::optional<TracePart>();
      return error_here(state_ == State::kStart ? "the file holds no JSON document"
                                                : "the file ends before the JSON document does: the trace is truncated");
    }
    switch (state_) {
      case State::kStart:
        if (offset() == 0 && window_[0] == '\xEF') {  // a UTF-8 byte order mark, perhaps
          constexpr std::string_view kBom = "\xEF\xBB\xBF";
          if (window_.size() < kBom.size() && !last_) return std::optional<TracePart>();
          if (window_.substr(0, kBom.size()) == kBom) {
            pos_ = kBom.size();
            break;
          }
        }
        if (window_[pos_] != '{') {
          return error_here("expected a JSON object ('{') holding \"traceEvents\", found " + describe(window_[pos_]));
        }
        ++pos_;
        state_ = State::kFirstKey;
        break;
      case State::kFirstKey:
        if (window_[pos_] == '}') {
          ++pos_;
          state_ = State::kDone;
          break;
        }
        [[fallthrough]];
      case State::kKey: {
        const State before = state_;
        auto part = member();
        if (!part || *part || state_ == before) return part;  // a part, an error, or a cut
        break;                                                 // "traceEvents" opened
      }
      case State::kAfterMember: {
        auto c = punctuation(',', '}', "a member");
        if (!c) return c.error();
        state_ = *c == ',' ? State::kKey : State::kDone;
        break;
      }
      case State::kFirstEvent:
        if (window_[pos_] == ']') {
          ++pos_;
          state_ = State::kAfterMember;
          if (stop_at_array_end_) return std::optional<TracePart>();
          break;
        }
        [[fallthrough]];
      case State::kEvent:
        if (pos_ >= limit_) return std::optional<TracePart>();
        return event();
      case State::kAfterEvent: {
        auto c = punctuation(',', ']', "an event");
        if (!c) return c.error();
        state_ = *c == ',' ? State::kEvent : State::kAfterMember;
        if (state_ == State::kAfterMember && stop_at_array_end_) return std::optional<TracePart>();
        break;
      }
      case State::kDone:
        return error_here("more data after the end of the JSON document: " + describe(window_[pos_]));
    }
  }
}

}  // namespace kernlens::ingest

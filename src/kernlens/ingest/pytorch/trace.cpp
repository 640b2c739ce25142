#include "kernlens/ingest/pytorch/trace.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "kernlens/common/ascii.h"
#include "kernlens/common/chunk_reader.h"
#include "kernlens/common/file.h"
#include "kernlens/common/gzip.h"
#include "kernlens/common/memory.h"
#include "kernlens/common/numeric.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/simd.h"
#include "kernlens/common/step_times.h"
#include "kernlens/ingest/json/trace_tokenizer.h"
#include "kernlens/ingest/part_merge.h"
#include "kernlens/ingest/pytorch/stages.h"

namespace kernlens::ingest {

namespace od = simdjson::ondemand;

namespace {


std::string_view trim_end(std::string_view s) {
  while (!s.empty() && is_json_space(s.back())) s.remove_suffix(1);
  return s;
}

// Digits [at, end) of `s`, at least one; their end, or npos.
std::size_t digits_end(std::string_view s, std::size_t at) {
  std::size_t i = at;
  while (i < s.size() && is_ascii_digit(s[i])) ++i;
  return i > at ? i : std::string_view::npos;
}

std::optional<std::int64_t> exponent_microseconds_to_ns(std::string_view text) {
  double us = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), us);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return exact_integer<std::int64_t>(std::round(us * 1000.0));
}

}  // namespace

namespace {

// microseconds_to_ns for every form: exponents, long numbers, and what is not a number.
std::optional<std::int64_t> any_microseconds_to_ns(std::string_view text) {
  text = trim_end(text);
  // A loop, not find_first_of("eE"): libstdc++ calls memchr once a byte for that (7% of
  // reading a trace, every timestamp passing here).
  if (std::any_of(text.begin(), text.end(), [](char c) { return (c | 0x20) == 'e'; })) {
    return exponent_microseconds_to_ns(text);
  }
  const bool negative = !text.empty() && text[0] == '-';
  const std::size_t whole_at = negative ? 1 : 0;
  const std::size_t whole_end = digits_end(text, whole_at);
  if (whole_end == std::string_view::npos) return std::nullopt;
  std::string_view fraction;
  if (whole_end < text.size()) {
    if (text[whole_end] != '.' || digits_end(text, whole_end + 1) != text.size()) return std::nullopt;
    fraction = text.substr(whole_end + 1);
  }
  constexpr std::int64_t kMaxWhole = std::numeric_limits<std::int64_t>::max() / 1000 - 1;
  std::int64_t whole = 0;
  for (std::size_t i = whole_at; i < whole_end; ++i) {
    whole = whole * 10 + (text[i] - '0');
    if (whole > kMaxWhole) return std::nullopt;
  }
  std::int64_t ns = whole * 1000;
  for (std::size_t i = 0, scale = 100; i < 3; ++i, scale /= 10) {
    if (i < fraction.size()) ns += (fraction[i] - '0') * static_cast<std::int64_t>(scale);
  }
  if (fraction.size() > 3 && fraction[3] >= '5') ++ns;  // half a nanosecond or more
  return negative ? -ns : ns;
}

// The value of the 8 bytes at `p` when all are digits (SWAR, as in simdjson and fast_float:
// a timestamp's 13 whole digits cost 12 instructions each one at a time).
std::optional<std::uint32_t> eight_digits(const char* p) {
  if constexpr (std::endian::native != std::endian::little) return std::nullopt;  // the digit loop then
  std::uint64_t v = 0;
  std::memcpy(&v, p, 8);
  if (((v + 0x4646464646464646) | (v - 0x3030303030303030)) & 0x8080808080808080) return std::nullopt;
  v -= 0x3030303030303030;
  v = v * 10 + (v >> 8);  // pairs of digits
  constexpr std::uint64_t kMask = 0x000000FF000000FF, kMul1 = 100 + (1000000ULL << 32), kMul2 = 1 + (10000ULL << 32);
  return static_cast<std::uint32_t>((((v & kMask) * kMul1) + (((v >> 16) & kMask) * kMul2)) >> 32);
}

}  // namespace

std::optional<std::int64_t> microseconds_to_ns(std::string_view text) {
  // The form every timestamp of a trace has, -?D{1,15}(.D+)?, in one pass (the general path
  // made five over each "ts" and "dur": 4% of reading a trace); anything else goes there.
  const char* p = text.data();
  const char* end = p + text.size();
  while (end > p && is_json_space(end[-1])) --end;
  const bool negative = p < end && *p == '-';
  p += negative ? 1 : 0;
  const char* const digits = p;
  std::int64_t whole = 0;  // 15 digits cannot overflow, nor reach the general path's limit
  if (end - p >= 8) {
    if (auto eight = eight_digits(p)) {
      whole = static_cast<std::int64_t>(*eight);
      p += 8;
    }
  }
  for (; p < end && p - digits < 15 && is_ascii_digit(*p); ++p) whole = whole * 10 + (*p - '0');
  if (p == digits) return any_microseconds_to_ns(text);
  std::int64_t ns = whole * 1000;
  if (p < end) {
    if (*p != '.') return any_microseconds_to_ns(text);
    const char* const fraction = ++p;
    while (p < end && is_ascii_digit(*p)) ++p;
    if (p != end || p == fraction) return any_microseconds_to_ns(text);
    std::int64_t scale = 100;
    for (const char* f = fraction; f < end && scale > 0; ++f, scale /= 10) ns += (*f - '0') * scale;
    if (end - fraction > 3 && fraction[3] >= '5') ++ns;  // half a nanosecond or more
  }
  return negative ? -ns : ns;
}

namespace {

// The event categories the reader uses; all others are skipped.
enum class Category : std::uint8_t { kOther, kKernel, kMemcpy, kMemset, kCudaCall, kCpuRange, kGpuRange, kFlow };

constexpr std::array<std::pair<std::string_view, Category>, 8> kCategories = {{
    {"kernel", Category::kKernel},
    {"gpu_memcpy", Category::kMemcpy},
    {"gpu_memset", Category::kMemset},
    {"cuda_runtime", Category::kCudaCall},
    {"cuda_driver", Category::kCudaCall},
    {"user_annotation", Category::kCpuRange},
    {"gpu_user_annotation", Category::kGpuRange},
    {"ac2g", Category::kFlow},  // CPU-to-GPU flow arrows: "s" on the CPU call, "f" on the GPU
}};

enum class EventKey : std::uint8_t { kPh, kCat, kName, kPid, kTid, kTs, kDur, kId, kArgs };

constexpr std::array<std::pair<std::string_view, EventKey>, 9> kEventKeys = {{
    {"ph", EventKey::kPh}, {"cat", EventKey::kCat}, {"name", EventKey::kName},
    {"pid", EventKey::kPid}, {"tid", EventKey::kTid}, {"ts", EventKey::kTs},
    {"dur", EventKey::kDur}, {"id", EventKey::kId}, {"args", EventKey::kArgs},
}};

enum class ArgKey : std::uint8_t {
  kDevice, kStream, kContext, kCorrelation, kRegisters, kSharedMemory, kBytes, kGrid, kBlock, kExternalId, kName,
  kFullName, kMangledName, kLaidOut, kMessageElements, kDtype
};

// Kineto's names. "shared memory" is static + dynamic shared memory per block. "full name" and
// "mangled name" are kernlens's own (kernlens export names a kernel event by its base name and
// keeps the kernel's name in them, so that reading the export back finds the same kernels), and
// so is "laid out": an event of a launch that had no start time, which the export placed end to
// end with the others (it reads back without a start time, so no wall time is made up).
// "In msg nelems" and "dtype" are PyTorch's on a collective's kernel (NCCL backend): the
// message size is their product.
constexpr std::array<std::pair<std::string_view, ArgKey>, 16> kArgKeys = {{
    {"device", ArgKey::kDevice}, {"stream", ArgKey::kStream}, {"context", ArgKey::kContext},
    {"correlation", ArgKey::kCorrelation}, {"registers per thread", ArgKey::kRegisters},
    {"shared memory", ArgKey::kSharedMemory}, {"bytes", ArgKey::kBytes}, {"grid", ArgKey::kGrid},
    {"block", ArgKey::kBlock}, {"External id", ArgKey::kExternalId}, {"name", ArgKey::kName},
    {"full name", ArgKey::kFullName}, {"mangled name", ArgKey::kMangledName}, {"laid out", ArgKey::kLaidOut},
    {"In msg nelems", ArgKey::kMessageElements}, {"dtype", ArgKey::kDtype},
}};

// Bytes per element of the dtypes PyTorch writes in a collective's args (c10's ScalarType
// names); an unknown dtype leaves the message size unknown.
constexpr std::array<std::pair<std::string_view, std::int64_t>, 13> kDtypeBytes = {{
    {"Float", 4}, {"Double", 8}, {"Half", 2}, {"BFloat16", 2}, {"Int", 4}, {"Long", 8}, {"Short", 2},
    {"Char", 1}, {"Byte", 1}, {"Bool", 1}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}, {"ComplexFloat", 8},
}};

enum class DistributedKey : std::uint8_t { kRank, kWorldSize, kBackend };

constexpr std::array<std::pair<std::string_view, DistributedKey>, 3> kDistributedKeys = {{
    {"rank", DistributedKey::kRank}, {"world_size", DistributedKey::kWorldSize}, {"backend", DistributedKey::kBackend},
}};

enum class DeviceKey : std::uint8_t {
  kId, kName, kMajor, kMinor, kSmCount, kMemory, kThreadsPerSm, kSharedPerSm
};

constexpr std::array<std::pair<std::string_view, DeviceKey>, 8> kDeviceKeys = {{
    {"id", DeviceKey::kId}, {"name", DeviceKey::kName}, {"computeMajor", DeviceKey::kMajor},
    {"computeMinor", DeviceKey::kMinor}, {"numSms", DeviceKey::kSmCount},
    {"totalGlobalMem", DeviceKey::kMemory}, {"maxThreadsPerMultiprocessor", DeviceKey::kThreadsPerSm},
    {"sharedMemPerMultiprocessor", DeviceKey::kSharedPerSm},
}};

// Whether `text` starts with `prefix`, compared a byte at a time and stopping at the first
// difference: for the few short names of a table a loop costs less than calls to memcmp.
bool starts_with_bytes(const char* text, std::string_view prefix) {
  for (char c : prefix) {
    if (*text++ != c) return false;
  }
  return true;
}

// Whether the object key at `raw` (just past its opening quote) is `name`: its bytes, 8 at a
// time, then the closing quote. It reads name.size() + 1 bytes from `raw`, past a shorter key's
// end, which the document holds or its padding (iterate() parses only padded text, and no
// name of the tables is longer than simdjson's 64 bytes of padding).
inline bool key_is(const char* raw, std::string_view name) {
  // Words that overlap at the end, not a byte loop for the last few.
  auto same = [&](std::size_t at, auto word) {
    decltype(word) a = 0, b = 0;
    std::memcpy(&a, raw + at, sizeof(a));
    std::memcpy(&b, name.data() + at, sizeof(b));
    return a == b;
  };
  const std::size_t n = name.size();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      if (!same(i, std::uint64_t{})) return false;
    }
    if (!same(n - 8, std::uint64_t{})) return false;
  } else if (n >= 4) {
    if (!same(0, std::uint32_t{}) || !same(n - 4, std::uint32_t{})) return false;
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      if (raw[i] != name[i]) return false;
    }
  }
  return raw[n] == '"';
}

// For a table of keys: which of its entries (a bit each) begin with each byte.
template <const auto& kTable>
constexpr auto kEntriesByFirstByte = [] {
  static_assert(kTable.size() <= 32);
  for (const auto& entry : kTable) {
    if (entry.first.empty() || entry.first.size() >= simdjson::SIMDJSON_PADDING) throw "key_is reads past the padding";
  }
  std::array<std::uint32_t, 256> masks{};
  for (std::size_t i = 0; i < kTable.size(); ++i) masks[static_cast<unsigned char>(kTable[i].first[0])] |= 1u << i;
  return masks;
}();

template <const auto& kTable>
auto find_key(od::raw_json_string key) -> std::optional<std::decay_t<decltype(kTable[0].second)>> {
  // Only the entries that begin with the key's first byte (a field's key was compared with
  // every entry: a ninth of reading a trace), not with simdjson's compare, which calls memcmp.
  const char* raw = key.raw();
  for (std::uint32_t m = kEntriesByFirstByte<kTable>[static_cast<unsigned char>(raw[0])]; m; m &= m - 1) {
    const auto& [name, k] = kTable[static_cast<std::size_t>(std::countr_zero(m))];
    if (key_is(raw, name)) return k;
  }
  return std::nullopt;
}

template <class Value, std::size_t N>
std::optional<Value> lookup(std::string_view name, const std::array<std::pair<std::string_view, Value>, N>& table) {
  for (const auto& [n, v] : table) {
    if (n == name) return v;
  }
  return std::nullopt;
}

// A value's integer, or nothing when it is not one that fits (a string, a fraction).
std::optional<std::int64_t> integer(od::value& v) {
  std::int64_t i = 0;
  if (v.get_int64().get(i) != simdjson::SUCCESS) return std::nullopt;
  return i;
}

// A JSON string's text: a view of the document, or of the parser's buffer when it had
// escapes to undo (valid until the next document). Nothing when it is not a string.
std::optional<std::string_view> text(od::value& v) {
  std::string_view token = trim_end(v.raw_json_token());
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') return std::nullopt;
  if (token.find('\\') == std::string_view::npos) return token.substr(1, token.size() - 2);
  std::string_view unescaped;
  if (v.get_string().get(unescaped) != simdjson::SUCCESS) return std::nullopt;
  return unescaped;
}

// "grid": [x, y, z]; unknown (all 0) unless three positive 32-bit integers.
model::Dim3 dim3(od::value& v) {
  od::array array;
  if (v.get_array().get(array) != simdjson::SUCCESS) return {};
  std::array<std::uint32_t, 3> xyz{};
  std::size_t n = 0;
  for (auto element : array) {
    std::uint64_t u = 0;
    if (n == 3 || element.get_uint64().get(u) != simdjson::SUCCESS || u == 0 || u > UINT32_MAX) return {};
    xyz[n++] = static_cast<std::uint32_t>(u);
  }
  return n == 3 ? model::Dim3{xyz[0], xyz[1], xyz[2]} : model::Dim3{};
}

struct EventArgs {
  std::optional<std::int64_t> device, stream, context, correlation, registers, shared_memory, bytes, external_id;
  std::optional<std::int64_t> message_elements;
  std::string_view dtype;
  model::Dim3 grid, block;
  std::string_view name;  // metadata events: the process's name
  std::string kernel_name;  // "mangled name", else "full name" (kernlens export), else empty
  bool laid_out = false;    // "laid out": true (kernlens export): its time is not real
};

// The fields of one event, kept as written until the event's kind says which are needed.
struct Event {
  std::string_view ph, cat, pid, tid, ts, dur, id;  // raw JSON tokens
  std::string_view name;                              // the text
  bool has_name = false;
  Category category = Category::kOther;
  bool has_cat = false;
  EventArgs args;
};

// Whether an event's args are read: for the categories used, and while the category is not
// yet known (a writer may put "args" before "cat").
bool wants_args(const Event& e) { return !e.has_cat || e.category != Category::kOther || e.ph == "\"M\""; }

// Whether `text` holds the key "ph" (or, with `cat_too`, "cat"), quotes included. Quotes are
// frequent in JSON, so a quote followed by 'p' or 'c' is looked for, 16 bytes at a time (SSE2,
// every x86-64).
bool names_ph_or_cat_at(std::string_view text, std::size_t i, bool cat_too) {
  const std::string_view s = text.substr(i);
  return s.starts_with("\"ph\"") || (cat_too && s.starts_with("\"cat\""));
}

#if KERNLENS_HAVE_X86_DISPATCH
// The same 32 bytes at a time (AVX2): where it stopped looking (found: npos).
KERNLENS_AVX2_TARGET std::size_t names_ph_or_cat_avx2(std::string_view text, bool cat_too) {
  const __m256i quote = _mm256_set1_epi8('"'), p = _mm256_set1_epi8('p'), c = _mm256_set1_epi8('c');
  std::size_t i = 0;
  for (; i + 33 <= text.size(); i += 32) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(text.data() + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(text.data() + i + 1));
    const __m256i hit =
        _mm256_and_si256(_mm256_cmpeq_epi8(a, quote), _mm256_or_si256(_mm256_cmpeq_epi8(b, p), _mm256_cmpeq_epi8(b, c)));
    for (auto mask = static_cast<std::uint32_t>(_mm256_movemask_epi8(hit)); mask; mask &= mask - 1) {
      if (names_ph_or_cat_at(text, i + static_cast<std::size_t>(std::countr_zero(mask)), cat_too)) {
        return std::string_view::npos;
      }
    }
  }
  return i;
}
#endif

bool names_ph_or_cat(std::string_view text, bool cat_too) {
  auto at = [&](std::size_t i) { return names_ph_or_cat_at(text, i, cat_too); };
  std::size_t i = 0;
#if KERNLENS_HAVE_X86_DISPATCH
  if (cpu_has_avx2()) {  // the rest of every CPU operator's event: 5% of reading a trace with SSE2
    i = names_ph_or_cat_avx2(text, cat_too);
    if (i == std::string_view::npos) return true;
  }
#endif
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), p = _mm_set1_epi8('p'), c = _mm_set1_epi8('c');
  for (; i + 17 <= text.size(); i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i + 1));
    const __m128i hit = _mm_and_si128(_mm_cmpeq_epi8(a, quote), _mm_or_si128(_mm_cmpeq_epi8(b, p), _mm_cmpeq_epi8(b, c)));
    for (auto mask = static_cast<unsigned>(_mm_movemask_epi8(hit)); mask; mask &= mask - 1) {
      if (at(i + static_cast<std::size_t>(std::countr_zero(mask)))) return true;
    }
  }
#endif
  for (; i < text.size(); ++i) {
    if (text[i] == '"' && at(i)) return true;
  }
  return false;
}

// Whether an event is skipped unread, as Perfetto's tokenizer skips what it does not use (the
// tokenizer still checks that its strings and brackets balance): use_event would keep nothing
// of it, by what its first members say and no later member overrides.
//  - {"ph": "X", "cat": "C", ...} (as Kineto writes every complete event) with C a category the
//    reader does not use, and no later "ph" or "cat": CPU operators, half of a trace's bytes,
//    whose decoding was a third of reading it;
//  - {"ph": "P", ...} with P other than "X", "s" and "M", and no later "ph": the GPU end ("f")
//    of every CPU-to-GPU flow, a seventh of a trace's events.
bool skipped_unread(std::string_view event) {
  using namespace std::string_view_literals;  // sized at compile time: no strlen an event
  std::size_t at = 1;
  auto expect = [&](std::string_view text) {
    while (at < event.size() && is_json_space(event[at])) ++at;
    if (event.size() - at < text.size() || !starts_with_bytes(event.data() + at, text)) return false;
    at += text.size();
    return true;
  };
  // The string value of the member whose key was just expected; nothing when it has escapes.
  auto string_value = [&]() -> std::optional<std::string_view> {
    if (!expect(":"sv) || !expect("\""sv)) return std::nullopt;
    const std::size_t end = event.find('"', at);
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view value = event.substr(at, end - at);
    at = end + 1;
    if (value.find('\\') != std::string_view::npos) return std::nullopt;
    return value;
  };
  if (!expect("\"ph\""sv)) return false;
  const auto ph = string_value();
  if (!ph) return false;
  if (*ph != "X") return *ph != "s" && *ph != "M" && !names_ph_or_cat(event.substr(at), false);
  if (!expect(","sv) || !expect("\"cat\""sv)) return false;
  const auto cat = string_value();
  if (!cat || lookup(*cat, kCategories)) return false;
  return !names_ph_or_cat(event.substr(at - 1), true);
}

// "ProfilerStep#12" -> "ProfilerStep": the steps of a schedule are instances of one stage.
std::string stage_name(std::string_view name) {
  constexpr std::string_view kStep = "ProfilerStep#";
  if (name.substr(0, kStep.size()) == kStep && name.size() > kStep.size() &&
      digits_end(name, kStep.size()) == name.size()) {
    return "ProfilerStep";
  }
  return std::string(name);
}

// pid/tid values that are strings ("Spans") get ids from here on, apart from any number.
constexpr std::int64_t kTextIds = std::int64_t{1} << 62;

// A GPU event takes a few hundred bytes of JSON at the least (a memset's is ~350); a CUDA call
// ~170, the flow that stands in for a missing one ~100.
constexpr std::uint64_t kMinBytesPerGpuEvent = 256;
constexpr std::uint64_t kMinBytesPerCall = 96;

struct EventPart;

// A window's events are cut into at least this many parts a thread, which the threads take as
// they come free (run_ordered_parts): events differ in cost (a kernel's is read, a CPU operator's skipped unread),
// so equal bytes are not equal work.
constexpr std::size_t kEventPartsPerThread = 4;
// Parts are about this long where a window holds more than kEventPartsPerThread a thread (a mapped
// file is one window: its parts run on without a barrier, run_ordered_parts), and at most
// kEventSlotsPerThread parts a thread are read and not yet merged.
constexpr std::size_t kEventPartBytes = 2 << 20;
constexpr std::size_t kEventSlotsPerThread = 3;


class TraceReader {
 public:
  TraceReader(ReadContext& ctx, std::uint64_t file_bytes) : ctx_(ctx), tokens_(ctx.path), file_bytes_(file_bytes) {
    records_.first_launch = ctx.profile.launches.size();
  }

  // Reads the parts of the next window of the file; returns the bytes consumed (the rest is
  // a part cut short, to come again at the start of the next window). The window's events
  // are read on several threads where it has enough of them (read_in_parts).
  Result<std::size_t> feed(std::string_view window, bool last) {
    tokens_.set_window(window, last);
    window_end_ = window.data() + window.size();
    bool split = true;
    while (true) {
      if (split && tokens_.in_events()) {
        split = false;  // one try a window: after it the window's events are read, or left to one thread
        if (auto read = read_in_parts(window); !read) return read.error();
      }
      auto part = tokens_.next();
      if (!part) return part.error();
      if (!*part) return tokens_.consumed();
      Status s = (*part)->kind == TracePart::Kind::kEvent ? read_event(**part) : read_member(**part);
      if (!s) return s.error();
    }
  }

  std::int64_t line() const { return tokens_.line(); }

  // Called, while a window's events are read on several threads, with an offset in the window
  // whose bytes before it are done with (merged): a mapped file gives their pages back.
  void on_done_before(std::function<void(std::size_t)> done_before) { done_before_ = std::move(done_before); }

  Status finish() {
    if (!tokens_.saw_trace_events()) {
      return ctx_.error(0, "no \"traceEvents\" array: not a PyTorch profiler trace");
    }
    if (kernels_ == 0) {
      return ctx_.error(0, "no kernel events (\"cat\": \"kernel\") in the trace: was it recorded with "
                           "ProfilerActivity.CUDA?");
    }
    for (auto& r : records_.ranges) r.end_ns = std::min(r.end_ns, trace_end_ns_);
    timed_step(ctx_.step_times(), "launches linked to their CUDA calls", [&] { link_launches(records_, ctx_); });
    for (std::size_t i : laid_out_) ctx_.profile.launches[i].start_ns.reset();  // placed, now timeless again
    return ok_status();
  }

 private:
  // Reads the events of the window from the tokenizer's place on up to --threads threads:
  // cut at events (TraceEventCuts), each part read by a reader of its own, the parts merged
  // in order as they are ready (run_ordered_parts) and the tokenizer moved to where the last
  // stopped, so that the profile is the one a single thread makes. A part that does not stop
  // at the next one's cut (a cut inside a string or a nested array) read past it: it is
  // merged, the parts after it are not, and the rest is cut again from where it stopped.
  Status read_in_parts(std::string_view window);

  // Starts on one part of a window's events: from where `tokens` is (nullopt), or from the
  // event at `at`; up to `limit`.
  void begin_part(const TraceTokenizer& tokens, std::optional<std::size_t> at, std::size_t bytes, std::size_t limit,
                  const char* window_end) {
    auto launches = std::move(ctx_.profile.launches);  // keeps its room (first touches cost)
    launches.clear();
    ctx_.profile = model::Profile();
    ctx_.profile.launches = std::move(launches);
    ctx_.profile.inputs.resize(ctx_.input_index + 1);
    records_ = TraceRecords();
    text_ids_ = model::StringTable();
    kernels_ = 0;
    laid_out_.clear();
    trace_end_ns_ = std::numeric_limits<std::int64_t>::min();
    tokens_ = tokens;
    if (at) tokens_.resume_event_at(*at);
    tokens_.stop_at(limit, true);
    window_end_ = window_end;
    file_bytes_ = bytes;
  }

  Status read_part() {
    while (true) {
      auto part = tokens_.next();
      if (!part) return part.error();
      if (!*part) return ok_status();
      if (Status s = read_event(**part); !s) return s;
    }
  }

  // Appends what a part read, as if this reader had read it: its launches (append_part),
  // its metric, text and track ids interned again in the order it first saw them, its
  // calls, ranges and process names, its lines shifted to the file's.
  void merge(EventPart& part);

  Error malformed(const TracePart& part, simdjson::error_code code) const {
    return ctx_.error(part.line, std::string("malformed JSON in the ") +
                                     (part.kind == TracePart::Kind::kEvent ? "event" : "member") +
                                     " at byte " + std::to_string(part.offset) + ": " +
                                     simdjson::error_message(code));
  }

  // Parses a part in place when the window has room for the parser's padding after it,
  // else from a padded copy (only parts at the very end of a window).
  simdjson::error_code iterate(std::string_view json, od::document& doc) {
    const auto room = static_cast<std::size_t>(window_end_ - json.data());
    if (room - json.size() >= simdjson::SIMDJSON_PADDING) return parser_.iterate(json.data(), json.size(), room).get(doc);
    scratch_.assign(json.data(), json.size());
    scratch_.resize(json.size() + simdjson::SIMDJSON_PADDING, ' ');
    return parser_.iterate(scratch_.data(), json.size(), scratch_.size()).get(doc);
  }

  Status read_member(const TracePart& part) {
    if (part.key == "traceEvents") return ctx_.error(part.line, "\"traceEvents\" is not an array");
    if (part.key == "distributedInfo") return read_distributed(part);
    if (part.key != "deviceProperties") return ok_status();
    od::document doc;
    od::array devices;
    if (auto code = iterate(part.value, doc); code) return malformed(part, code);
    if (auto code = doc.get_array().get(devices); code) return malformed(part, code);
    for (auto device : devices) {
      od::object props;
      if (auto code = device.get_object().get(props); code) return malformed(part, code);
      if (auto code = read_device(props); code) return malformed(part, code);
    }
    return ok_status();
  }

  // The top-level "distributedInfo" {"rank", "world_size", "backend", ...} of a trace written
  // by a process of a torch.distributed job.
  Status read_distributed(const TracePart& part) {
    od::document doc;
    od::object object;
    if (auto code = iterate(part.value, doc); code) return malformed(part, code);
    if (auto code = doc.get_object().get(object); code) return malformed(part, code);
    model::DistributedInfo info;
    for (auto field_result : object) {
      od::field field;
      if (auto code = std::move(field_result).get(field); code) return malformed(part, code);
      auto key = find_key<kDistributedKeys>(field.key());
      if (!key) continue;
      od::value& v = field.value();
      switch (*key) {
        case DistributedKey::kRank: info.rank = integer(v).value_or(model::kUnknown); break;
        case DistributedKey::kWorldSize: info.world_size = integer(v).value_or(model::kUnknown); break;
        case DistributedKey::kBackend: info.backend = std::string(text(v).value_or("")); break;
      }
    }
    if (info.rank < 0) return ctx_.error(part.line, "\"distributedInfo\" has no non-negative \"rank\"");
    ctx_.profile.inputs[ctx_.input_index].distributed = std::move(info);
    return ok_status();
  }

  simdjson::error_code read_device(od::object& props) {
    model::Device d;
    std::optional<std::int64_t> major, minor;
    for (auto field_result : props) {
      od::field field;
      if (auto code = std::move(field_result).get(field); code) return code;
      auto key = find_key<kDeviceKeys>(field.key());
      if (!key) continue;
      od::value& v = field.value();
      auto fill = [&](std::optional<std::int64_t>& slot) {
        if (auto i = integer(v); i && *i >= 0) slot = *i;
      };
      switch (*key) {
        case DeviceKey::kId:
          if (auto i = integer(v); i && *i >= 0 && *i <= INT32_MAX) d.ordinal = static_cast<std::int32_t>(*i);
          break;
        case DeviceKey::kName: d.name = std::string(text(v).value_or("")); break;
        case DeviceKey::kMajor: major = integer(v); break;
        case DeviceKey::kMinor: minor = integer(v); break;
        case DeviceKey::kSmCount: fill(d.sm_count); break;
        case DeviceKey::kMemory: fill(d.memory_total_bytes); break;
        case DeviceKey::kThreadsPerSm: fill(d.max_threads_per_sm); break;
        case DeviceKey::kSharedPerSm: fill(d.max_shared_memory_per_sm_bytes); break;
      }
    }
    if (d.ordinal < 0) return simdjson::SUCCESS;  // a device without an id cannot be matched
    if (major && minor) d.cc = std::to_string(*major) + "." + std::to_string(*minor);
    if (auto conflict = ctx_.profile.device(d.ordinal).fill_from(d)) ctx_.warn(0, *conflict + "; ranks that disagree on the GPU are not one GPU: peaks and MFU use the earlier input's");
    return simdjson::SUCCESS;
  }

  Status read_event(const TracePart& part) {
    if (skipped_unread(part.value)) return ok_status();
    od::document doc;
    od::object object;
    if (auto code = iterate(part.value, doc); code) return malformed(part, code);
    if (auto code = doc.get_object().get(object); code) return malformed(part, code);
    Event e;
    for (auto field_result : object) {
      od::field field;
      if (auto code = std::move(field_result).get(field); code) return malformed(part, code);
      if (auto code = read_field(field, e); code) return malformed(part, code);
    }
    return use_event(e, part);
  }

  simdjson::error_code read_field(od::field& field, Event& e) {
    auto key = find_key<kEventKeys>(field.key());
    if (!key) return simdjson::SUCCESS;
    od::value& v = field.value();
    switch (*key) {
      case EventKey::kPh: e.ph = trim_end(v.raw_json_token()); break;
      case EventKey::kCat:
        if (auto t = text(v)) {
          e.has_cat = true;
          e.category = lookup(*t, kCategories).value_or(Category::kOther);
        }
        break;
      case EventKey::kName:
        if (auto t = text(v)) {
          e.name = *t;
          e.has_name = true;
        }
        break;
      case EventKey::kPid: e.pid = trim_end(v.raw_json_token()); break;
      case EventKey::kTid: e.tid = trim_end(v.raw_json_token()); break;
      case EventKey::kTs: e.ts = v.raw_json_token(); break;
      case EventKey::kDur: e.dur = v.raw_json_token(); break;
      case EventKey::kId: e.id = trim_end(v.raw_json_token()); break;
      case EventKey::kArgs:
        if (wants_args(e)) return read_args(v, e.args);
        break;
    }
    return simdjson::SUCCESS;
  }

  static simdjson::error_code read_args(od::value& v, EventArgs& a) {
    od::object object;
    if (v.get_object().get(object) != simdjson::SUCCESS) return simdjson::SUCCESS;  // not ours to judge
    for (auto field_result : object) {
      od::field field;
      if (auto code = std::move(field_result).get(field); code) return code;
      auto key = find_key<kArgKeys>(field.key());
      if (!key) continue;
      od::value& value = field.value();
      switch (*key) {
        case ArgKey::kDevice: a.device = integer(value); break;
        case ArgKey::kStream: a.stream = integer(value); break;
        case ArgKey::kContext: a.context = integer(value); break;
        case ArgKey::kCorrelation: a.correlation = integer(value); break;
        case ArgKey::kRegisters: a.registers = integer(value); break;
        case ArgKey::kSharedMemory: a.shared_memory = integer(value); break;
        case ArgKey::kBytes: a.bytes = integer(value); break;
        case ArgKey::kExternalId: a.external_id = integer(value); break;
        case ArgKey::kGrid: a.grid = dim3(value); break;
        case ArgKey::kBlock: a.block = dim3(value); break;
        case ArgKey::kName: a.name = text(value).value_or(""); break;
        case ArgKey::kFullName:
          if (a.kernel_name.empty()) a.kernel_name = std::string(text(value).value_or(""));
          break;
        case ArgKey::kMangledName:
          if (auto t = text(value)) a.kernel_name = std::string(*t);
          break;
        case ArgKey::kMessageElements: a.message_elements = integer(value); break;
        case ArgKey::kDtype: a.dtype = text(value).value_or(""); break;
        case ArgKey::kLaidOut: {
          bool b = false;
          a.laid_out = value.get_bool().get(b) == simdjson::SUCCESS && b;
          break;
        }
      }
    }
    return simdjson::SUCCESS;
  }

  Status use_event(const Event& e, const TracePart& part) {
    if (e.ph == "\"X\"") {
      switch (e.category) {
        case Category::kKernel:
        case Category::kMemcpy:
        case Category::kMemset: return add_launch(e, part);
        case Category::kCudaCall: return add_call(e, e.args.correlation, false, part);
        case Category::kCpuRange:
        case Category::kGpuRange: return add_range(e, part);
        case Category::kFlow:
        case Category::kOther: return ok_status();
      }
    }
    if (e.ph == "\"s\"" && e.category == Category::kFlow) return add_call(e, integer_token(e.id), true, part);
    if (e.ph == "\"M\"" && e.name == "process_name") {
      const std::int64_t pid = track_id(e.pid);
      if (pid != model::kUnknown && pid < kTextIds) records_.process_names[pid] = std::string(e.args.name);
    }
    return ok_status();
  }

  // An event's "ts", and "dur" unless `dur` is null, in ns; an error names what is wrong.
  // Times beyond 73 years either way are refused: sums and differences of them then fit.
  Status times(const Event& e, const TracePart& part, std::int64_t& ts, std::optional<std::int64_t>* dur) {
    constexpr std::int64_t kMaxNs = std::int64_t{1} << 61;
    auto t = microseconds_to_ns(e.ts);
    if (!t || *t < -kMaxNs || *t > kMaxNs) return bad_field(e, part, "\"ts\"", e.ts);
    ts = *t;
    if (!dur || e.dur.empty()) return ok_status();
    auto d = microseconds_to_ns(e.dur);
    if (!d || *d < 0 || *d > kMaxNs) return bad_field(e, part, "\"dur\"", e.dur);
    *dur = d;
    return ok_status();
  }

  Error bad_field(const Event& e, const TracePart& part, const char* field, std::string_view value) const {
    const std::string what = value.empty() ? "has no " + std::string(field)
                                           : std::string(field) + " is not a time in microseconds within 73 years: " +
                                                 std::string(trim_end(value).substr(0, 40));
    return ctx_.error(part.line, "event '" + std::string(e.name.substr(0, 80)) + "' (byte " +
                                     std::to_string(part.offset) + ") " + what);
  }

  // Size the launch and call lists once, from the file's size, so that a big trace does not
  // copy them over and over as they grow. Capacity that is never written is never faulted in.
  void reserve_launches() {
    reserve_huge(ctx_.profile.launches, ctx_.profile.launches.size() + file_bytes_ / kMinBytesPerGpuEvent + 16);
  }
  void reserve_calls() { reserve_huge(records_.calls, records_.calls.size() + file_bytes_ / kMinBytesPerCall + 16); }

  Status add_launch(const Event& e, const TracePart& part) {
    if (ctx_.profile.launches.size() == records_.first_launch) reserve_launches();
    model::Launch l;
    std::int64_t ts = 0;
    std::optional<std::int64_t> dur;
    if (Status s = times(e, part, ts, &dur); !s) return s;
    if (!dur) return bad_field(e, part, "\"dur\"", {});
    if (!e.has_name) return ctx_.error(part.line, "a GPU event without \"name\" (byte " + std::to_string(part.offset) + ")");
    const bool named_in_args = e.category == Category::kKernel && !e.args.kernel_name.empty();
    l.name = ctx_.profile.names.intern(named_in_args ? std::string_view(e.args.kernel_name) : e.name);
    l.kind = e.category == Category::kKernel   ? model::LaunchKind::kKernel
             : e.category == Category::kMemcpy ? model::LaunchKind::kMemcpy
                                               : model::LaunchKind::kMemset;
    l.start_ns = ts;
    l.duration_ns = static_cast<double>(*dur);
    note_end(ts + *dur);
    const EventArgs& a = e.args;
    l.id = a.correlation.value_or(model::kUnknown);
    l.device_ordinal = fits<std::int16_t>(a.device ? a.device : integer_token(e.pid)).value_or(-1);
    // Out of CUPTI's 32 bits: unknown, as an out-of-range device above.
    l.stream_id = fits<model::StreamId>(a.stream ? a.stream : integer_token(e.tid)).value_or(model::kUnknown);
    l.context_id = fits<model::StreamId>(a.context).value_or(model::kUnknown);
    if (l.kind == model::LaunchKind::kKernel) {
      set_kernel_args(a, l);
      ++kernels_;
    } else if (a.bytes && *a.bytes >= 0) {
      l.bytes = *a.bytes;
    }
    l.input = ctx_.input_index;
    if (e.args.laid_out) laid_out_.push_back(ctx_.profile.launches.size());
    ctx_.profile.launches.push_back(std::move(l));
    return ok_status();
  }

  void set_kernel_args(const EventArgs& a, model::Launch& l) {
    if (auto size = lookup(a.dtype, kDtypeBytes); size && a.message_elements && *a.message_elements >= 0) {
      l.bytes = *a.message_elements * *size;
    }
    model::LaunchConfig config;
    config.grid = a.grid;
    config.block = a.block;
    config.registers_per_thread = fits<std::int32_t>(a.registers).value_or(-1);
    // The trace gives static + dynamic shared memory as one number: only 0 splits.
    if (a.shared_memory && *a.shared_memory == 0) config.static_shared_bytes = config.dynamic_shared_bytes = 0;
    l.config = ctx_.profile.intern_config(config);
    if (a.shared_memory && *a.shared_memory > 0 && ctx_.wants_metric("shared memory")) {
      ctx_.profile.add_metric(l, {ctx_.profile.metrics.intern("shared memory", "byte"),
                                  static_cast<double>(*a.shared_memory)});
    }
  }

  Status add_call(const Event& e, std::optional<std::int64_t> correlation, bool from_flow, const TracePart& part) {
    if (!correlation) return ok_status();  // a call that launched nothing we could match
    std::int64_t ts = 0;
    if (Status s = times(e, part, ts, nullptr); !s) return s;
    note_end(ts);
    records_.calls.push_back(CudaCall{*correlation, ts, records_.track({track_id(e.pid), track_id(e.tid)}), from_flow});
    return ok_status();
  }

  Status add_range(const Event& e, const TracePart& part) {
    if (!e.has_name) return ctx_.error(part.line, "a range without \"name\" (byte " + std::to_string(part.offset) + ")");
    std::int64_t ts = 0;
    std::optional<std::int64_t> dur;
    if (Status s = times(e, part, ts, &dur); !s) return s;
    TraceRange r{stage_name(e.name), ts, std::numeric_limits<std::int64_t>::max(),
                 records_.track({track_id(e.pid), track_id(e.tid)}),
                 e.args.external_id.value_or(model::kUnknown), e.category == Category::kGpuRange, e.args.laid_out};
    if (dur) {
      r.end_ns = ts + *dur;
      note_end(r.end_ns);
    } else {
      ctx_.warn(part.line, "range '" + r.name + "' has no \"dur\": it never ended while the profiler ran; "
                           "it is taken to end with the trace");
      note_end(ts);
    }
    records_.ranges.push_back(std::move(r));
    return ok_status();
  }

  // A pid or tid: a number, or an id for a string.
  std::int64_t track_id(std::string_view token) {
    if (auto i = integer_token(token)) return *i;
    if (token.size() >= 2 && token.front() == '"') return kTextIds + text_ids_.intern(token.substr(1, token.size() - 2));
    return model::kUnknown;
  }

  static std::optional<std::int64_t> integer_token(std::string_view token) {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
    return v;
  }

  // A non-negative value that fits T, else nullopt.
  template <class T>
  static std::optional<T> fits(std::optional<std::int64_t> v) {
    if (!v || *v < 0 || *v > std::numeric_limits<T>::max()) return std::nullopt;
    return static_cast<T>(*v);
  }

  void note_end(std::int64_t ns) { trace_end_ns_ = std::max(trace_end_ns_, ns); }

  ReadContext& ctx_;
  TraceTokenizer tokens_;
  std::uint64_t file_bytes_;
  od::parser parser_;
  std::string scratch_;
  const char* window_end_ = nullptr;
  TraceRecords records_;
  // merge's appends to the launches and the calls, faulted in ahead on the read's threads.
  FaultedAppends<model::Launch> launch_room_{ctx_.profile.launches, ctx_.threads()};
  FaultedAppends<CudaCall> call_room_{records_.calls, ctx_.threads()};
  model::StringTable text_ids_;
  std::uint64_t kernels_ = 0;
  std::vector<std::size_t> laid_out_;  // launches whose events were laid out (no real start time)
  std::int64_t trace_end_ns_ = std::numeric_limits<std::int64_t>::min();
  std::vector<std::unique_ptr<EventPart>> parts_;
  std::function<void(std::size_t)> done_before_;
};

// One part of a window's events, read on a thread of its own into a profile of its own
// by a reader of its own (kept from window to window, with its parser and its room).
struct EventPart {
  model::Profile profile;
  ReadContext ctx;
  TraceReader reader;
  Status status = ok_status();
  std::int64_t line_shift = 0;  // its lines count from 1 at its cut: add this to them
  std::size_t begin = 0;                       // in the window
  std::size_t limit = std::string_view::npos;  // the next part's cut; npos: to the window's end

  explicit EventPart(const ReadContext& main)
      : ctx{main.path, profile, main.input_index, nullptr, main.options}, reader(ctx, 0) {
    profile.inputs.resize(main.input_index + 1);
  }
};

Status TraceReader::read_in_parts(std::string_view window) {
  const ReadOptions defaults;
  const ReadOptions& options = ctx_.options ? *ctx_.options : defaults;
  const unsigned threads = options.thread_count();
  if (threads < 2) return ok_status();  // one thread reads in place
  // Rounds: a round ends early only at a cut that was no event's start (the part before it
  // read past it); the next one cuts again from where that part stopped.
  while (tokens_.in_events()) {
    const std::size_t from = tokens_.consumed();
    const std::size_t parts = std::max<std::size_t>(threads * kEventPartsPerThread, (window.size() - from) / kEventPartBytes);
    TraceEventCuts cuts(window.substr(from), parts, options.min_part_bytes);
    std::size_t next_begin = from, next_limit = cuts.next();
    if (next_limit == std::string_view::npos) return ok_status();  // one part: read in place
    next_limit += from;
    const std::size_t slots = threads * kEventSlotsPerThread;
    while (parts_.size() < slots) parts_.push_back(std::make_unique<EventPart>(ctx_));
    Status failed = ok_status();
    std::int64_t line_shift = 0;  // of the next part to merge
    auto has_part = [&](std::size_t, std::size_t slot) {
      if (next_begin == std::string_view::npos) return false;
      EventPart& part = *parts_[slot];
      part.begin = next_begin;
      part.limit = next_limit;
      next_begin = next_limit;
      if (next_limit != std::string_view::npos) {
        const std::size_t cut = cuts.next();
        next_limit = cut == std::string_view::npos ? cut : from + cut;
      }
      return true;
    };
    auto parse = [&](std::size_t i, std::size_t slot) {
      EventPart& part = *parts_[slot];
      const std::size_t end = part.limit == std::string_view::npos ? window.size() : part.limit;
      part.reader.begin_part(tokens_, i == 0 ? std::nullopt : std::optional(part.begin), end - part.begin, part.limit,
                             window_end_);
      part.status = part.reader.read_part();
    };
    auto merge_part = [&](std::size_t, std::size_t slot) {
      EventPart& part = *parts_[slot];
      // A part read what one thread would have from its start on; the cut after it was an
      // event's start only if it stopped there.
      const bool last = part.limit == std::string_view::npos;
      const bool next_starts_right = last || part.reader.tokens_.stopped_at(part.limit);
      part.line_shift = line_shift;
      merge(part);
      line_shift = part.reader.tokens_.line() + part.line_shift - 1;
      if (!part.status) {
        failed = part.status;
        return false;
      }
      if (done_before_ && !last) done_before_(part.limit);
      return next_starts_right;
    };
    const std::size_t merged = run_ordered_parts(threads, slots, has_part, parse, merge_part);
    // The last part merged keeps its slot: the tokenizer goes on from where it stopped.
    const EventPart& last = *parts_[(merged - 1) % slots];
    tokens_ = last.reader.tokens_;
    tokens_.shift_lines(last.line_shift);
    tokens_.stop_at(std::string_view::npos, false);
    if (!failed || last.limit == std::string_view::npos) return failed;
  }
  return ok_status();
}

void TraceReader::merge(EventPart& part) {
  TraceReader& from = part.reader;
  model::Profile& profile = ctx_.profile;
  auto shifted = [&](Error e) {
    if (e.line > 0) e.line += part.line_shift;
    return e;
  };
  for (Error& w : part.profile.inputs[ctx_.input_index].warnings) w = shifted(std::move(w));
  if (!part.status) part.status = shifted(part.status.error());
  std::vector<model::MetricId> metrics(part.profile.metrics.size());
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const model::MetricInfo& m = part.profile.metrics[static_cast<model::MetricId>(i)];
    metrics[i] = profile.metrics.intern(m.name, m.unit);
  }
  for (model::MetricSample& sample : part.profile.metric_samples) sample.id = metrics[sample.id];
  const std::size_t base = profile.launches.size();
  if (!part.profile.launches.empty() && base == records_.first_launch) reserve_launches();
  launch_room_.make_room(part.profile.launches.size());
  append_part(profile, part.profile, ctx_.input_index);
  for (std::size_t i : from.laid_out_) laid_out_.push_back(base + i);
  std::vector<std::int64_t> text_ids(from.text_ids_.size());
  for (std::size_t i = 0; i < text_ids.size(); ++i) {
    text_ids[i] = kTextIds + text_ids_.intern(from.text_ids_[static_cast<std::uint32_t>(i)]);
  }
  auto id = [&](std::int64_t v) { return v >= kTextIds ? text_ids[static_cast<std::size_t>(v - kTextIds)] : v; };
  std::vector<std::uint32_t> tracks(from.records_.tracks.size());
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    const TraceTrack& t = from.records_.tracks[i];
    tracks[i] = records_.track({id(t.pid), id(t.tid)});
  }
  if (records_.calls.empty() && !from.records_.calls.empty()) reserve_calls();
  call_room_.make_room(from.records_.calls.size());
  for (CudaCall c : from.records_.calls) {
    c.track = tracks[c.track];
    records_.calls.push_back(c);
  }
  for (TraceRange& r : from.records_.ranges) {
    r.track = tracks[r.track];
    records_.ranges.push_back(std::move(r));
  }
  for (auto& [pid, name] : from.records_.process_names) records_.process_names[pid] = std::move(name);
  kernels_ += from.kernels_;
  trace_end_ns_ = std::max(trace_end_ns_, from.trace_end_ns_);
}

}  // namespace

bool looks_like_chrome_trace(std::string_view bytes) {
  bytes = bytes.substr(0, 1 << 20);
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  const std::size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && bytes[first] == '{' &&
         bytes.find("\"traceEvents\"", first) != std::string_view::npos;
}

std::optional<NearMiss> json_near_miss(std::string_view bytes) {
  // A JSON object, or an array of them (the other form of chrome trace), judged by its first
  // bytes: no CSV export starts so.
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  constexpr std::string_view kSpace = " \t\r\n";
  std::size_t at = bytes.find_first_not_of(kSpace);
  if (at == std::string_view::npos) return std::nullopt;
  if (bytes[at] == '[') at = bytes.find_first_not_of(kSpace, at + 1);
  if (at == std::string_view::npos || bytes[at] != '{') return std::nullopt;
  return NearMiss{"a JSON document without \"traceEvents\" near its start, not a PyTorch profiler trace "
                  "(torch.profiler's export_chrome_trace writes one)"};
}

Status read_pytorch_trace(std::string_view bytes, ReadContext& ctx) {
  TraceReader reader(ctx, bytes.size());
  if (auto consumed = reader.feed(bytes, true); !consumed) return consumed.error();
  return reader.finish();
}

namespace {

// Reads a file window by window from `source` (its bytes, or inflated on the fly).
Status read_windows(ChunkReader& source, TraceReader& reader, ReadContext& ctx) {
  std::string_view carry;
  while (true) {
    auto window = source.next(carry);
    if (!window) return ctx.error(reader.line(), window.error().message);
    const bool last = source.at_end();
    auto consumed = reader.feed(*window, last);
    if (!consumed) return consumed.error();
    if (ctx.progress) ctx.progress(source.file_offset());
    if (last) return reader.finish();
    carry = window->substr(*consumed);
  }
}

// The same windows from a mapped file, where its bytes lie: each window is the unconsumed
// tail of the previous one and the next `window_bytes` of the file, as ChunkReader cuts them
// (a chunk shorter than `window_bytes`, or none, ends the file), without the copy into its
// buffer (a sixth of the CPU on 2 cores, BENCHMARKS.md); the pages behind are given back,
// also while a window is read on several threads (every kReleaseBytes). A record may be of
// any length, as when the file is one window (several threads): nothing is buffered, and a
// window whose tail is more than half of it is followed by one twice as long, so a long
// record is scanned a few times, not once every window.
Status read_mapped_windows(FileMapping& file, TraceReader& reader, ReadContext& ctx, std::size_t window_bytes) {
  constexpr std::size_t kReleaseBytes = 8 << 20;
  const std::string_view bytes = file.bytes();
  std::size_t begin = 0, end = 0;
  reader.on_done_before([&](std::size_t window_offset) {
    const std::size_t offset = begin + window_offset;
    if (offset < file.released() + kReleaseBytes) return;
    file.release_before(offset);
    if (ctx.progress) ctx.progress(offset);
  });
  while (true) {
    const std::size_t chunk = std::min(bytes.size() - end, window_bytes);
    const bool last = chunk < window_bytes;
    end += chunk;
    auto consumed = reader.feed(bytes.substr(begin, end - begin), last);
    if (!consumed) return consumed.error();
    if (ctx.progress) ctx.progress(end);
    if (last) return reader.finish();
    begin += *consumed;
    if (end - begin > window_bytes / 2) window_bytes *= 2;
    file.release_before(begin);
  }
}

// Windows of 1 MiB on one thread: events are a few hundred bytes, and a window's parse stays
// in cache. With several threads a mapped file is one window, read in parts of kEventPartBytes that
// run on without a barrier (read_in_parts); an inflated one comes in windows of 8 MiB for each
// thread: each window ends with its threads waiting for its last part (4 MiB: 1.19 s for the
// 514 MB trace on 2 threads, 8 MiB: 1.10 s, 16 MiB: 1.09 s with 100 MiB at its peak against
// 80). An event of an inflated file may be up to 16 MiB long.
constexpr std::size_t kWindowBytes = 1 << 20;
constexpr std::size_t kThreadWindowBytes = 8 << 20;
constexpr std::size_t kLongestPart = 16 << 20;
constexpr std::size_t kWholeFile = std::numeric_limits<std::size_t>::max();

}  // namespace

Status read_pytorch_trace_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx) {
  const unsigned threads = ctx.threads();
  if (threads > 1) {
    if (auto file = FileMapping::open(path); file && !is_gzip(file->bytes())) {
      TraceReader reader(ctx, file->bytes().size());
      return read_mapped_windows(*file, reader, ctx, kWholeFile);
    }
  }
  return read_pytorch_trace_file(path, file_bytes, ctx, threads > 1 ? threads * kThreadWindowBytes : kWindowBytes);
}

Status read_pytorch_trace_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx,
                               std::size_t window_bytes, FileAccess access) {
  if (access == FileAccess::kMapped) {
    if (auto file = FileMapping::open(path); file && !is_gzip(file->bytes())) {
      TraceReader reader(ctx, file->bytes().size());
      return read_mapped_windows(*file, reader, ctx, window_bytes);
    }
  }
  auto head = read_file_head(path, 2);
  if (!head) return head.error();
  const bool gz = is_gzip(*head), ahead = ChunkReader::worth_reading_ahead();
  auto chunks = gz ? open_gzip_reader(path, window_bytes, kLongestPart, ahead)
                   : ChunkReader::open(path, window_bytes, kLongestPart, ahead);
  if (!chunks) return chunks.error();
  TraceReader reader(ctx, gz ? 0 : file_bytes);  // a gzip's inflated size is not known: no reservation
  return read_windows(**chunks, reader, ctx);
}

}  // namespace kernlens::ingest

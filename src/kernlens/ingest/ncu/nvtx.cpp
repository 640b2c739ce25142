#include "kernlens/ingest/ncu/nvtx.h"

#include <array>
#include <charconv>

#include "kernlens/ingest/ncu/values.h"

namespace kernlens::ingest {
namespace {

constexpr std::string_view kDefaultDomain = "<default domain>";
// Fields after the name: PL_Type, PL_Value, CLR_Type, Color, Msg_Type, Msg.
constexpr std::size_t kTailFields = 6;

bool is_message_type(std::string_view s) {
  static constexpr std::array<std::string_view, 4> kTypes = {"ASCII", "UNICODE", "REGISTERED",
                                                             "UNKNOWN"};
  for (auto t : kTypes) {
    if (s == t) return true;
  }
  return false;
}

std::vector<std::string_view> split_colons(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t c = s.find(':', start);
    parts.push_back(s.substr(start, c == std::string_view::npos ? std::string_view::npos : c - start));
    if (c == std::string_view::npos) break;
    start = c + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string_view>& parts, std::size_t first, std::size_t last) {
  std::string out;
  for (std::size_t i = first; i < last; ++i) {
    if (i > first) out += ':';
    out += parts[i];
  }
  return out;
}

bool parse_int(std::string_view s, std::int64_t& out) {
  s = trim(s);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
}

}  // namespace

std::optional<model::NvtxRange> parse_ncu_nvtx_entry(std::string_view entry, model::RangeKind kind) {
  std::vector<std::string_view> parts = split_colons(entry);
  std::size_t first = 0;
  if (kind == model::RangeKind::kStartEnd) {
    std::int64_t id = 0;
    if (parts.empty() || !parse_int(parts[0], id)) return std::nullopt;
    first = 1;
  }
  const std::size_t n = parts.size();
  if (n < first + 2 + kTailFields) return std::nullopt;
  model::NvtxRange range;
  range.kind = kind;
  range.domain = parts[first] == kDefaultDomain ? std::string() : std::string(parts[first]);
  const std::size_t name_begin = first + 1;

  if (parts[n - 2] == "none") {
    // No message: every tail field is a single word, the name is what lies between.
    range.name = join(parts, name_begin, n - kTailFields);
    return range;
  }
  // With a message, Msg repeats the name, and either may contain ':'. Find the split
  // where the Msg_Type word sits and the name equals the message.
  std::optional<std::size_t> fallback;
  for (std::size_t name_end = name_begin + 1; name_end + kTailFields <= n; ++name_end) {
    std::size_t type_at = name_end + 4;
    if (!is_message_type(parts[type_at])) continue;
    if (!fallback) fallback = name_end;
    if (join(parts, name_begin, name_end) == join(parts, type_at + 1, n)) {
      range.name = join(parts, name_begin, name_end);
      return range;
    }
  }
  if (!fallback) return std::nullopt;
  range.name = join(parts, name_begin, *fallback);
  return range;
}

std::optional<NcuNvtxCell> parse_ncu_nvtx_cell(std::string_view cell, model::RangeKind kind,
                                               std::string& why) {
  NcuNvtxCell out;
  std::string_view s = trim(cell);
  if (kind == model::RangeKind::kPushPop && !s.empty() && s.front() != '"') {
    std::size_t q = s.find('"');
    if (!parse_int(s.substr(0, q), out.thread_id)) {
      why = "expected a thread id before the NVTX ranges";
      return std::nullopt;
    }
    s = q == std::string_view::npos ? std::string_view() : s.substr(q);
  }
  while (true) {
    s = trim(s);
    if (s.empty()) break;
    if (s.front() != '"') {
      why = "expected a quoted NVTX range";
      return std::nullopt;
    }
    std::size_t close = s.find('"', 1);
    if (close == std::string_view::npos) {
      why = "unterminated quote in NVTX ranges";
      return std::nullopt;
    }
    std::string_view entry = s.substr(1, close - 1);
    auto range = parse_ncu_nvtx_entry(entry, kind);
    if (!range) {
      why = "unrecognised NVTX range \"" + std::string(entry) +
            "\" (expected DOMAIN:NAME:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg)";
      return std::nullopt;
    }
    out.ranges.push_back(std::move(*range));
    s = s.substr(close + 1);
  }
  return out;
}

}  // namespace kernlens::ingest

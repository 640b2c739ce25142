#include "kernlens/ingest/ncu/values.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

#include "kernlens/common/ascii.h"
#include "kernlens/common/numeric.h"

namespace kernlens::ingest {
namespace {

constexpr std::array<double, 23> kPow10 = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                           1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] + 32) : a[i];
    if (x != b[i]) return false;
  }
  return true;
}

// What ncu prints when a metric has no value for a launch.
bool is_no_value_token(std::string_view s) {
  static constexpr std::array<std::string_view, 7> kTokens = {
      "n/a", "no data", "nan", "-nan", "inf", "-inf", "(none)"};
  for (auto t : kTokens) {
    if (equals_ignore_case(s, t)) return true;
  }
  return s == "-" || s == "--";
}

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The aggregate of a cell: the text before an instance list " (...)", trimmed.
std::string_view number_part(std::string_view s) {
  std::size_t paren = s.find(" (");
  return trim_spaces(paren == std::string_view::npos ? s : s.substr(0, paren));
}

// Slow path: hand the cleaned digits to from_chars with the combined exponent.
NcuNumber parse_with_from_chars(std::string_view s, int pow10) {
  std::string text;
  text.reserve(s.size() + 8);
  for (char c : s) {
    if (c != ',') text += c;
  }
  double v = 0;
  const char* first = text.data();
  if (!text.empty() && text[0] == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return {CellKind::kInvalid, 0};
  if (pow10 != 0) {
    // Re-parse with the exponent folded in, so the scaling is rounded once.
    std::string scaled(first, static_cast<std::size_t>(text.data() + text.size() - first));
    std::size_t e = scaled.find_first_of("eE");
    int exp = pow10;
    if (e != std::string::npos) {
      int given = 0;
      auto r = std::from_chars(scaled.data() + e + 1 + (scaled[e + 1] == '+' ? 1 : 0),
                               scaled.data() + scaled.size(), given);
      if (r.ec != std::errc()) return {CellKind::kInvalid, 0};
      exp += given;
      scaled.resize(e);
    }
    scaled += 'e' + std::to_string(exp);
    auto r = std::from_chars(scaled.data(), scaled.data() + scaled.size(), v);
    if (r.ec != std::errc()) return {CellKind::kInvalid, 0};
  }
  return {CellKind::kNumber, v};
}

}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// What may follow a number: nothing, spaces, or an instance list " (v; v)" / " (k: v)".
static bool is_number_tail(std::string_view rest) {
  rest = trim(rest);
  return rest.empty() || rest.front() == '(';
}

NcuNumber parse_ncu_number(std::string_view cell, int pow10) {
  // Fast path first (nearly every cell is a plain number): [sign] digits with 3-digit comma
  // groups [. digits], mantissa < 2^53, then at most an instance list.
  std::string_view s = cell;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (s.empty()) return {CellKind::kNoValue, 0};
  std::size_t i = 0;
  bool negative = false;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    i = 1;
  }
  std::uint64_t mantissa = 0;
  int digits = 0, decimals = 0, group = -1;  // group: digits since the last comma (-1: none)
  int lead = 0;                                // digits before the first comma
  bool any_digit = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (is_ascii_digit(c)) {
      if (digits >= 19) return parse_with_from_chars(number_part(s), pow10);
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(c - '0');
      if (mantissa != 0) ++digits;
      any_digit = true;
      if (group >= 0) ++group;
      else ++lead;
    } else if (c == ',') {
      // "0,5" or "1234,5" are decimal commas, not thousands separators.
      bool bad_lead = group < 0 && (lead > 3 || s[negative || s[0] == '+' ? 1 : 0] == '0');
      if (!any_digit || bad_lead || group == 0 || (group > 0 && group != 3)) {
        return {CellKind::kInvalid, 0};
      }
      group = 0;
    } else {
      break;
    }
  }
  if (group >= 0 && group != 3) return {CellKind::kInvalid, 0};
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && is_ascii_digit(s[i]); ++i) {
      if (digits >= 19) return parse_with_from_chars(number_part(s), pow10);
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(s[i] - '0');
      if (mantissa != 0) ++digits;
      ++decimals;
      any_digit = true;
    }
  }
  if (!any_digit) {
    // Not a number: a no-value token, an instance list without an aggregate, or text.
    std::string_view t = trim(s);
    if (t.empty() || t.front() == '(' || is_no_value_token(number_part(t))) return {CellKind::kNoValue, 0};
    return {CellKind::kInvalid, 0};
  }
  if (i < s.size()) {
    if (s[i] == 'e' || s[i] == 'E') return parse_with_from_chars(number_part(s), pow10);
    if (!is_number_tail(s.substr(i))) return {CellKind::kInvalid, 0};
  }
  int exp = pow10 - decimals;
  if (mantissa >= (std::uint64_t{1} << 53) || exp > 22 || exp < -22) {
    return parse_with_from_chars(number_part(s), pow10);
  }
  // Both operands are exact doubles, so one IEEE operation gives the correctly rounded value.
  double v = static_cast<double>(mantissa);
  v = exp >= 0 ? v * kPow10[static_cast<std::size_t>(exp)] : v / kPow10[static_cast<std::size_t>(-exp)];
  return {CellKind::kNumber, negative ? -v : v};
}

std::optional<model::Dim3> parse_dim3(std::string_view cell) {
  std::string_view s = trim(cell);
  bool paren = !s.empty() && s.front() == '(';
  if (paren) {
    if (s.back() != ')') return std::nullopt;
    s = s.substr(1, s.size() - 2);
  }
  std::array<std::uint32_t, 3> v = {1, 1, 1};
  std::size_t n = 0;
  while (true) {
    std::size_t comma = s.find(',');
    std::string_view part = trim(s.substr(0, comma));
    if (n >= 3 || part.empty()) return std::nullopt;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v[n]);
    if (ec != std::errc() || ptr != part.data() + part.size()) return std::nullopt;
    ++n;
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  if (paren && n != 3) return std::nullopt;
  if (!paren && n != 1) return std::nullopt;
  if (v[0] == 0 || v[1] == 0 || v[2] == 0) return std::nullopt;
  return model::Dim3{v[0], v[1], v[2]};
}

std::optional<std::int64_t> parse_ncu_integer(std::string_view cell) {
  NcuNumber n = parse_ncu_number(cell);
  if (n.kind != CellKind::kNumber) return std::nullopt;
  return exact_integer<std::int64_t>(n.value);
}

std::optional<std::uint32_t> parse_execution_count(std::string_view cell) {
  auto n = parse_ncu_integer(cell);
  if (!n || *n <= 0 || *n > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

}  // namespace kernlens::ingest

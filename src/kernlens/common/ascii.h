// Character tests on ASCII bytes, independent of the C locale (std::isdigit and friends
// depend on it, and take an int that must not be a negative char).
#pragma once

#include <algorithm>
#include <string_view>

namespace kernlens {

inline bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_ascii_alnum(char c) { return is_ascii_alpha(c) || is_ascii_digit(c); }
// JSON's whitespace (RFC 8259): space, tab, line feed, carriage return.
inline bool is_json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Whether `s` contains `word`, ASCII letters compared without case.
inline bool contains_ascii_ci(std::string_view s, std::string_view word) {
  return std::search(s.begin(), s.end(), word.begin(), word.end(),
                     [](char a, char b) { return (a | 0x20) == (b | 0x20); }) != s.end();
}

}  // namespace kernlens

// Escaping for the small languages kernlens writes: backslashes for regular expressions (ncu's
// --kernel-name regex:) and ncu's NVTX filter expressions; quoting for CSV fields (RFC 4180).
#pragma once

#include <string>
#include <string_view>

namespace kernlens {

// `s` with a '\' before every character that is in `special`.
inline std::string backslash_escape(std::string_view s, std::string_view special) {
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    if (special.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// One CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
inline std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

}  // namespace kernlens

// Backslash escaping, for the small languages kernlens writes: regular expressions (ncu's
// --kernel-name regex:) and ncu's NVTX filter expressions.
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

}  // namespace kernlens

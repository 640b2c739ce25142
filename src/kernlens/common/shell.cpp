#include "kernlens/common/shell.h"

#include <algorithm>

#include "kernlens/common/ascii.h"

namespace kernlens {
namespace {

// Characters a POSIX shell leaves alone in an unquoted word.
bool shell_safe(char c) { return is_ascii_alnum(c) || std::string_view("_@%+=:,./-").find(c) != std::string_view::npos; }

}  // namespace

std::string shell_quote(std::string_view arg) {
  if (!arg.empty() && std::all_of(arg.begin(), arg.end(), shell_safe)) return std::string(arg);
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string shell_join(std::span<const std::string> argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    line += shell_quote(arg);
  }
  return line;
}

}  // namespace kernlens

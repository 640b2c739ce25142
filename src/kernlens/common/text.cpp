#include "kernlens/common/text.h"

#include <iterator>

#include <fmt/format.h>
#include <utf8.h>

#include "kernlens/common/ascii.h"

namespace kernlens {

std::optional<std::string> repaired_utf8(std::string_view s) {
  if (utf8::is_valid(s.begin(), s.end())) return std::nullopt;
  std::string out;
  out.reserve(s.size() + 8);
  utf8::replace_invalid(s.begin(), s.end(), std::back_inserter(out));
  return out;
}

std::string valid_utf8(std::string_view s) {
  auto repaired = repaired_utf8(s);
  return repaired ? std::move(*repaired) : std::string(s);
}

namespace {

std::string escaped(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const bool c1 = c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(s[i + 1]) <= 0x9F;  // U+0080..U+009F
    if (c1) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[++i]));
    } else if (c == '\n' && keep_newlines) {
      out += '\n';
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::string escape_controls(std::string_view s) { return escaped(s, false); }

std::string escape_controls_but_newlines(std::string_view s) { return escaped(s, true); }

std::string file_name_safe(std::string text) {
  for (char& c : text) {
    if (!is_ascii_alnum(c) && c != '-' && c != '.' && c != '_') c = '_';
  }
  return text;
}

}  // namespace kernlens

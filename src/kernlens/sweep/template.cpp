#include "kernlens/sweep/template.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace kernlens::sweep {
namespace {

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Walks `t`, handing literal text and names to the callbacks in order.
template <class Literal, class Name>
Status walk(const std::string& file, const Template& t, Literal on_literal, Name on_name) {
  const std::string_view s = t.text;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((s[i] == '{' || s[i] == '}') && i + 1 < s.size() && s[i + 1] == s[i]) {
      on_literal(s[i++]);
    } else if (s[i] == '}') {
      return make_error(file, t.line, fmt::format("\"{}\": a lone '}}' (write '}}}}' for a brace)", t.text));
    } else if (s[i] == '{') {
      std::size_t close = s.find('}', i);
      if (close == std::string_view::npos) {
        return make_error(file, t.line, fmt::format("\"{}\": '{{' is never closed (write '{{{{' for a brace)", t.text));
      }
      std::string_view name = s.substr(i + 1, close - i - 1);
      if (name.empty() || !std::all_of(name.begin(), name.end(), name_char)) {
        return make_error(file, t.line,
                          fmt::format("\"{}\": '{{{}}}' is not a parameter name (letters, digits, '_')", t.text, name));
      }
      if (Status st = on_name(name); !st) return st;
      i = close;
    } else {
      on_literal(s[i]);
    }
  }
  return ok_status();
}

std::string known(const Values& values) {
  std::string out;
  for (const auto& [name, value] : values) out += fmt::format("{}{}", out.empty() ? "" : ", ", name);
  return out.empty() ? "none" : out;
}

}  // namespace

Result<std::string> expand(const std::string& file, const Template& t, const Values& values) {
  std::string out;
  Status st = walk(
      file, t, [&](char c) { out += c; },
      [&](std::string_view name) -> Status {
        auto it = values.find(name);
        if (it == values.end()) {
          return make_error(file, t.line,
                            fmt::format("\"{}\": {{{}}} names no parameter (parameters: {})", t.text, name, known(values)));
        }
        out += it->second;
        return ok_status();
      });
  if (!st) return st.error();
  return out;
}

}  // namespace kernlens::sweep

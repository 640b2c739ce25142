#include "kernlens/load/nvtx_path.h"

namespace kernlens::load {
namespace {

// Splits `s` at every `sep` not escaped by '\'; "\x" stands for x. '\0' never splits.
std::vector<std::string> split_escaped(std::string_view s, char sep) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      parts.back() += s[++i];
    } else if (sep != '\0' && s[i] == sep) {
      parts.emplace_back();
    } else {
      parts.back() += s[i];
    }
  }
  return parts;
}

}  // namespace

NvtxPath parse_nvtx_path(std::string_view user, bool nested) {
  NvtxPath path;
  std::string_view rest = user;
  for (std::size_t i = 0; i < user.size(); ++i) {  // the first unescaped '@' ends the domain
    if (user[i] == '\\') {
      ++i;
    } else if (user[i] == '@') {
      path.domain = split_escaped(user.substr(0, i), '\0')[0];
      rest = user.substr(i + 1);
      break;
    }
  }
  path.ranges = split_escaped(rest, nested ? '/' : '\0');
  // ncu's own spelling ends a push/pop range with '/' ("prefill/", "LLM@prefill/"): that '/'
  // marks the kind of range, it does not open an empty one.
  if (nested && path.ranges.size() > 1 && path.ranges.back().empty()) path.ranges.pop_back();
  return path;
}

}  // namespace kernlens::load

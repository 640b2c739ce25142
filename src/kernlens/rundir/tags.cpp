#include "kernlens/rundir/tags.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "kernlens/common/text.h"

namespace kernlens::rundir {
namespace {

bool valid_tag_key(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

}  // namespace

Result<Tags> parse_tags(const std::vector<std::string>& texts) {
  Tags tags;
  for (const auto& text : texts) {
    auto eq = text.find('=');
    std::string key = text.substr(0, eq);
    if (eq == std::string::npos || !valid_tag_key(key)) {
      return make_error("", 0, fmt::format("--tag {}: expected KEY=VALUE, KEY of letters, digits, '_', '-', '.'", text));
    }
    for (const auto& [k, v] : tags) {
      if (k == key) return make_error("", 0, fmt::format("--tag {}: given twice", key));
    }
    tags.emplace_back(key, valid_utf8(text.substr(eq + 1)));  // the one rule of common/text.h
  }
  return tags;
}

}  // namespace kernlens::rundir

#include "kernlens/names/rules.h"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace kernlens::names {
namespace {

// In enum order.
constexpr std::array<std::string_view, 11> kLibraryNames = {
    "cublas", "cutlass",  "flash-attn",         "cudnn", "triton", "nccl", "pytorch",
    "cub",    "tensorrt", "transformer-engine", "user",
};
constexpr std::array<std::string_view, 15> kOpClassNames = {
    "gemm",    "attention", "norm",    "softmax", "elementwise", "reduction", "copy",   "gather",
    "scatter", "embedding", "sort",    "routing", "comm",        "memset",    "other",
};
static_assert(kLibraryNames.size() == static_cast<std::size_t>(Library::kUser) + 1);
static_assert(kOpClassNames.size() == static_cast<std::size_t>(OpClass::kOther) + 1);

template <class Enum, std::size_t N>
std::optional<Enum> parse_name(const std::array<std::string_view, N>& names, std::string_view s) {
  auto it = std::find(names.begin(), names.end(), s);
  if (it == names.end()) return std::nullopt;
  return static_cast<Enum>(it - names.begin());
}

template <std::size_t N>
std::string list_of(const std::array<std::string_view, N>& names) {
  std::string out;
  for (auto n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim_line(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Cuts the first space-separated field off `rest`.
std::string_view next_field(std::string_view& rest) {
  std::size_t end = 0;
  while (end < rest.size() && !is_space(rest[end])) ++end;
  std::string_view field = rest.substr(0, end);
  rest = trim_line(rest.substr(end));
  return field;
}

Result<Rule> parse_rule(std::string_view line, const std::string& file, std::int64_t number) {
  std::string_view rest = line;
  Rule rule;
  rule.id = next_field(rest);
  std::string_view library = next_field(rest);
  std::string_view op_class = next_field(rest);
  rule.pattern = rest;
  rule.file = file;
  rule.line = number;
  if (rule.pattern.empty()) {
    return make_error(file, number,
                      "expected 'ID LIBRARY OP_CLASS PATTERN', got '" + std::string(line) + "'");
  }
  auto lib = parse_library(library);
  if (!lib) {
    return make_error(
        file, number,
        "unknown library '" + std::string(library) + "' (one of: " + list_of(kLibraryNames) + ")");
  }
  auto op = parse_op_class(op_class);
  if (!op) {
    return make_error(file, number,
                      "unknown op_class '" + std::string(op_class) +
                          "' (one of: " + list_of(kOpClassNames) + ")");
  }
  rule.library = *lib;
  rule.op_class = *op;
  return rule;
}

}  // namespace

std::string_view to_string(Library library) {
  return kLibraryNames[static_cast<std::size_t>(library)];
}
std::string_view to_string(OpClass op_class) {
  return kOpClassNames[static_cast<std::size_t>(op_class)];
}
std::optional<Library> parse_library(std::string_view name) {
  return parse_name<Library>(kLibraryNames, name);
}
std::optional<OpClass> parse_op_class(std::string_view name) {
  return parse_name<OpClass>(kOpClassNames, name);
}

Result<std::vector<Rule>> parse_rules(std::string_view text, const std::string& file) {
  std::vector<Rule> rules;
  std::unordered_map<std::string, std::int64_t> line_of_id;
  std::int64_t number = 0;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = trim_line(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    Result<Rule> rule = parse_rule(line, file, number);
    if (!rule) return rule.error();
    auto [it, is_new] = line_of_id.try_emplace(rule->id, number);
    if (!is_new) {
      return make_error(
          file, number,
          "rule id '" + rule->id + "' is already used on line " + std::to_string(it->second));
    }
    rules.push_back(std::move(rule).value());
  }
  return rules;
}

}  // namespace kernlens::names

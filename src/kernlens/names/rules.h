// Kernel rules: data that says which library launched a kernel and what operation it does,
// from its base name. The rules kernlens ships are data/kernel_rules.txt (its header documents
// the format), compiled into the binary; users add their own with `--rules FILE`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens::names {

// The library whose kernel it is (DESIGN.md §4). kUser: none of the others.
enum class Library : std::uint8_t {
  kCublas,
  kCutlass,
  kFlashAttn,
  kCudnn,
  kTriton,
  kNccl,
  kPytorch,
  kCub,
  kTensorrt,
  kTransformerEngine,
  kUser,
};

// What the kernel computes (DESIGN.md §4). kOther: none of the others, or unknown.
enum class OpClass : std::uint8_t {
  kGemm,
  kAttention,
  kNorm,
  kSoftmax,
  kElementwise,
  kReduction,
  kCopy,
  kGather,
  kScatter,
  kEmbedding,
  kSort,
  kRouting,  // MoE routing: top-k gating, expert histograms, token permutes by expert
  kComm,
  kMemset,
  kOther,
};

// The names the rules file, the JSON and the text output use: "flash-attn", "elementwise".
std::string_view to_string(Library library);
std::string_view to_string(OpClass op_class);
std::optional<Library> parse_library(std::string_view name);
std::optional<OpClass> parse_op_class(std::string_view name);

struct Rule {
  std::string id;  // reported with every kernel it classifies
  Library library = Library::kUser;
  OpClass op_class = OpClass::kOther;
  std::string pattern;  // RE2 syntax, searched in the base name
  std::string file;     // where the rule was written, for messages
  std::int64_t line = 0;
};

// The rules of a rules file's text, in file order. `file` names it in errors
// ("FILE:LINE: unknown op_class 'conv' ..."). Patterns are checked when a classifier is built.
Result<std::vector<Rule>> parse_rules(std::string_view text, const std::string& file);

// data/kernel_rules.txt as it was when kernlens was built.
std::string_view builtin_rules_text();
inline constexpr std::string_view kBuiltinRulesName = "kernel_rules.txt (built in)";

}  // namespace kernlens::names

// Kernel classification: a kernel name in any tool's spelling -> its base name, the library
// whose kernel it is, the operation class, the rule that decided, and for GEMMs what the
// name tells about the configuration.
//
//   auto classifier = KernelClassifier::load({});            // the built-in rules
//   Classification c = classifier->classify("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT");
//   // c.library == Library::kCublas, c.op_class == OpClass::kGemm, c.gemm->tile_m == 128
//
// The name is demangled when mangled (demangle.h), reduced to its base name (base_name.h),
// and the rules (rules.h) are tried on the base name in order: the first that matches wins.
// So every name of one base name gets one classification. A name no rule matches is
// library user, op_class other, rule "(none)": unknown kernels are kept, never dropped.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/names/gemm_name.h"
#include "kernlens/names/rules.h"

namespace kernlens::names {

inline constexpr std::string_view kNoRule = "(none)";

struct Classification {
  std::string base_name;
  Library library = Library::kUser;
  OpClass op_class = OpClass::kOther;
  // The id of the rule that matched. It points into the classifier's rules (a copy per name
  // would cost an allocation): valid as long as the classifier that classified the name.
  std::string_view rule = kNoRule;
  std::optional<GemmInfo> gemm;  // for op_class gemm, when the name tells something
};

class KernelClassifier {
 public:
  // Rules in order of precedence: the first that matches wins. Errors: a pattern that is
  // not valid RE2 syntax (FILE:LINE of the rule).
  static Result<KernelClassifier> create(std::vector<Rule> rules);
  // The rules of `rule_files`, in the order given, before the built-in rules.
  // Errors: a file that cannot be read or has a bad rule (FILE:LINE).
  static Result<KernelClassifier> load(std::span<const std::string> rule_files);

  KernelClassifier(KernelClassifier&&) noexcept;
  KernelClassifier& operator=(KernelClassifier&&) noexcept;
  ~KernelClassifier();

  Classification classify(std::string_view name) const;
  const std::vector<Rule>& rules() const { return rules_; }

 private:
  struct Matcher;  // the compiled patterns
  KernelClassifier(std::vector<Rule> rules, std::unique_ptr<Matcher> matcher);

  std::vector<Rule> rules_;
  std::unique_ptr<Matcher> matcher_;
};

}  // namespace kernlens::names

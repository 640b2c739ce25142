#include "kernlens/names/classify.h"

#include <algorithm>

#include <re2/re2.h>
#include <re2/set.h>

#include "kernlens/common/file.h"
#include "kernlens/names/mangled.h"

namespace kernlens::names {

// All patterns in one RE2::Set: one pass of one automaton over a base name finds every rule
// that matches, however many rules there are.
struct KernelClassifier::Matcher {
  explicit Matcher(const RE2::Options& options) : set(options, RE2::UNANCHORED) {}
  RE2::Set set;
};

namespace {

RE2::Options matcher_options() {
  RE2::Options options;
  options.set_log_errors(false);  // errors are returned, with the rule's FILE:LINE
  // The set's automaton is built lazily, state by state, as names are matched; the default
  // 8 MB can run out on a few hundred rules and millions of distinct names.
  options.set_max_mem(int64_t{64} << 20);
  return options;
}

}  // namespace

KernelClassifier::KernelClassifier(std::vector<Rule> rules, std::unique_ptr<Matcher> matcher)
    : rules_(std::move(rules)), matcher_(std::move(matcher)) {}
KernelClassifier::KernelClassifier(KernelClassifier&&) noexcept = default;
KernelClassifier& KernelClassifier::operator=(KernelClassifier&&) noexcept = default;
KernelClassifier::~KernelClassifier() = default;

Result<KernelClassifier> KernelClassifier::create(std::vector<Rule> rules) {
  auto matcher = std::make_unique<Matcher>(matcher_options());
  for (const auto& rule : rules) {
    std::string why;
    if (matcher->set.Add(rule.pattern, &why) < 0) {
      return make_error(rule.file, rule.line, "rule '" + rule.id + "': bad pattern: " + why);
    }
  }
  if (!matcher->set.Compile()) return make_error("", 0, "the kernel rules do not compile");
  return KernelClassifier(std::move(rules), std::move(matcher));
}

Result<KernelClassifier> KernelClassifier::load(std::span<const std::string> rule_files) {
  std::vector<Rule> rules;
  auto add = [&rules](Result<std::vector<Rule>> more) -> Status {
    if (!more) return more.error();
    for (auto& r : *more) rules.push_back(std::move(r));
    return ok_status();
  };
  for (const auto& path : rule_files) {
    auto file = InputBuffer::open(path);
    if (!file) return file.error();
    if (Status s = add(parse_rules(file->bytes(), path)); !s) return s.error();
  }
  if (Status s = add(parse_rules(builtin_rules_text(), std::string(kBuiltinRulesName))); !s) {
    return s.error();
  }
  return create(std::move(rules));
}

Classification KernelClassifier::classify(std::string_view name) const {
  Classification c;
  c.base_name = kernel_base_name(name);
  thread_local std::vector<int> matched;  // reused: one allocation per thread, not per name
  matched.clear();
  if (!matcher_->set.Match(c.base_name, &matched) || matched.empty()) return c;
  const Rule& rule =
      rules_[static_cast<std::size_t>(*std::min_element(matched.begin(), matched.end()))];
  c.library = rule.library;
  c.op_class = rule.op_class;
  c.rule = rule.id;
  if (c.op_class == OpClass::kGemm) c.gemm = parse_gemm_name(c.base_name);
  return c;
}

}  // namespace kernlens::names

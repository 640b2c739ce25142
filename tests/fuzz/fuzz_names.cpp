// libFuzzer harness: kernel names and kernel rules. The input is classified as a kernel name
// by the built-in rules (demangled first when it looks mangled), its GEMM fields are read,
// and it is parsed as a rules file; rules that parse and compile classify a few real names.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "kernlens/names/base_name.h"
#include "kernlens/names/classify.h"
#include "kernlens/names/gemm_name.h"

using namespace kernlens;

namespace {

bool only_blanks(std::string_view s) {
  return s.find_first_not_of(" \t") == std::string_view::npos;
}

void check_classification(const names::Classification& c, std::string_view name) {
  fuzz::check(c.base_name.empty() == only_blanks(name), "base name empty for a non-blank name");
  if (c.rule == names::kNoRule) {
    fuzz::check(c.library == names::Library::kUser && c.op_class == names::OpClass::kOther,
                "no rule matched, yet a class");
  }
  fuzz::check(!c.gemm || c.op_class == names::OpClass::kGemm, "GEMM fields for a non-GEMM");
}

void classify_with_rules(std::string_view text) {
  auto rules = names::parse_rules(text, "fuzz.txt");
  if (!rules) return fuzz::check_error_line(rules.error(), text);
  auto classifier = names::KernelClassifier::create(*rules);
  if (!classifier) return fuzz::check_error_line(classifier.error(), text);
  for (std::string_view name :
       {"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT", "_Z5scaleifPf",
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
        "at::native::MeanOps<float, float, float, float>, unsigned int, "
        "float, 4, 4> >(at::native::ReduceOp<float>)"}) {
    check_classification(classifier->classify(name), name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  names::Classification c = fuzz::builtin_classifier().classify(text);
  check_classification(c, text);
  fuzz::check(fuzz::builtin_classifier().classify(text).base_name == c.base_name,
              "classification is not repeatable");
  (void)names::parse_gemm_name(text);
  classify_with_rules(text);
  return 0;
}

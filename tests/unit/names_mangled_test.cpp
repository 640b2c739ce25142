// Mangled kernel names: LLVM's demangler on CUTLASS 3 names captured from real runs (which the
// C++ runtime's demangler rejects), the base names kernlens reads off the mangled prefix (they
// must equal the demangled names' on every real name), and the classification of names no
// demangler reads. The names come from tests/fixtures/names (public/README.md: where from).
#include <cxxabi.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <gtest/gtest.h>

#include "kernlens/names/base_name.h"
#include "kernlens/names/demangle.h"
#include "kernlens/names/mangled.h"
#include "test_util.h"

namespace kernlens::names {
namespace {

std::vector<std::string> lines_of(const std::string& relative) {
  std::ifstream in(test::fixture(relative));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  EXPECT_FALSE(lines.empty()) << relative;
  return lines;
}

// Lines 1 and 2 of public/moe_cutlass3.txt: TensorRT-LLM's SM90 and SGLang's SM100 grouped
// GEMMs; 3 and 4: the same kind of name cut short by a profiler's table and by issue 14.
const std::vector<std::string>& public_names() {
  static const std::vector<std::string> names = lines_of("names/public/moe_cutlass3.txt");
  return names;
}

bool runtime_demangles(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                   &std::free);
  return status == 0 && text;
}

TEST(Mangled, LlvmReadsCutlass3NamesTheRuntimeRejects) {
  for (std::size_t i : {0, 1}) {
    const std::string& name = public_names()[i];
    EXPECT_FALSE(runtime_demangles(name)) << "the premise: libiberty rejects line " << i + 1;
    auto text = demangle(name);
    ASSERT_TRUE(text) << "line " << i + 1;
    EXPECT_TRUE(text->starts_with("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<"
                                  "cutlass::gemm::GroupProblemShape<cute::tuple<"))
        << text->substr(0, 200);
    auto function = demangle_function_name(name + ".7");  // a clone suffix is dropped
    ASSERT_TRUE(function);
    EXPECT_TRUE(function->starts_with("cutlass::device_kernel<")) << function->substr(0, 80);
  }
}

TEST(Mangled, Cutlass3GemmsAreNamedByGenerationGroupingElementAndTile) {
  const auto& c = test::builtin_classifier();
  Classification sm90 = c.classify(public_names()[0]);
  EXPECT_EQ(sm90.base_name, "cutlass3x_sm90_grouped_gemm_bf16_128x16x64");
  EXPECT_EQ(sm90.library, Library::kCutlass);
  EXPECT_EQ(sm90.op_class, OpClass::kGemm);
  ASSERT_TRUE(sm90.gemm);
  EXPECT_TRUE(sm90.gemm->grouped);
  EXPECT_EQ(sm90.gemm->tile_m, 128);
  EXPECT_EQ(sm90.gemm->tile_n, 16);
  EXPECT_EQ(sm90.gemm->tile_k, 64);
  EXPECT_EQ(c.classify(public_names()[1]).base_name, "cutlass3x_sm100_grouped_gemm_e2m1_128x128x128");
  // PyTorch's grouped GEMM as Nsight Systems prints it, behind its architecture guard.
  EXPECT_EQ(c.classify(public_names()[4]).base_name, "cutlass3x_sm100_grouped_gemm_bf16_128x256x64");
}

TEST(Mangled, ANameNoDemanglerReadsIsClassifiedFromItsIdentifiers) {
  const auto& c = test::builtin_classifier();
  for (std::size_t i : {2, 3}) {
    const std::string& name = public_names()[i];
    EXPECT_FALSE(demangle(name)) << "the premise: line " << i + 1 << " is cut short";
    Classification cls = c.classify(name);
    EXPECT_EQ(cls.base_name, "cutlass3x_grouped_gemm") << "line " << i + 1;
    EXPECT_EQ(cls.library, Library::kCutlass);
    EXPECT_EQ(cls.op_class, OpClass::kGemm);  // a CUTLASS GEMM is never user/other
  }
  EXPECT_EQ(mangled_identifiers(public_names()[2]),
            (std::vector<std::string_view>{"cutlass", "device_kernel", "gemm", "kernel", "GemmUniversal",
                                           "GroupProblemShape", "cute", "t"}));
  // A PyTorch kernel cut short keeps its operation: the identifiers up to the cut name it.
  EXPECT_EQ(kernel_base_name("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_15binary_"
                             "internal10MulFunctorIfEEEESt5ar"),
            "at::vectorized_elementwise_kernel<mul>");
}

TEST(Mangled, ThePrefixOfAFreeFunctionsName) {
  EXPECT_EQ(mangled_function_prefix("_ZN13pytorch_flash16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi64EEEvNS_"
                                    "16Flash_fwd_paramsE"),
            "pytorch_flash::flash_fwd_kernel");
  EXPECT_EQ(mangled_function_prefix("_Z5scaleifPf"), "scale");
  EXPECT_EQ(mangled_function_prefix("_ZN4demo4fillEPfif"), "demo::fill");
  EXPECT_EQ(mangled_function_prefix("_ZN2at6native40_GLOBAL__N__0f1a8107_8_Shape_cu_49f7391c19CatArrayBatchedCopyI"),
            "at::native::(anonymous namespace)::CatArrayBatchedCopy");
  // What it assumes: the name ends at the first template argument list. No kernel is a member
  // of a class template (CUDA kernels are free functions); a member function reads as its class.
  EXPECT_EQ(mangled_function_prefix("_ZNSt6vectorIiE9push_backEv"), "std::vector");
  // Not the plain shape of a kernel's name, or cut before the name ends: ask a demangler.
  EXPECT_EQ(mangled_function_prefix("_ZN3fooC1Ev"), "");
  EXPECT_EQ(mangled_function_prefix("_ZN2at6nat"), "");
  EXPECT_EQ(mangled_function_prefix("_ZN2at6native"), "");
  EXPECT_EQ(mangled_function_prefix("saxpy"), "");
}

TEST(Mangled, EveryRealMangledNameGetsTheDemangledNamesBaseName) {
  // The prefix and identifier paths stand in for the demangler on most names; they must agree
  // with it on every mangled name of every capture.
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(test::fixture("names"))) {
    if (entry.path().extension() != ".txt") continue;
    std::ifstream in(entry.path());
    for (std::string name; std::getline(in, name);) {
      auto demangled = demangle(name);
      if (!is_mangled(name) || !demangled) continue;
      EXPECT_EQ(kernel_base_name(name), base_name(*demangled)) << entry.path().filename() << ": " << name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50u);
}

TEST(Names, KernelsTheIssueFoundMisfiled) {
  const auto& c = test::builtin_classifier();
  for (std::size_t i : {5, 6}) {  // cuBLAS's GEMV, as Nsight Systems prints it
    Classification gemv = c.classify(public_names()[i]);
    EXPECT_EQ(gemv.base_name, "internal::gemvx::kernel");
    EXPECT_EQ(gemv.library, Library::kCublas);
    EXPECT_EQ(gemv.op_class, OpClass::kGemm);
  }
  Classification softmax = c.classify(public_names()[7]);
  EXPECT_EQ(softmax.library, Library::kPytorch);
  EXPECT_EQ(softmax.op_class, OpClass::kSoftmax);
  EXPECT_EQ(c.classify(public_names()[8]).op_class, OpClass::kRouting);  // PyTorch's top-k
  for (std::size_t i : {10, 11, 12, 13, 14, 15}) {
    EXPECT_EQ(c.classify(public_names()[i]).op_class, OpClass::kRouting) << public_names()[i];
  }
  Classification moe_gemm = c.classify(public_names()[9]);  // TensorRT-LLM's fused MoE GEMM
  EXPECT_EQ(moe_gemm.op_class, OpClass::kGemm);
  ASSERT_TRUE(moe_gemm.gemm);
  EXPECT_TRUE(moe_gemm.gemm->grouped);
  for (std::size_t i : {17, 18}) EXPECT_EQ(c.classify(public_names()[i]).op_class, OpClass::kComm);
}

// Profilers' tables cut names anywhere: every prefix of every real mangled name is read
// (no demangler reads most of them) and gets a base name, never a crash or an empty name.
TEST(Mangled, EveryPrefixOfARealMangledNameIsRead) {
  const auto& c = test::builtin_classifier();
  std::size_t prefixes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(test::fixture("names"))) {
    if (entry.path().extension() != ".txt") continue;
    std::ifstream in(entry.path());
    for (std::string name; std::getline(in, name);) {
      if (!is_mangled(name)) continue;
      for (std::size_t n = 3; n <= name.size(); n += (name.size() > 400 ? 7 : 1)) {
        EXPECT_FALSE(c.classify(std::string_view(name).substr(0, n)).base_name.empty()) << name.substr(0, n);
        ++prefixes;
      }
    }
  }
  EXPECT_GT(prefixes, 5000u);
}

}  // namespace
}  // namespace kernlens::names

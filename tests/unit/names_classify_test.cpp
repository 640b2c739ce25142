// Kernel rules and the classifier: the rules file format, its errors, precedence, and what
// the built-in rules make of every real name in tests/fixtures/names.
#include "kernlens/names/classify.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "kernlens/names/base_name.h"
#include "test_util.h"

namespace kernlens::names {
namespace {

std::vector<Rule> parse_ok(std::string_view text) {
  auto rules = parse_rules(text, "r.txt");
  EXPECT_TRUE(rules.ok()) << (rules.ok() ? "" : rules.error().to_string());
  return rules.ok() ? *rules : std::vector<Rule>{};
}

std::string parse_error(std::string_view text) {
  auto rules = parse_rules(text, "r.txt");
  return rules.ok() ? "(parsed)" : rules.error().to_string();
}

TEST(Rules, Format) {
  auto rules = parse_ok(
      "# comment\n"
      "\n"
      "a-rule\tcublas   gemm\t^nvjet_\r\n"
      "  spaced  pytorch  elementwise  ^at::(foo bar)$  \n"
      "last user other x");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].id, "a-rule");
  EXPECT_EQ(rules[0].library, Library::kCublas);
  EXPECT_EQ(rules[0].op_class, OpClass::kGemm);
  EXPECT_EQ(rules[0].pattern, "^nvjet_");
  EXPECT_EQ(rules[0].line, 3);
  EXPECT_EQ(rules[1].pattern, "^at::(foo bar)$");
  EXPECT_EQ(rules[1].file, "r.txt");
  EXPECT_EQ(rules[2].line, 5);
  EXPECT_TRUE(parse_ok("").empty());
}

TEST(Rules, ErrorsSayFileLineAndWhat) {
  EXPECT_EQ(parse_error("\nid user other\n"),
            "r.txt:2: expected 'ID LIBRARY OP_CLASS PATTERN', got 'id user other'");
  EXPECT_EQ(parse_error("id nvidia gemm x"),
            "r.txt:1: unknown library 'nvidia' (one of: cublas, cutlass, flash-attn, cudnn, "
            "triton, nccl, "
            "pytorch, cub, tensorrt, transformer-engine, user)");
  EXPECT_EQ(
      parse_error("id user conv x").rfind("r.txt:1: unknown op_class 'conv' (one of: gemm, ", 0),
      0u);
  EXPECT_EQ(parse_error("a user other x\nb user other y\na user gemm z"),
            "r.txt:3: rule id 'a' is already used on line 1");
  auto bad = KernelClassifier::create(parse_ok("ok user other x\nbad user other (unclosed"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.error().to_string().rfind("r.txt:2: rule 'bad': bad pattern: missing ): (unclosed", 0),
      0u)
      << bad.error().to_string();
}

TEST(Rules, NamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(Library::kUser); ++i) {
    auto library = static_cast<Library>(i);
    EXPECT_EQ(parse_library(to_string(library)), library);
  }
  for (int i = 0; i <= static_cast<int>(OpClass::kOther); ++i) {
    auto op = static_cast<OpClass>(i);
    EXPECT_EQ(parse_op_class(to_string(op)), op);
  }
  EXPECT_FALSE(parse_library("User"));
}

TEST(Classifier, FirstMatchingRuleWinsAndUnknownIsUserOther) {
  auto c =
      KernelClassifier::create(parse_ok("first cublas gemm ^nvjet_sm90\n"
                                        "second cutlass gemm ^nvjet_\n"
                                        "gemm-anywhere user gemm gemm\n"));
  ASSERT_TRUE(c.ok());
  Classification nvjet = c->classify("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT");
  EXPECT_EQ(nvjet.rule, "first");
  EXPECT_EQ(nvjet.library, Library::kCublas);
  ASSERT_TRUE(nvjet.gemm);
  EXPECT_EQ(nvjet.gemm->tile_m, 128);
  EXPECT_EQ(c->classify("nvjet_sm100_x").rule, "second");
  EXPECT_EQ(c->classify("void my_gemm<1>(int)").rule, "gemm-anywhere");  // searched, not anchored
  Classification unknown = c->classify("void mystery<3>(float *)");
  EXPECT_EQ(unknown.base_name, "mystery");
  EXPECT_EQ(unknown.library, Library::kUser);
  EXPECT_EQ(unknown.op_class, OpClass::kOther);
  EXPECT_EQ(unknown.rule, "(none)");
  EXPECT_FALSE(unknown.gemm);
  auto empty = KernelClassifier::create({});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->classify("nvjet_sm90_x").rule, "(none)");
}

TEST(Classifier, MangledNamesAreDemangledFirst) {
  const auto& c = test::builtin_classifier();
  Classification mangled =
      c.classify("_ZN7cutlass7Kernel2I42cutlass_80_simt_sgemm_128x32_8x5_nn_align1EEvNT_6ParamsE");
  EXPECT_EQ(mangled.base_name, "cutlass_80_simt_sgemm_128x32_8x5_nn_align1");
  EXPECT_EQ(mangled.library, Library::kCublas);
  EXPECT_EQ(mangled.op_class, OpClass::kGemm);
}

TEST(Classifier, UserRuleFilesComeFirstInTheOrderGiven) {
  test::TempDir dir;
  dir.write("a.txt", "mine-a user attention ^nvjet_sm90_tst_64x8\n");
  dir.write("b.txt", "# b\nmine-b user norm ^nvjet_\n");
  dir.write("bad.txt", "\n\nbad user sometimes x\n");
  const std::string files[] = {dir.file("a.txt"), dir.file("b.txt")};
  auto c = KernelClassifier::load(files);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->classify("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT").rule, "mine-a");
  EXPECT_EQ(c->classify("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT").rule, "mine-b");
  EXPECT_EQ(c->classify("triton_poi_fused_add_0").rule, "triton-pointwise");  // built in
  const std::string bad[] = {dir.file("bad.txt")};
  auto error = KernelClassifier::load(bad);
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(
      error.error().to_string().rfind(dir.file("bad.txt") + ":3: unknown op_class 'sometimes'", 0),
      0u);
  const std::string missing[] = {dir.file("missing.txt")};
  EXPECT_FALSE(KernelClassifier::load(missing).ok());
}

// ---- The real names in tests/fixtures/names -------------------------------------------------

std::vector<std::string> names_in(const std::string& file) {
  std::ifstream in(test::fixture("names/" + file));
  EXPECT_TRUE(in) << file;
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) names.push_back(line);
  return names;
}

std::set<std::string> base_names_in(const std::string& file) {
  std::set<std::string> out;
  for (const auto& name : names_in(file))
    out.insert(test::builtin_classifier().classify(name).base_name);
  return out;
}

bool includes(const std::set<std::string>& all, const std::set<std::string>& part) {
  return std::includes(all.begin(), all.end(), part.begin(), part.end());
}

// One program's kernels named by ncu (demangled, mangled) and by the PyTorch profiler.
TEST(FixtureNames, EverySourceGivesTheSameBaseNames) {
  for (const std::string run : {"demo", "gemm_zoo", "llama_flash", "gpt2_fp32", "qwen_compile"}) {
    EXPECT_EQ(base_names_in("ncu_" + run + ".txt"), base_names_in("ncu_" + run + "_mangled.txt"))
        << run;
  }
  EXPECT_EQ(base_names_in("ncu_gemm_zoo.txt"), base_names_in("torch_gemm_zoo.txt"));
  // ncu profiled the program from its start and stopped after 300 launches (-c 300); the trace
  // holds the whole generate() call and nothing before it, such as torch.randint making the
  // prompt.
  for (const std::string run : {"llama_flash", "gpt2_fp32"}) {
    std::set<std::string> ncu = base_names_in("ncu_" + run + ".txt");
    EXPECT_EQ(ncu.erase("at::distribution_elementwise_grid_stride_kernel<random_from_to>"), 1u);
    EXPECT_TRUE(includes(base_names_in("torch_" + run + ".txt"), ncu)) << run;
  }
}

TEST(FixtureNames, EveryNameIsClassifiedByARule) {
  for (const auto& entry : std::filesystem::directory_iterator(test::fixture("names"))) {
    if (entry.path().extension() != ".txt") continue;
    std::string file = entry.path().filename().string();
    for (const auto& name : names_in(file)) {
      Classification c = test::builtin_classifier().classify(name);
      EXPECT_NE(c.rule, "(none)") << file << ": " << name;
      EXPECT_NE(c.op_class, OpClass::kOther) << file << ": " << name;
    }
  }
}

}  // namespace
}  // namespace kernlens::names

// The GPU peak table: the built-in data and the parser's errors.
#include <gtest/gtest.h>

#include "kernlens/analysis/peaks.h"

namespace kernlens::analysis {
namespace {

TEST(GpuPeaks, BuiltinTableHasTheGpusLlmEngineersRunOn) {
  auto parsed = GpuPeakTable::parse(builtin_gpu_peaks_text(), "data/gpu_peaks.txt");
  ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
  for (auto name : {"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H200", "NVIDIA A100-SXM4-80GB",
                    "NVIDIA A100-SXM4-40GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-40GB", "NVIDIA L40S",
                    "NVIDIA GeForce RTX 4090", "NVIDIA B200"}) {
    const PeakRates* p = builtin_gpu_peaks().find(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_FALSE(p->source.empty()) << name;
    EXPECT_TRUE(p->dram_bytes_per_s) << name;
    EXPECT_TRUE(p->flops(FlopPath::kTensorBf16)) << name;
    EXPECT_TRUE(p->flops(FlopPath::kSimtFp32)) << name;
  }
}

TEST(GpuPeaks, DensePeaksOfTheH100MatchWhatNcuReports) {
  const PeakRates* h100 = builtin_gpu_peaks().find("nvidia h100 80gb hbm3 ");  // case, spaces
  ASSERT_NE(h100, nullptr);
  // ncu: bf16 hgmma peak_sustained 540,672 FLOP/cycle = 4,096 x 132 SMs; x 1.83 GHz boost.
  EXPECT_NEAR(*h100->flops(FlopPath::kTensorBf16), 540672 * 1.83e9, 0.1e12);
  EXPECT_NEAR(*h100->flops(FlopPath::kTensorFp8), 2 * *h100->flops(FlopPath::kTensorBf16), 0.2e12);
  // ncu: dram__bytes.sum.peak_sustained 1,280 B/cycle x 2.619 GHz memory clock.
  EXPECT_NEAR(*h100->dram_bytes_per_s, 1280 * 2.619e9, 0.01e12);
  EXPECT_DOUBLE_EQ(*h100->flops(FlopPath::kTensorTf32), 494.7e12);
  EXPECT_EQ(builtin_gpu_peaks().find("NVIDIA H100"), nullptr);  // no guessing between parts
}

TEST(GpuPeaks, PathsADatasheetDoesNotGiveStayAbsent) {
  const PeakRates* l40s = builtin_gpu_peaks().find("NVIDIA L40S");
  ASSERT_NE(l40s, nullptr);
  EXPECT_FALSE(l40s->flops(FlopPath::kSimtFp64));
  EXPECT_FALSE(l40s->flops(FlopPath::kTensorFp64));
}

TEST(GpuPeaks, ParseErrorsNameTheLine) {
  struct Case {
    const char* text;
    int line;
    const char* message;
  };
  const Case cases[] = {
      {"fp32 1\n", 1, "a peak outside a '[DEVICE NAME]' section"},
      {"[A]\nsource s\nfp33 1\n", 3, "unknown key 'fp33'"},
      {"[A]\nsource s\nfp32 -1\n", 3, "'fp32': expected a positive number, found '-1'"},
      {"[A]\nsource s\nfp32 1e\n", 3, "expected a positive number"},
      {"[A]\nsource s\nfp32\n", 3, "'fp32' has no value"},
      {"[A]\nfp32 1\n[B]\nsource s\n", 1, "GPU section has no 'source' line"},
      {"[A]\nsource s\n[a]\nsource t\n", 3, "GPU 'a' is listed twice"},
      {"[ ]\n", 1, "expected a section header"},
  };
  for (const auto& c : cases) {
    auto r = GpuPeakTable::parse(c.text, "peaks.txt");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().file, "peaks.txt");
    EXPECT_EQ(r.error().line, c.line) << c.text;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

TEST(GpuPeaks, UnitsAreTeraAndCommentsAreSkipped) {
  auto r = GpuPeakTable::parse("# x\n\n[GPU X]\nsource sheet\n  tensor_bf16 2.5 \ndram 1.5\n", "t");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const PeakRates* g = r->find("GPU X");
  ASSERT_NE(g, nullptr);
  EXPECT_DOUBLE_EQ(*g->flops(FlopPath::kTensorBf16), 2.5e12);
  EXPECT_DOUBLE_EQ(*g->dram_bytes_per_s, 1.5e12);
  EXPECT_EQ(g->source, "sheet");
  EXPECT_FALSE(g->flops(FlopPath::kSimtFp32));
}

}  // namespace
}  // namespace kernlens::analysis

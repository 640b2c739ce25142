// parse_gemm_name(): what cuBLAS and CUTLASS kernel names tell (real names from
// tests/fixtures/names, plus the CUTLASS and cuBLAS spellings the comments name).
#include "kernlens/names/gemm_name.h"

#include <gtest/gtest.h>

namespace kernlens::names {
namespace {

TEST(GemmName, Nvjet) {
  auto g = parse_gemm_name("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_NNT");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->tile_m, 256);
  EXPECT_EQ(g->tile_n, 128);
  EXPECT_EQ(g->tile_k, 64);
  EXPECT_EQ(g->stages, 4);
  EXPECT_EQ(g->cluster, "1x2");
  EXPECT_EQ(g->layout, "NNT");
  EXPECT_EQ(g->transposed_a(), false);
  EXPECT_EQ(g->transposed_b(), false);
  EXPECT_TRUE(g->bias);
  EXPECT_FALSE(g->split_k);

  auto split = parse_gemm_name("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT");
  ASSERT_TRUE(split);
  EXPECT_TRUE(split->split_k);
  EXPECT_FALSE(split->bias);
  EXPECT_EQ(split->transposed_a(), true);
  EXPECT_EQ(split->transposed_b(), false);
  EXPECT_EQ(split->stages, 16);
  EXPECT_EQ(split->cluster, "4x1");
}

TEST(GemmName, CublasXmma) {
  auto g = parse_gemm_name(
      "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_warpgroupsize1x1x1_execute_segment_"
      "k_off_kernel__5x_cublas");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->tile_m, 64);
  EXPECT_EQ(g->tile_n, 128);
  EXPECT_EQ(g->tile_k, 32);
  EXPECT_EQ(g->stages, 0);
  EXPECT_EQ(g->layout, "nn");
  EXPECT_TRUE(g->cluster.empty());

  auto sm80 = parse_gemm_name(
      "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3_warpsize1x4x1_ffma_aligna4_"
      "alignc4_execute_kernel__5x_cublas");
  ASSERT_TRUE(sm80);
  EXPECT_EQ(sm80->stages, 3);
  EXPECT_EQ(sm80->layout, "tn");
  EXPECT_EQ(sm80->transposed_a(), true);
}

TEST(GemmName, CutlassScheme) {
  auto g = parse_gemm_name(
      "cutlass_80_wmma_tensorop_i161616gemm_s8_forwardCompat_128x128_32x2_nn_align4");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->tile_m, 128);
  EXPECT_EQ(g->tile_n, 128);
  EXPECT_EQ(g->tile_k, 32);
  EXPECT_EQ(g->stages, 2);
  EXPECT_EQ(g->layout, "nn");
  EXPECT_TRUE(g->cluster.empty());
  auto ampere = parse_gemm_name("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn");
  ASSERT_TRUE(ampere);
  EXPECT_EQ(ampere->tile_k, 32);
  EXPECT_EQ(ampere->stages, 5);
  EXPECT_EQ(ampere->layout, "tn");
}

TEST(GemmName, WhatOtherNamesTell) {
  auto reduce = parse_gemm_name("cublasLt::splitKreduce_kernel");
  ASSERT_TRUE(reduce);
  EXPECT_TRUE(reduce->split_k);
  EXPECT_FALSE(reduce->has_tile());
  auto small_n = parse_gemm_name("gemmSN_TN_kernel");
  ASSERT_TRUE(small_n);
  EXPECT_EQ(small_n->layout, "TN");
  EXPECT_FALSE(parse_gemm_name("at::vectorized_elementwise_kernel<mul>"));
  EXPECT_FALSE(parse_gemm_name(""));
  EXPECT_FALSE(parse_gemm_name("_x_0x4_99999999999999999999x2_"));
  GemmInfo none;
  EXPECT_FALSE(none.transposed_a());
}

// Every spelling of a grouped GEMM is seen, "group_gemm" included: its underscore never
// matched when only the name's side of the comparison was folded to lower case.
TEST(GemmName, GroupedInAnySpelling) {
  for (const char* name : {"cutlass_sm90_group_gemm_bf16_128x128x64_1x1x1", "Sm90GroupedGemm_128x256x64",
                           "fused_moe_kernel_64x64x32", "sm90_xmma_GROUP_GEMM_bf16_tilesize128x128x64"}) {
    auto g = parse_gemm_name(name);
    ASSERT_TRUE(g) << name;
    EXPECT_TRUE(g->grouped) << name;
  }
  auto plain = parse_gemm_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->grouped);
}

}  // namespace
}  // namespace kernlens::names

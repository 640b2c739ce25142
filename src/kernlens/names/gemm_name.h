// What a GEMM kernel's name tells about it. cuBLAS (nvjet_*, sm90_xmma_gemm_*,
// ampere_*gemm*, cutlass_80_* built into cuBLAS) and CUTLASS name their kernels by their
// configuration, "_"-separated:
//
//   nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT
//              tile MxN ^^^^^^ ^^^^ ^^^ cluster   ^^^^ ^^^ layouts of A, B (and C)
//                        K x stages          bias epilogue
//   cutlass_80_simt_sgemm_128x32_8x5_nn_align1        tile 128x32, K 8, 5 stages, layouts nn
//   sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_warpgroupsize1x1x1_...
//   ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn
//
// CUTLASS documents its scheme (MxN, then K x stages, then the layouts); cuBLAS's own names
// follow it, and nvjet names are read the same way, with a third AxB for the cluster shape.
// A layout letter is T (transposed) or N, in BLAS's column-major terms: PyTorch's
// nn.Linear runs as TN (the weight transposed), a plain matmul as NN.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernlens::names {

struct GemmInfo {
  int tile_m = 0, tile_n = 0, tile_k = 0;  // the CTA tile; 0 where the name does not say
  int stages = 0;                          // pipeline stages; 0 where the name does not say
  std::string cluster;                     // thread block cluster, "1x2"; empty if unsaid
  std::string layout;                      // as the name writes it: "TNT", "nn"; or empty
  bool bias = false;                       // the name says it adds a bias in its epilogue
  bool split_k = false;                    // split-K: the K loop is split over CTAs
  bool grouped = false;                    // grouped: one launch computes many GEMMs (MoE experts)

  bool has_tile() const { return tile_m > 0; }
  // Whether A / B is transposed; std::nullopt when the layout is unknown.
  std::optional<bool> transposed_a() const;
  std::optional<bool> transposed_b() const;
};

// What the base name of a GEMM kernel tells; std::nullopt when it tells nothing.
std::optional<GemmInfo> parse_gemm_name(std::string_view base_name);

}  // namespace kernlens::names

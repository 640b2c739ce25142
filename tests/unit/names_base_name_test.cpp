// base_name(): one short name per kernel, whichever tool spelled it. The pairs below are real
// names of one kernel as Nsight Compute and a PyTorch trace print them (tests/fixtures/names).
#include "kernlens/names/base_name.h"

#include <gtest/gtest.h>

#include "kernlens/names/demangle.h"

namespace kernlens::names {
namespace {

TEST(Demangle, MangledNamesOnly) {
  EXPECT_EQ(demangle("_ZN4demo4fillEPfif"), "demo::fill(float*, int, float)");
  EXPECT_EQ(demangle("_Z9block_sumILi256EEvPKfPfi"),
            "void block_sum<256>(float const*, float*, int)");
  EXPECT_FALSE(demangle("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT"));
  EXPECT_FALSE(demangle("demo::fill(float *, int, float)"));
  EXPECT_FALSE(demangle("_Z"));  // rejected by the demangler
  EXPECT_FALSE(demangle("_Zfoo$bar"));
  EXPECT_FALSE(demangle(std::string_view("_Z5sc\0ale", 9)));
}

TEST(BaseName, DropsReturnTypeArgumentsAndTemplateArguments) {
  EXPECT_EQ(base_name("void block_sum<256>(const float *, float *, int)"), "block_sum");
  EXPECT_EQ(base_name("demo::fill(float *, int, float)"), "demo::fill");
  EXPECT_EQ(base_name("saxpy(int, float, const float *, float *)"), "saxpy");
  EXPECT_EQ(base_name("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT"),
            "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT");
  EXPECT_EQ(
      base_name("  void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, "
                "long, long, long, long, bool) "),
      "at::vectorized_gather_kernel");
  EXPECT_EQ(
      base_name("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<"
                "float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"),
      "fmha_cutlassF_f32_aligned_64x64_rf_sm80");
}

TEST(BaseName, AnonymousNamespacesAndNativeAreLeftOut) {
  const char* ncu =
      "void at::<unnamed>::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, "
      "(int)-2>(cuda::TensorInfo<T1, T3>, cuda::TensorInfo<const T1, T3>, cuda::TensorInfo<const "
      "T2, T3>, int, int, T3, long)";
  const char* trace =
      "void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, long, unsigned "
      "int, 2, 2, -2>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::"
      "TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, "
      "unsigned int>, int, int, unsigned int, long)";
  EXPECT_EQ(base_name(ncu), "at::indexSelectSmallIndex");
  EXPECT_EQ(base_name(trace), "at::indexSelectSmallIndex");
  EXPECT_EQ(base_name("void <unnamed>::k<int>(int)"), "k");
  EXPECT_EQ(base_name("void (anonymous namespace)::k<int>(int)"), "k");
  EXPECT_EQ(base_name("void native::k(int)"), "native::k");  // only at::native is one with at::
}

TEST(BaseName, TensorIteratorKernelsKeepTheirOperation) {
  const char* ncu =
      "void at::elementwise_kernel<128, 4, void at::gpu_kernel_impl_nocast<at::BinaryFunctor<c10::"
      "BFloat16, c10::BFloat16, c10::BFloat16, binary_internal::MulFunctor<float>>>(at::"
      "TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)";
  const char* trace =
      "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
      "BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::"
      "MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10:"
      ":BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::"
      "{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<...>)";
  EXPECT_EQ(base_name(ncu), "at::elementwise_kernel<mul>");
  EXPECT_EQ(base_name(trace), "at::elementwise_kernel<mul>");
  EXPECT_EQ(
      base_name("void at::vectorized_elementwise_kernel<8, at::CUDAFunctor_add<c10::BFloat16>, "
                "std::array<char *, 3>>(int, T2, T3)"),
      "at::vectorized_elementwise_kernel<add>");
  EXPECT_EQ(
      base_name("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
                "at::native::ArgMaxOps<float>, unsigned int, long, 4, 4> >(at::native::"
                "ReduceOp<c10::BFloat16, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4>)"),
      "at::reduce_kernel<argmax>");
  EXPECT_EQ(base_name("void at::vectorized_elementwise_kernel<4, void at::<unnamed>::"
                      "pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase &, T2)::"
                      "[lambda(float) (instance 1)], std::array<char *, 2>>(int, T2, T3)"),
            "at::vectorized_elementwise_kernel<pow_tensor_scalar>");
  EXPECT_EQ(
      base_name("void (anonymous namespace)::elementwise_kernel_with_index<int, at::native::"
                "arange_cuda_out(c10::Scalar const&, c10::Scalar const&, c10::Scalar const&, at::"
                "Tensor&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::"
                "{lambda(long)#1}>(int, ...)"),
      "elementwise_kernel_with_index<arange>");
  // A functor kernlens does not know the spelling of: the kernel keeps its plain name.
  EXPECT_EQ(
      base_name("void at::vectorized_elementwise_kernel<4, at::Foo<float>, std::array<char *, 2>>"
                "(int, T2, T3)"),
      "at::vectorized_elementwise_kernel");
}

// Nsight Compute at times prints PyTorch kernels without "at::" and "<unnamed>" as "unnamed>".
TEST(BaseName, NsightComputeLostNamespaces) {
  EXPECT_EQ(base_name("void vectorized_elementwise_kernel<8, FillFunctor<c10::BFloat16>, "
                      "std::array<char *, 1>>(int, T2, T3)"),
            "at::vectorized_elementwise_kernel<fill>");
  EXPECT_EQ(
      base_name("void unnamed>::distribution_elementwise_grid_stride_kernel<unsigned int, 4, "
                "void templates::random_from_to_kernel<CUDAGeneratorImpl *>(TensorIteratorBase &, "
                "unsigned long, long, T1)::[lambda() (instance 1)], void unnamed>::distribution_"
                "nullary_kernel<long, unsigned int>(T4)>(long, T3, T4)"),
      "at::distribution_elementwise_grid_stride_kernel<random_from_to>");
  EXPECT_EQ(base_name("void my::vectorized_elementwise_kernel<FillFunctor<int>>(int)"),
            "my::vectorized_elementwise_kernel");  // another namespace: not PyTorch's
}

TEST(BaseName, WrapperKernelsAreNamedByWhatTheyWrap) {
  EXPECT_EQ(
      base_name("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(T1::Params)"),
      "cutlass_80_simt_sgemm_128x32_8x5_nn_align1");
  EXPECT_EQ(base_name("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>("
                      "cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)"),
            "cutlass_80_simt_sgemm_128x32_8x5_nn_align1");
  EXPECT_EQ(
      base_name("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<"
                "int, int>, void>>(T1::Params)"),
      "cutlass3x_gemm");  // a CUTLASS 3 GEMM: named by what its arguments say (none here)
  EXPECT_EQ(base_name("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<"
                      "flash::CollectiveMainloopFwdSm90<2, int>>>>(T1::Params)"),
            "flash::FlashAttnFwdSm90");  // an architecture guard wraps too
  EXPECT_EQ(base_name("void cutlass::Kernel<>(int)"), "cutlass::Kernel");
}

TEST(BaseName, TritonKernelsLoseInductorsNumber) {
  EXPECT_EQ(base_name("triton_poi_fused__unsafe_view_mul_silu_7"),
            "triton_poi_fused__unsafe_view_mul_silu");
  EXPECT_EQ(base_name("triton_red_fused_sum_0"), "triton_red_fused_sum");
  EXPECT_EQ(base_name("triton_7"), "triton_7");
  EXPECT_EQ(base_name("triton__3"), "triton__3");
  EXPECT_EQ(base_name("sgemm_7"), "sgemm_7");
}

TEST(BaseName, OperatorsAndOddInputsNeverLoseTheName) {
  EXPECT_EQ(base_name("void ns::apply<ns::operator<, 2>(int)"), "ns::apply");
  EXPECT_EQ(base_name("void ns::f<decltype (a->b)>(int)"), "ns::f");
  EXPECT_EQ(base_name("void at::native::elementwise_kernel<128, 4"),
            "at::elementwise_kernel");  // cut short
  EXPECT_EQ(base_name(""), "");
  EXPECT_EQ(base_name("   "), "");
  EXPECT_EQ(base_name("("), "(");
  EXPECT_EQ(base_name("<unnamed>"), "<unnamed>");
  EXPECT_EQ(base_name("unnamed>"), "unnamed>");  // found by fuzz_names
  EXPECT_EQ(base_name(">>>)]}"), ">>>)]}");
  EXPECT_FALSE(base_name("void (").empty());
}

}  // namespace
}  // namespace kernlens::names

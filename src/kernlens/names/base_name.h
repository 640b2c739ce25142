// A kernel's base name: a short, stable name for grouping the instantiations of one kernel.
//
// From a demangled name it keeps the namespace-qualified function name and drops the return
// type, the parameters and the template arguments, with these exceptions:
//   - anonymous namespaces are left out, however spelled: "(anonymous namespace)" (the C++
//     runtime's demangler, PyTorch traces), "<unnamed>" and "unnamed>" (Nsight Compute);
//   - "at::native::" is written "at::": Nsight Compute leaves "native" out of PyTorch's
//     kernel names (and at times "at::" too), PyTorch traces and the demangler keep it;
//   - a PyTorch TensorIterator kernel, one template run for every elementwise or reduction
//     operation, keeps the operation its functor or lambda names:
//     at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float,
//     float, at::native::binary_internal::MulFunctor<float>>, ...>  ->
//     at::vectorized_elementwise_kernel<mul>;
//   - a wrapper kernel named by its only template argument (cutlass::Kernel2<X>,
//     cutlass::device_kernel<X>, and architecture guards enable_*<X>) is named X;
//   - a CUTLASS 3 GEMM (cutlass::gemm::kernel::GemmUniversal<...>, one template for all of
//     them) is named as CUTLASS's generator names kernels, from its template arguments:
//     cutlass3x_sm90_grouped_gemm_bf16_128x16x64 (SM generation, grouped or not, element
//     type, CTA tile);
//   - Triton kernels lose the number Inductor appends: triton_poi_fused_add_3 ->
//   triton_poi_fused_add.
// The spellings the tools disagree on (`char *` / `char*`, `(int)-2` / `-2`, `2u` / `2`)
// are all inside what is dropped, so ncu, nsys and PyTorch traces give one base name.
#pragma once

#include <string>
#include <string_view>

namespace kernlens::names {

// The base name of a demangled kernel name (see above). Never empty for a name that has a
// character other than a space; a name it cannot make sense of is returned trimmed.
std::string base_name(std::string_view demangled_name);

// How much of its template arguments the base name of a kernel whose qualified function name
// is `base` (a base name without template arguments, e.g. "cutlass::device_kernel") needs.
enum class TemplateNaming {
  kNone,        // none
  kOperation,   // a TensorIterator kernel: the identifier that names its operation
  kStructure,   // a wrapper or a CUTLASS 3 GEMM: which argument is which
};
TemplateNaming template_naming(std::string_view base);

// The operation one identifier of a TensorIterator kernel's template arguments names, lower
// case ("mul" for MulFunctor, "cos" for cos_kernel_cuda); empty when it names none.
std::string operation_of_identifier(std::string_view identifier);

}  // namespace kernlens::names

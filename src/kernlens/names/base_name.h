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
//   - a wrapper kernel named by its only template argument (cutlass::Kernel2<X>) is named X;
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

}  // namespace kernlens::names

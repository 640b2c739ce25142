// Kernel names read from their mangled text (Itanium C++ ABI), without a demangler where that
// is enough, and when no demangler reads them (a name cut short by a profiler's table, a
// mangling newer than the demanglers).
//
// A CUDA kernel is a free function: its mangled name starts with its namespaces and its own
// name as length-prefixed identifiers ("_ZN2at6native13reduce_kernelILi512E..."), and what
// follows the first template argument list belongs to its arguments. So the qualified name of
// most kernels is read off the prefix, and only the kernels whose base name is made from their
// template arguments (wrappers, PyTorch's TensorIterator kernels, CUTLASS 3) need demangling.
// This keeps classifying mangled names as fast as demangled ones (bench/bench_names.cpp).
//
//   kernel_base_name("_ZN13pytorch_flash16flash_fwd_kernelI...")  // "pytorch_flash::flash_fwd_kernel"
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernlens::names {

// The function's qualified name from the mangled prefix ("at::native::reduce_kernel"; an
// anonymous namespace as "(anonymous namespace)"), when the prefix is the plain shape of a
// free function in namespaces; empty otherwise (then ask a demangler).
std::string mangled_function_prefix(std::string_view mangled);

// The length-prefixed identifiers of a mangled text, in order ("cutlass", "device_kernel",
// "gemm", ...). A heuristic for text no demangler reads: numbers that are literal values,
// substitution or template parameter indices are skipped, an identifier cut short is kept.
std::vector<std::string_view> mangled_identifiers(std::string_view mangled);

// The base name (names/base_name.h) of a kernel name in any spelling: demangled, or mangled
// (from its prefix; else demangled by LLVM's or the C++ runtime's demangler; else made from
// its identifiers, so that a CUTLASS GEMM whose name no demangler reads still reads as one).
std::string kernel_base_name(std::string_view name);

}  // namespace kernlens::names

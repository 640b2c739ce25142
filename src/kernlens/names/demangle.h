// Demangling of Itanium C++ ABI names ("_Z..."), the spelling of nvcc's kernel symbols that
// ncu prints with `--print-kernel-base mangled` and CUPTI reports.
//
// LLVM's demangler reads first (Debian's llvm-dev, LLVMDemangle): it reads CUTLASS 3's kernel
// names, which the C++ runtime's demangler (libiberty, as binutils' c++filt) rejects; the
// runtime's demangler is tried second. When neither reads a name, names/mangled.h classifies it
// from its mangled text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernlens::names {

// Whether `name` is spelled as a mangled symbol.
bool is_mangled(std::string_view name);

// The demangled name; std::nullopt when `name` is not mangled or no demangler reads it
// (then the name is best used as it is).
std::optional<std::string> demangle(std::string_view name);

// The function's qualified name with its template arguments, without return type and
// parameters ("at::native::reduce_kernel<512, 1, ...>"): what a base name is made of, printed
// without the rest (LLVM's ItaniumPartialDemangler). A clone suffix (".7") is dropped. Falls
// back to the whole demangled name; std::nullopt as demangle().
std::optional<std::string> demangle_function_name(std::string_view name);

}  // namespace kernlens::names

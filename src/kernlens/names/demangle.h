// Demangling of Itanium C++ ABI names ("_Z..."), the spelling of nvcc's kernel symbols that
// ncu prints with `--print-kernel-base mangled` and CUPTI reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernlens::names {

// Whether `name` is spelled as a mangled symbol.
bool is_mangled(std::string_view name);

// The demangled name; std::nullopt when `name` is not mangled or the demangler rejects it
// (then the name is best used as it is).
std::optional<std::string> demangle(std::string_view name);

}  // namespace kernlens::names

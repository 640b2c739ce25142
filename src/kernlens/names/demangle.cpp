#include "kernlens/names/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace kernlens::names {

bool is_mangled(std::string_view name) {
  return name.starts_with("_Z");
}

std::optional<std::string> demangle(std::string_view name) {
  if (!is_mangled(name)) return std::nullopt;
  const std::string symbol(name);  // the demangler reads a NUL-terminated string
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !text) return std::nullopt;
  return std::string(text.get());
}

}  // namespace kernlens::names

#include "kernlens/names/demangle.h"

#include <cxxabi.h>
#include <llvm/Demangle/Demangle.h>

#include <cstdlib>
#include <memory>

namespace kernlens::names {
namespace {

using MallocText = std::unique_ptr<char, decltype(&std::free)>;

// One partial demangler per thread, reused: it keeps its arena and its output buffer between
// names (a classification run demangles thousands).
class PartialDemangler {
 public:
  std::optional<std::string> function_name(const std::string& symbol) {
    if (demangler_.partialDemangle(symbol.c_str()) || !demangler_.isFunction()) return std::nullopt;
    // LLVM grows the buffer with realloc and sets `size` to the length it printed (with the NUL).
    std::size_t size = capacity_;
    char* out = demangler_.getFunctionName(buffer_.get(), &size);
    if (!out) return std::nullopt;
    if (out != buffer_.get()) {
      (void)buffer_.release();  // realloc took it
      buffer_.reset(out);
    }
    capacity_ = std::max(capacity_, size);
    return std::string(out, size > 0 ? size - 1 : 0);
  }

 private:
  llvm::ItaniumPartialDemangler demangler_;
  MallocText buffer_{static_cast<char*>(std::malloc(kInitialSize)), &std::free};
  std::size_t capacity_ = kInitialSize;
  static constexpr std::size_t kInitialSize = 1024;
};

}  // namespace

bool is_mangled(std::string_view name) {
  return name.starts_with("_Z");
}

std::optional<std::string> demangle(std::string_view name) {
  if (!is_mangled(name)) return std::nullopt;
  const std::string symbol(name);  // the demanglers read NUL-terminated strings
  int status = 0;
  MallocText text(llvm::itaniumDemangle(symbol.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !text) text.reset(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status));
  if (status != 0 || !text) return std::nullopt;
  return std::string(text.get());
}

std::optional<std::string> demangle_function_name(std::string_view name) {
  if (!is_mangled(name)) return std::nullopt;
  // A clone suffix (".7", ".cold") follows the encoding; no '.' occurs inside one.
  const std::string symbol(name.substr(0, name.find('.')));
  thread_local PartialDemangler demangler;
  if (auto function = demangler.function_name(symbol)) return function;
  return demangle(name);
}

}  // namespace kernlens::names

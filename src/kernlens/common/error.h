// Errors as values. An Error says where (file, line) and what was wrong or expected;
// Result<T> carries either a value or an Error. Exceptions are used only at the CLI boundary.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace kernlens {

struct Error {
  std::string file;     // the path as the user gave it; empty when not about a file
  std::int64_t line{};  // 1-based; 0 when the error is about the whole file
  std::string message;

  // "FILE:LINE: message", "FILE: message" or "message".
  std::string to_string() const;
};

inline Error make_error(std::string file, std::int64_t line, std::string message) {
  return Error{std::move(file), line, std::move(message)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// A Result without a value: ok, or an Error.
using Status = Result<std::monostate>;
inline Status ok_status() { return Status(std::monostate{}); }

}  // namespace kernlens

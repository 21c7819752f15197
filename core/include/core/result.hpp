#pragma once
// Errors as values for hot paths: a small expected-like type (C++20 has no std::expected).
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace j2k {

/// Why an operation on untrusted data did not produce a value.
enum class ErrorKind {
  need_more_data,  ///< input ended early; more bytes may complete it
  corrupt,         ///< input violates the format
  unsupported,     ///< valid input using a feature we do not implement
  limit,           ///< input asks for more than our safety limits allow
  io,              ///< operating-system or device failure
};

const char* to_string(ErrorKind kind) noexcept;

struct Error {
  ErrorKind kind = ErrorKind::corrupt;
  std::string message;
};

inline Error make_error(ErrorKind kind, std::string message) { return Error{kind, std::move(message)}; }

/// Either a T or an Error. `[[nodiscard]]` so a failure cannot be ignored silently.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}        // NOLINT(google-explicit-constructor)

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

/// Result without a value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT(google-explicit-constructor)
  bool ok() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return ok(); }
  const Error& error() const { assert(failed_); return error_; }

 private:
  Error error_{};
  bool failed_ = false;
};

}  // namespace j2k

// SPDX-License-Identifier: Apache-2.0
/// @file status.hpp
/// @brief Error codes, `status` and `result<T>`: how every trialstat library call reports failure.
///
/// Bad data (a truncated record, a CRC mismatch, an unknown dtype) is a return value, never an
/// exception. Only `result<T>::value()` throws (`trialstat::error`), for the outer convenience
/// layer (tools, bindings). The codes are API; message text is not.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace trialstat {

/// @brief Why a call failed. Stable API: add codes at the end only.
enum class error_code : int {
  ok = 0,             ///< success
  end_of_stream,      ///< clean end of a file or listing: nothing more to read (not an error)
  truncated_record,   ///< a record is cut short at a file's tail: may still be being written
  data_loss,          ///< corrupt bytes: CRC mismatch, bad footer, malformed protobuf or JSON
  invalid_argument,   ///< the caller passed something unusable (bad parameter, bad range)
  unsupported_dtype,  ///< a tensor's DataType that trialstat cannot convert to numbers
  out_of_memory,      ///< an allocation failed (host, pinned or device)
  cuda_error,         ///< a CUDA call failed; the context is still usable
  cuda_fatal,         ///< a sticky CUDA error: the context is lost
  io_error,           ///< the operating system refused a file operation (open, read, list)
  not_found,          ///< a named tensor, step, worker, rule or file does not exist
};

/// @brief One-line meaning of a code, e.g. "data_loss".
[[nodiscard]] std::string_view to_string(error_code code) noexcept;

/// @brief Outcome of a call: `ok`, or a code plus a message naming file, byte offset or step.
class [[nodiscard]] status {
 public:
  status() = default;
  status(error_code code, std::string message) : code_(code), message_(std::move(message)) {}

  [[nodiscard]] static status success() { return {}; }
  [[nodiscard]] bool ok() const noexcept { return code_ == error_code::ok; }
  [[nodiscard]] error_code code() const noexcept { return code_; }
  /// @brief Human-readable detail (file, byte offset, what was expected). Not API.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// @brief "<code>: <message>", for logs and CLI output.
  [[nodiscard]] std::string to_string() const;

 private:
  error_code code_ = error_code::ok;
  std::string message_;
};

/// @brief Exception thrown only by the convenience layer (`result<T>::value()`, tools).
class error : public std::runtime_error {
 public:
  explicit error(status s) : std::runtime_error(s.to_string()), status_(std::move(s)) {}
  [[nodiscard]] const status& get_status() const noexcept { return status_; }

 private:
  status status_;
};

/// @brief A value of type T or a failed `status` (an expected-like type).
template <typename T>
class [[nodiscard]] result {
 public:
  result(T value) : storage_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  result(status failure) : storage_(std::move(failure)) {  // NOLINT(google-explicit-constructor)
    if (std::get<status>(storage_).ok()) {
      storage_ = status(error_code::invalid_argument, "result constructed from an ok status");
    }
  }

  [[nodiscard]] bool has_value() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// @brief The value; throws `trialstat::error` if this holds a failure.
  T& value() & {
    if (!has_value()) throw error(std::get<status>(storage_));
    return std::get<T>(storage_);
  }
  const T& value() const& {
    if (!has_value()) throw error(std::get<status>(storage_));
    return std::get<T>(storage_);
  }
  T&& value() && {
    if (!has_value()) throw error(std::get<status>(storage_));
    return std::get<T>(std::move(storage_));
  }
  T& operator*() & noexcept { return std::get<T>(storage_); }
  const T& operator*() const& noexcept { return std::get<T>(storage_); }
  T* operator->() noexcept { return &std::get<T>(storage_); }
  const T* operator->() const noexcept { return &std::get<T>(storage_); }

  /// @brief The failure; `status::success()` when this holds a value.
  [[nodiscard]] status error_status() const {
    return has_value() ? status::success() : std::get<status>(storage_);
  }

 private:
  std::variant<T, status> storage_;
};

}  // namespace trialstat

/// Propagate a failed status from an expression returning `status`.
#define TRIALSTAT_RETURN_IF_ERROR(expr)             \
  do {                                              \
    ::trialstat::status trialstat_status_ = (expr); \
    if (!trialstat_status_.ok()) return trialstat_status_; \
  } while (0)

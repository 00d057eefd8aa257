// SPDX-License-Identifier: Apache-2.0
/// @file tensor_view.hpp
/// @brief Non-owning view of one dense tensor's element bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "trialstat/dtype.hpp"

namespace trialstat {

/// @brief Where a view's bytes live. Pinned host memory can be copied to a device asynchronously.
enum class memory_kind : uint8_t { host, host_pinned, device };

/// @brief A dense C-order tensor: `num_elements` elements of `type`, little-endian, at `data`.
///
/// `data` holds `num_elements * dtype_size_bytes(type)` bytes and need not be aligned (event
/// payloads are not): readers use memcpy-style loads. `shape` is outermost-first; empty = 0-d
/// (one element). Views never own memory; they are passed by value.
struct tensor_view {
  const std::byte* data = nullptr;
  dtype type = dtype::float32;
  std::span<const int64_t> shape;
  int64_t num_elements = 0;
  memory_kind memory = memory_kind::host;

  /// @brief Bytes covered by the view.
  [[nodiscard]] std::size_t size_bytes() const noexcept {
    return static_cast<std::size_t>(num_elements) * dtype_size_bytes(type);
  }
};

}  // namespace trialstat

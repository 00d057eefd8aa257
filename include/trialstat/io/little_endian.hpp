// SPDX-License-Identifier: Apache-2.0
/// @file little_endian.hpp
/// @brief Unaligned little-endian loads of the TFRecord framing's fixed-width fields
/// (spec/FORMAT.md §2: uint64 length, uint32 masked CRCs), byte by byte so that any alignment
/// and any host byte order read the same value.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trialstat::io {

/// @brief The uint64 stored little-endian at `p` (8 readable bytes, any alignment).
[[nodiscard]] inline uint64_t load_le64(const std::byte* p) noexcept {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint64_t>(p[i]);
  return v;
}

/// @brief The uint32 stored little-endian at `p` (4 readable bytes, any alignment).
[[nodiscard]] inline uint32_t load_le32(const std::byte* p) noexcept {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint32_t>(p[i]);
  return v;
}

}  // namespace trialstat::io

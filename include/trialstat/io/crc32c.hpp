// SPDX-License-Identifier: Apache-2.0
/// @file crc32c.hpp
/// @brief CRC-32C (Castagnoli) and TFRecord's CRC masking. Source: spec/FORMAT.md §2.
///
/// Polynomial 0x1EDC6F41 (reflected 0x82F63B78), initial value 0xFFFFFFFF, final xor
/// 0xFFFFFFFF; check value crc32c("123456789") = 0xE3069283 (RFC 3720 appendix B.4).
/// Two backends give identical results: a portable slicing-by-8 table path and an SSE4.2
/// `crc32` instruction path chosen at run time when the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace trialstat::io {

/// @brief Extend `crc` (a finished CRC-32C of earlier bytes, or 0 to start) with `size` bytes.
/// Thread-safe, synchronous, deterministic. Dispatches to the fastest backend available.
[[nodiscard]] uint32_t crc32c_extend(uint32_t crc, const std::byte* data, std::size_t size) noexcept;

/// @brief CRC-32C of a byte range (= `crc32c_extend(0, ...)`).
[[nodiscard]] inline uint32_t crc32c(std::span<const std::byte> bytes) noexcept {
  return crc32c_extend(0, bytes.data(), bytes.size());
}

/// @brief The portable (table) backend; same contract as `crc32c_extend`.
[[nodiscard]] uint32_t crc32c_extend_portable(uint32_t crc, const std::byte* data,
                                              std::size_t size) noexcept;

/// @brief The SSE4.2 backend; same contract. Only call when `crc32c_hardware_available()`.
[[nodiscard]] uint32_t crc32c_extend_sse42(uint32_t crc, const std::byte* data,
                                           std::size_t size) noexcept;

/// @brief Whether this build and CPU can run `crc32c_extend_sse42`.
[[nodiscard]] bool crc32c_hardware_available() noexcept;

/// @brief TFRecord masking: rotate right by 15, then add 0xA282EAD8 (mod 2^32).
[[nodiscard]] constexpr uint32_t mask_crc32c(uint32_t crc) noexcept {
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

/// @brief Inverse of `mask_crc32c`.
[[nodiscard]] constexpr uint32_t unmask_crc32c(uint32_t masked) noexcept {
  const uint32_t rot = masked - 0xA282EAD8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace trialstat::io

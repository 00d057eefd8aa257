// SPDX-License-Identifier: Apache-2.0
// Run-time backend dispatch for CRC-32C: decided once, on first use.
#include "trialstat/io/crc32c.hpp"

namespace trialstat::io {

uint32_t crc32c_extend(uint32_t crc, const std::byte* data, std::size_t size) noexcept {
  static const bool use_hardware = crc32c_hardware_available();
  return use_hardware ? crc32c_extend_sse42(crc, data, size)
                      : crc32c_extend_portable(crc, data, size);
}

}  // namespace trialstat::io

// SPDX-License-Identifier: Apache-2.0
// Portable CRC-32C: slicing-by-8 over tables generated at compile time from the reflected
// Castagnoli polynomial. Reference for the hardware path; both must agree bit for bit.
#include <array>
#include <cstring>

#include "trialstat/io/crc32c.hpp"

namespace trialstat::io {
namespace {

constexpr uint32_t reflected_polynomial = 0x82F63B78u;

constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
  std::array<std::array<uint32_t, 256>, 8> tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? reflected_polynomial : 0u);
    tables[0][i] = crc;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (std::size_t t = 1; t < 8; ++t) {
      tables[t][i] = (tables[t - 1][i] >> 8) ^ tables[0][tables[t - 1][i] & 0xffu];
    }
  }
  return tables;
}

constexpr auto tables = make_tables();

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const std::byte* data, std::size_t size) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint32_t l = ~crc;
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // little-endian hosts only (x86-64, aarch64)
    const uint32_t lo = static_cast<uint32_t>(word) ^ l;
    const auto hi = static_cast<uint32_t>(word >> 32);
    l = tables[7][lo & 0xffu] ^ tables[6][(lo >> 8) & 0xffu] ^ tables[5][(lo >> 16) & 0xffu] ^
        tables[4][lo >> 24] ^ tables[3][hi & 0xffu] ^ tables[2][(hi >> 8) & 0xffu] ^
        tables[1][(hi >> 16) & 0xffu] ^ tables[0][hi >> 24];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) l = (l >> 8) ^ tables[0][(l ^ *p++) & 0xffu];
  return ~l;
}

}  // namespace trialstat::io

// SPDX-License-Identifier: Apache-2.0
// SSE4.2 CRC-32C: the `crc32` instruction computes exactly the Castagnoli CRC. Compiled with a
// per-function target attribute (no -march flags on the library); only called after a CPUID
// check in crc32c.cpp.
#include <cstring>

#include "trialstat/io/crc32c.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <nmmintrin.h>
#define TRIALSTAT_HAVE_SSE42_PATH 1
#endif

namespace trialstat::io {

#if defined(TRIALSTAT_HAVE_SSE42_PATH)
__attribute__((target("sse4.2"))) uint32_t crc32c_extend_sse42(uint32_t crc,
                                                              const std::byte* data,
                                                              std::size_t size) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint64_t l = ~crc;
  // Three independent streams would hide the instruction's 3-cycle latency; records are small
  // (framing headers, payload checks) so one stream keeps this short and obviously correct.
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    l = _mm_crc32_u64(l, word);
    p += 8;
    size -= 8;
  }
  auto l32 = static_cast<uint32_t>(l);
  while (size-- > 0) l32 = _mm_crc32_u8(l32, *p++);
  return ~l32;
}

bool crc32c_hardware_available() noexcept { return __builtin_cpu_supports("sse4.2") != 0; }
#else
uint32_t crc32c_extend_sse42(uint32_t crc, const std::byte* data, std::size_t size) noexcept {
  return crc32c_extend_portable(crc, data, size);
}
bool crc32c_hardware_available() noexcept { return false; }
#endif

}  // namespace trialstat::io

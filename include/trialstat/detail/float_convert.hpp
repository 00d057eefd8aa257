// SPDX-License-Identifier: Apache-2.0
/// @file float_convert.hpp
/// @brief Bit-exact float16/bfloat16 → float conversion usable on host and device, so both
/// statistics backends convert in registers with one definition (IEEE 754 binary16; bfloat16 =
/// the upper 16 bits of a binary32).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TRIALSTAT_HOST_DEVICE __host__ __device__
#else
#define TRIALSTAT_HOST_DEVICE
#endif

namespace trialstat::detail {

/// @brief Reinterpret 32 bits as a float (memcpy: no aliasing UB, compiles to a move).
TRIALSTAT_HOST_DEVICE inline float bits_to_float(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

/// @brief IEEE binary16 → binary32, exact for every input (subnormals, ±Inf, NaN payload kept).
TRIALSTAT_HOST_DEVICE inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return bits_to_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return bits_to_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return bits_to_float(sign);
  // Subnormal half: value = mantissa * 2^-24; normalise into a binary32.
  uint32_t shift = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  mantissa &= 0x3ffu;
  return bits_to_float(sign | ((113u - shift) << 23) | (mantissa << 13));
}

/// @brief bfloat16 → binary32 (exact: bfloat16 is a truncated binary32).
TRIALSTAT_HOST_DEVICE inline float bfloat16_bits_to_float(uint16_t b) {
  return bits_to_float(static_cast<uint32_t>(b) << 16);
}

}  // namespace trialstat::detail

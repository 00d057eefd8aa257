// SPDX-License-Identifier: Apache-2.0
/// @file float_convert.hpp
/// @brief Bit-exact float16/bfloat16 → float conversion usable on host and device, so both
/// statistics backends convert in registers with one definition (IEEE 754 binary16; bfloat16 =
/// the upper 16 bits of a binary32), and the host-only rounding the other way, for code that
/// generates float16/bfloat16 data (`trialstat bench --generate`, `stats::run_selftest`).
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

#if !defined(__CUDA_ARCH__)
/// @brief binary32 → bfloat16 bits, rounded to nearest (ties to even); NaN stays a quiet NaN.
/// Host only.
inline uint16_t float_to_bfloat16_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

/// @brief binary32 → IEEE binary16 bits, rounded to nearest (ties to even), with float16
/// subnormals, overflow to ±Inf and NaN kept a (quiet) NaN. Host only.
inline uint16_t float_to_half_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const int32_t biased = static_cast<int32_t>((bits >> 23) & 0xffu);
  uint32_t mantissa = bits & 0x7fffffu;
  if (biased == 0xff) return sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0u);
  const int32_t exponent = biased - 127 + 15;
  if (exponent >= 31) return sign | 0x7c00u;
  const auto round = [](uint32_t kept, uint32_t rest, uint32_t half) {
    return kept + ((rest > half || (rest == half && (kept & 1u) != 0)) ? 1u : 0u);
  };
  if (exponent <= 0) {  // a float16 subnormal: units of 2^-24
    if (exponent < -10) return sign;
    mantissa |= 0x800000u;
    const int shift = 14 - exponent;
    return sign | static_cast<uint16_t>(round(mantissa >> shift, mantissa & ((1u << shift) - 1u),
                                              1u << (shift - 1)));
  }
  // A carry out of the mantissa moves into the exponent, which is the right rounding.
  return sign | static_cast<uint16_t>(round((static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13),
                                            mantissa & 0x1fffu, 0x1000u));
}
#endif

}  // namespace trialstat::detail

// SPDX-License-Identifier: Apache-2.0
// The device's unaligned element load (element_op.hpp load_bits_unaligned: aligned words and a
// funnel shift), run on the CPU: for 2-, 4- and 8-byte elements at every byte offset, including
// the last element of a buffer rounded up to 16 bytes, it gives the bytes memcpy gives, and the
// float64 conversion of every floating dtype built on it matches the host path.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>

#include "kernels/common/element_op.hpp"

namespace trialstat::kernels {
namespace {

template <class Bits>
void expect_every_offset() {
  alignas(16) unsigned char buffer[80];
  std::mt19937_64 rng(sizeof(Bits));
  for (int round = 0; round < 50; ++round) {
    for (auto& b : buffer) b = static_cast<unsigned char>(rng());
    for (std::size_t at = 0; at + sizeof(Bits) <= 72; ++at) {  // 72: the last element of 9 words
      Bits expected;
      std::memcpy(&expected, buffer + at, sizeof expected);
      ASSERT_EQ(load_bits_unaligned<Bits>(buffer + at), expected)
          << sizeof(Bits) << "-byte element at offset " << at;
    }
  }
}

TEST(unaligned_load, EveryOffsetEveryWidthMatchesMemcpy) {
  expect_every_offset<uint16_t>();
  expect_every_offset<uint32_t>();
  expect_every_offset<uint64_t>();
}

TEST(unaligned_load, FloatValuesThroughTheWordPath) {
  alignas(16) unsigned char buffer[48] = {};
  const double d = -1.0 / 3.0;
  const float f = 6.02e23f;
  const uint16_t half_one = 0x3c00;  // 1.0 in float16
  for (std::size_t at = 0; at < 24; ++at) {
    std::memset(buffer, 0xa5, sizeof buffer);
    std::memcpy(buffer + at, &d, 8);
    double d_out;
    const uint64_t d_bits = load_bits_unaligned<uint64_t>(buffer + at);
    std::memcpy(&d_out, &d_bits, 8);
    EXPECT_EQ(d_out, d);
    std::memcpy(buffer + at, &f, 4);
    const uint32_t f_bits = load_bits_unaligned<uint32_t>(buffer + at);
    float f_out;
    std::memcpy(&f_out, &f_bits, 4);
    EXPECT_EQ(f_out, f);
    std::memcpy(buffer + at, &half_one, 2);
    EXPECT_EQ(element_traits<dtype::float16>::to_double(load_bits_unaligned<uint16_t>(buffer + at)), 1.0);
  }
}

}  // namespace
}  // namespace trialstat::kernels

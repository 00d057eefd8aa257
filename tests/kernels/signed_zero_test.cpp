// SPDX-License-Identifier: Apache-2.0
// The signed-zero rule of min and max (moments_op.hpp "Signed zeros"): −0.0 orders below +0.0,
// so a tensor holding zeros of both signs has min −0.0 and max +0.0 whatever the element order,
// the lane an element lands in, the block/chunk split, the ISA and the thread count. Checked on
// the CPU twin at every ISA level, on the scalar per-element path the CUDA kernel runs
// (accumulate_first_pass + merge_moments, in the block orders a GPU reduction may take), and on
// the lane helpers themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/cpu_simd.hpp"
#include "tests/kernels/for_each_isa.hpp"
#include "kernels/common/element_op.hpp"
#include "kernels/moments/moments_cpu.hpp"
#include "kernels/moments/moments_op.hpp"

namespace trialstat {
namespace {

bool negative_zero(double x) { return x == 0.0 && std::signbit(x); }
bool positive_zero(double x) { return x == 0.0 && !std::signbit(x); }

using test_isa::for_each_isa;

/// `values` stored as dtype `type` (float16/bfloat16 zeros are 0x0000 / 0x8000; other values
/// of these tests are small integers, exact in every float dtype).
std::vector<std::byte> encode(const std::vector<double>& values, dtype type, std::size_t lead) {
  std::vector<std::byte> out(lead);
  for (double v : values) {
    std::byte bytes[8];
    std::size_t n = 0;
    switch (type) {
      case dtype::float64: std::memcpy(bytes, &v, n = 8); break;
      case dtype::float32: {
        const auto f = static_cast<float>(v);
        std::memcpy(bytes, &f, n = 4);
        break;
      }
      case dtype::float16:
      case dtype::bfloat16: {
        uint16_t h = std::signbit(v) ? 0x8000 : 0;
        const double a = std::fabs(v);
        if (a == 1.0) h |= type == dtype::float16 ? 0x3c00 : 0x3f80;
        if (a == 2.0) h |= type == dtype::float16 ? 0x4000 : 0x4000;
        std::memcpy(bytes, &h, n = 2);
        break;
      }
      default: ADD_FAILURE() << "dtype not used here"; return out;
    }
    out.insert(out.end(), bytes, bytes + n);
  }
  return out;
}

stats::moments cpu_moments(const std::vector<double>& values, dtype type, std::size_t lead) {
  const std::vector<std::byte> bytes = encode(values, type, lead);
  const stats::segment seg{lead, static_cast<int64_t>(values.size()), type};
  stats::moments m;
  const status s = kernels::compute_moments_cpu(bytes.data(), {&seg, 1}, {&m, 1});
  EXPECT_TRUE(s.ok()) << s.message();
  return m;
}

/// The CUDA kernel's arithmetic on the host: elements accumulated per "thread" with
/// accumulate_first_pass, thread records merged in `order` (a permutation of the threads), as a
/// block reduction or the chunk merge could combine them.
kernels::moments_state scalar_path(const std::vector<double>& values, int threads,
                                   const std::vector<int>& order) {
  std::vector<kernels::moments_state> parts(static_cast<std::size_t>(threads),
                                            kernels::moments_identity());
  for (std::size_t i = 0; i < values.size(); ++i) {
    kernels::moments_state& s = parts[i % static_cast<std::size_t>(threads)];
    double shifted = 0.0;
    s.count += 1;
    kernels::accumulate_first_pass(s, shifted, values[i], 0.0);
  }
  kernels::moments_state acc = kernels::moments_identity();
  for (int t : order) acc = kernels::merge_moments(acc, parts[static_cast<std::size_t>(t)]);
  return acc;
}

TEST(SignedZero, OrderedMinMaxIgnoreOperandOrder) {
  EXPECT_TRUE(negative_zero(kernels::ordered_min(0.0, -0.0)));
  EXPECT_TRUE(negative_zero(kernels::ordered_min(-0.0, 0.0)));
  EXPECT_TRUE(positive_zero(kernels::ordered_max(0.0, -0.0)));
  EXPECT_TRUE(positive_zero(kernels::ordered_max(-0.0, 0.0)));
  EXPECT_EQ(kernels::ordered_min(-1.0, -0.0), -1.0);
  EXPECT_EQ(kernels::ordered_max(1.0, -0.0), 1.0);
  EXPECT_TRUE(negative_zero(kernels::ordered_min(-0.0, INFINITY)));
  EXPECT_TRUE(positive_zero(kernels::ordered_max(0.0, -INFINITY)));
  EXPECT_TRUE(kernels::sign_bit(-0.0));
  EXPECT_FALSE(kernels::sign_bit(0.0));
}

TEST(SignedZero, CpuTwinOnEveryIsaDtypeLayoutAndOrder) {
  std::mt19937_64 rng(7);
  // Sizes: inside one lane group, a tail, a block (1024), several blocks, a parallel batch.
  for (int64_t n : {2, 3, 8, 9, 17, 1023, 1025, 3000, 300000}) {
    for (int trial = 0; trial < (n > 10000 ? 1 : 4); ++trial) {
      // Zeros of random signs, with a −0.0 at i and a +0.0 at j ≠ i.
      std::vector<double> zeros(static_cast<std::size_t>(n));
      for (auto& z : zeros) z = (rng() & 1) ? -0.0 : 0.0;
      const std::size_t i = rng() % zeros.size();
      const std::size_t j = (i + 1 + rng() % (zeros.size() - 1)) % zeros.size();
      zeros[i] = -0.0;
      zeros[j] = 0.0;
      // The same zeros next to a positive value (max 2, min still −0.0) and a negative one.
      std::vector<double> with_pos = zeros, with_neg = zeros;
      with_pos[j] = 2.0;
      with_neg[i] = -2.0;
      for (dtype type : {dtype::float64, dtype::float32, dtype::float16, dtype::bfloat16}) {
        for (std::size_t lead : {std::size_t{0}, std::size_t{3}}) {
          SCOPED_TRACE("n " + std::to_string(n) + " dtype " + std::to_string(static_cast<int>(type)) +
                       " offset " + std::to_string(lead));
          for_each_isa([&] {
            const stats::moments z = cpu_moments(zeros, type, lead);
            EXPECT_TRUE(negative_zero(z.min)) << z.min;
            EXPECT_TRUE(positive_zero(z.max)) << z.max;
            EXPECT_EQ(z.zero_count, n);
            const stats::moments zp = cpu_moments(with_pos, type, lead);
            EXPECT_TRUE(negative_zero(zp.min)) << zp.min;
            EXPECT_EQ(zp.max, 2.0);
            const stats::moments zn = cpu_moments(with_neg, type, lead);
            EXPECT_EQ(zn.min, -2.0);
            EXPECT_TRUE(positive_zero(zn.max)) << zn.max;
          });
        }
      }
    }
  }
}

TEST(SignedZero, AllZerosOfOneSignKeepTheirSign) {
  for_each_isa([&] {
    const stats::moments neg = cpu_moments(std::vector<double>(37, -0.0), dtype::float32, 1);
    EXPECT_TRUE(negative_zero(neg.min));
    EXPECT_TRUE(negative_zero(neg.max));
    const stats::moments pos = cpu_moments(std::vector<double>(37, 0.0), dtype::float64, 0);
    EXPECT_TRUE(positive_zero(pos.min));
    EXPECT_TRUE(positive_zero(pos.max));
  });
}

TEST(SignedZero, ScalarPathOfTheCudaKernelAgreesInEveryMergeOrder) {
  const std::vector<double> values = {0.0, -0.0, 0.0, 0.0, -0.0, 0.0, -0.0, 0.0, 0.0};
  std::vector<int> order = {0, 1, 2, 3};
  do {
    const kernels::moments_state s = scalar_path(values, 4, order);
    EXPECT_TRUE(negative_zero(s.min));
    EXPECT_TRUE(positive_zero(s.max));
  } while (std::next_permutation(order.begin(), order.end()));
  // The merge of split tensors and chunks, in both orders.
  const kernels::moments_state a = scalar_path({0.0, 0.0}, 1, {0});
  const kernels::moments_state b = scalar_path({-0.0}, 1, {0});
  for (const auto& m : {kernels::merge_moments(a, b), kernels::merge_moments(b, a)}) {
    EXPECT_TRUE(negative_zero(m.min));
    EXPECT_TRUE(positive_zero(m.max));
  }
}

}  // namespace
}  // namespace trialstat

// SPDX-License-Identifier: Apache-2.0
// Per-element conversion of kernels/common/element_op.hpp vs the independent reference decoder:
// every float16 and bfloat16 bit pattern, integer rounding, bool, unaligned loads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/common/element_op.hpp"
#include "kernels/common/cpu_parallel.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(ElementOp, EveryHalfAndBfloat16BitPattern) {
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    std::byte raw[3];
    std::memcpy(raw + 1, &h, 2);  // unaligned
    const auto* p = reinterpret_cast<const unsigned char*>(raw + 1);
    const double half = kernels::load_as_double<dtype::float16, false>(p, 0);
    ASSERT_TRUE(same_value(half, reference::element_value(raw + 1, dtype::float16, 0)))
        << std::hex << bits;
    const double bf = kernels::load_as_double<dtype::bfloat16, false>(p, 0);
    ASSERT_TRUE(same_value(bf, reference::element_value(raw + 1, dtype::bfloat16, 0)))
        << std::hex << bits;
  }
}

TEST(ElementOp, BoolIsNonzeroAndIntegersRoundToNearest) {
  const unsigned char b[] = {0, 1, 2, 255};
  EXPECT_EQ((kernels::load_as_double<dtype::boolean, true>(b, 0)), 0.0);
  EXPECT_EQ((kernels::load_as_double<dtype::boolean, true>(b, 1)), 1.0);
  EXPECT_EQ((kernels::load_as_double<dtype::boolean, true>(b, 2)), 1.0);
  EXPECT_EQ((kernels::load_as_double<dtype::boolean, true>(b, 3)), 1.0);
  // 2^53 + 1 → 2^53 (ties to even); 2^53 + 3 → 2^53 + 4.
  const int64_t i[] = {(int64_t{1} << 53) + 1, (int64_t{1} << 53) + 3, -1};
  const auto* p = reinterpret_cast<const unsigned char*>(i);
  EXPECT_EQ((kernels::load_as_double<dtype::int64, false>(p, 0)), 9007199254740992.0);
  EXPECT_EQ((kernels::load_as_double<dtype::int64, false>(p, 1)), 9007199254740996.0);
  EXPECT_EQ((kernels::load_as_double<dtype::int64, false>(p, 2)), -1.0);
  const uint64_t u[] = {UINT64_MAX, (uint64_t{1} << 63) + 1025};
  const auto* q = reinterpret_cast<const unsigned char*>(u);
  EXPECT_EQ((kernels::load_as_double<dtype::uint64, false>(q, 0)), 18446744073709551616.0);
  EXPECT_EQ((kernels::load_as_double<dtype::uint64, false>(q, 1)), 9223372036854777856.0);
  const unsigned char s8[] = {0xff, 0x80};
  EXPECT_EQ((kernels::load_as_double<dtype::int8, true>(s8, 0)), -1.0);
  EXPECT_EQ((kernels::load_as_double<dtype::int8, true>(s8, 1)), -128.0);
  EXPECT_EQ((kernels::load_as_double<dtype::uint8, true>(s8, 0)), 255.0);
}

TEST(ElementOp, DispatchCoversExactlyTheRealDtypes) {
  for (const dtype t : reference::real_dtypes()) {
    EXPECT_TRUE(kernels::is_supported_dtype(t)) << dtype_name(t);
    EXPECT_EQ(static_cast<std::size_t>(kernels::supported_element_size(t)), dtype_size_bytes(t));
  }
  for (const dtype t : {dtype::invalid, dtype::string, dtype::complex64, dtype::complex128}) {
    EXPECT_FALSE(kernels::is_supported_dtype(t)) << dtype_name(t);
  }
}

TEST(ElementOp, OrderedTreeMergerIsPairwiseInOrder) {
  // Merge = string concatenation with brackets: the tree shape is visible.
  struct cat {
    std::string operator()(const std::string& a, const std::string& b) const {
      return "(" + a + b + ")";
    }
  };
  kernels::ordered_tree_merger<std::string, cat, 8> m{cat{}};
  for (const char* leaf : {"a", "b", "c", "d", "e"}) m.push(leaf);
  EXPECT_EQ(m.finish(""), "(((ab)(cd))e)");
}

TEST(CpuPlan, FixedChunksIndependentOfThreads) {
  const std::vector<stats::segment> segs = {{0, 0, dtype::float32},
                                            {0, kernels::cpu_chunk_elements * 2 + 1, dtype::float32},
                                            {0, 5, dtype::int8}};
  const auto plan = kernels::plan_cpu_chunks(segs);
  EXPECT_EQ(plan.first, (std::vector<int64_t>{0, 0, 3, 4}));
  ASSERT_EQ(plan.items.size(), 4u);
  EXPECT_EQ(plan.items[2].begin, kernels::cpu_chunk_elements * 2);
  EXPECT_EQ(plan.items[2].count, 1);
  EXPECT_EQ(plan.items[3].segment, 2);
}

}  // namespace
}  // namespace trialstat

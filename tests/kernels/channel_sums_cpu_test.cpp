// SPDX-License-Identifier: Apache-2.0
// CPU twin of the per-channel sums vs the long-double reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/channel_sums/channel_sums_cpu.hpp"
#include "kernels/channel_sums/channel_sums_op.hpp"
#include "tests/reference/expect_stats.hpp"
#include "tests/reference/reference_rule_stats.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

using reference::data_mode;

TEST(ChannelSumsCpu, HandCheckedNchw) {
  // [2, 3, 2]: channel c of batch b holds {c + 10b, c + 10b + 0.5}; channel sums over b and the
  // last axis: c=0: 0 + 0.5 + 10 + 10.5 = 21, c=1: 25, c=2: 29.
  std::vector<double> x;
  for (int b = 0; b < 2; ++b) {
    for (int c = 0; c < 3; ++c) {
      x.push_back(c + 10 * b);
      x.push_back(c + 10 * b + 0.5);
    }
  }
  const std::vector<int64_t> shape{2, 3, 2};
  const tensor_view v{reinterpret_cast<const std::byte*>(x.data()), dtype::float64, shape, 12,
                      memory_kind::host};
  const auto r = kernels::compute_channel_sums_cpu(v, 1, 2, 3, 2);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->axis, 1);
  EXPECT_EQ(r->sum, (std::vector<double>{21, 25, 29}));
  EXPECT_EQ(r->count, (std::vector<int64_t>{4, 4, 4}));
  EXPECT_EQ(r->mean(2), 29.0 / 4);
}

TEST(ChannelSumsCpu, MeanFollowsNumpyForNonFinite) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // [4, 4] along axis 1 (channels = columns).
  const std::vector<double> x = {1, nan, inf, inf, 2, 1, 1, -inf, 3, 1, 1, 1, 4, 1, 1, 1};
  const std::vector<int64_t> shape{4, 4};
  const tensor_view v{reinterpret_cast<const std::byte*>(x.data()), dtype::float64, shape, 16,
                      memory_kind::host};
  const auto r = kernels::compute_channel_sums_cpu(v, 1, 4, 4, 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->mean(0), 2.5);
  EXPECT_TRUE(std::isnan(r->mean(1)));
  EXPECT_EQ(r->mean(2), inf);
  EXPECT_TRUE(std::isnan(r->mean(3)));  // +Inf and −Inf
  EXPECT_EQ(r->sum[2], 3.0);            // finite values only
  EXPECT_EQ(r->pos_inf_count[2], 1);
}

TEST(ChannelSumsCpu, MatchesReferenceForEveryLayoutAndDtype) {
  const std::vector<std::vector<int64_t>> shapes = {
      {5}, {7, 3}, {2, 3, 4, 5}, {64, 3, 32, 32}, {100, 50, 3}, {1, 2, 70000}, {3, 0, 4}, {200000, 2}};
  for (const dtype t : reference::real_dtypes()) {
    for (const auto& shape : shapes) {
      int64_t n = 1;
      for (const auto d : shape) n *= d;
      for (std::size_t axis = 0; axis < shape.size(); ++axis) {
        int64_t outer = 0, channels = 0, inner = 0;
        ASSERT_TRUE(kernels::channel_layout(shape.data(), shape.size(), axis, n, outer, channels,
                                            inner));
        const uint64_t seed = 4242 + static_cast<uint64_t>(n) + axis;
        const auto bytes = reference::make_tensor_bytes(t, n, data_mode::special, seed, 0.2, 3.0);
        std::vector<std::byte> buffer(1);
        buffer.insert(buffer.end(), bytes.begin(), bytes.end());
        const tensor_view v{buffer.data() + 1, t, shape, n, memory_kind::host};
        SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n) + " axis=" +
                     std::to_string(axis) + " seed=" + std::to_string(seed));
        const auto r = kernels::compute_channel_sums_cpu(v, static_cast<int64_t>(axis), outer,
                                                         channels, inner);
        ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
        const auto ref = reference::channel_sums_ref(reference::element_values(bytes.data(), t, n),
                                                     outer, channels, inner);
        ASSERT_EQ(r->channels(), static_cast<std::size_t>(channels));
        EXPECT_EQ(r->count, ref.count);
        EXPECT_EQ(r->nan_count, ref.nan_count);
        EXPECT_EQ(r->pos_inf_count, ref.pos_inf_count);
        EXPECT_EQ(r->neg_inf_count, ref.neg_inf_count);
        for (std::size_t c = 0; c < r->channels(); ++c) {
          EXPECT_TRUE(reference::near_scaled("sum", r->sum[c], ref.sum[c], ref.sum_abs[c])) << c;
        }
      }
    }
  }
}

}  // namespace
}  // namespace trialstat

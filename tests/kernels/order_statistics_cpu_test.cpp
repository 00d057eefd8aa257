// SPDX-License-Identifier: Apache-2.0
// CPU twin of the order statistics (percentiles, top-k sums) vs the naive references.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/order_statistics/order_statistics_cpu.hpp"
#include "tests/reference/expect_stats.hpp"
#include "tests/reference/reference_rule_stats.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

using reference::data_mode;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// A float64 view over `values` (shape [n]).
struct f64_tensor {
  std::vector<double> values;
  std::vector<int64_t> shape;
  tensor_view view() {
    shape = {static_cast<int64_t>(values.size())};
    return tensor_view{reinterpret_cast<const std::byte*>(values.data()), dtype::float64, shape,
                       static_cast<int64_t>(values.size()), memory_kind::host};
  }
};

std::vector<double> percentiles(std::vector<double> x, std::vector<double> q) {
  f64_tensor t{std::move(x), {}};
  auto r = kernels::compute_percentiles_cpu(t.view(), q);
  EXPECT_TRUE(r.has_value()) << r.error_status().to_string();
  return r.has_value() ? *r : std::vector<double>{};
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

TEST(PercentilesCpu, HandCheckedCases) {
  // [1, 2, 3, 4], q = 5: virtual index 3·0.05 = 0.15 → 1 + (2 − 1)·0.15 = 1.15.
  // q = 50: 1.5 → gamma 0.5 uses b − d·(1 − g) = 3 − 1·0.5 = 2.5. q = 100: the last value, 4.
  const auto r = percentiles({4, 1, 3, 2}, {5, 50, 100, 0});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0], 1.0 + 1.0 * (3.0 * 0.05));
  EXPECT_EQ(r[1], 2.5);
  EXPECT_EQ(r[2], 4.0);
  EXPECT_EQ(r[3], 1.0);
  // One value: every percentile is that value.
  EXPECT_EQ(percentiles({7.5}, {0, 5, 95, 100}), (std::vector<double>{7.5, 7.5, 7.5, 7.5}));
  // numpy's arithmetic with infinities (numpy issues #12282, #21091): [1, 2, inf] q=50 has
  // virtual index 1.0, neighbours 2 and inf, g = 0 → 2 + (inf − 2)·0 = NaN.
  const auto with_inf = percentiles({1, 2, inf}, {0, 25, 50, 100});
  EXPECT_EQ(with_inf[0], 1.0);
  EXPECT_EQ(with_inf[1], 1.5);
  EXPECT_TRUE(std::isnan(with_inf[2]));  // (inf − 2)·0 = NaN, as numpy ≥ 1.22 gives
  EXPECT_TRUE(std::isnan(with_inf[3]));  // last value inf: inf − inf = NaN
  // Any NaN → NaN everywhere; empty → NaN.
  for (const double v : percentiles({1, nan, 3}, {5, 95})) EXPECT_TRUE(std::isnan(v));
  for (const double v : percentiles({}, {5, 95})) EXPECT_TRUE(std::isnan(v));
  // No q: no result.
  EXPECT_TRUE(percentiles({1, 2}, {}).empty());
}

TEST(PercentilesCpu, RejectsOutOfRangeQ) {
  f64_tensor t{{1, 2, 3}, {}};
  for (const double q : {-0.5, 100.5, nan}) {
    const std::vector<double> qs{50, q};
    const auto r = kernels::compute_percentiles_cpu(t.view(), qs);
    ASSERT_FALSE(r.has_value()) << q;
    EXPECT_EQ(r.error_status().code(), error_code::invalid_argument);
  }
}

TEST(PercentilesCpu, MatchesNumpyReferenceForEveryDtype) {
  const std::vector<double> qs = {0, 5, 12.5, 33.3, 50, 66.6, 95, 99.9, 100};
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {1, 2, 3, 10, 1000, 70001}) {
      for (const data_mode mode : {data_mode::normal, data_mode::special, data_mode::bits}) {
        const uint64_t seed = 1000 + static_cast<uint64_t>(n) * 7 + static_cast<uint64_t>(mode);
        const auto bytes = reference::make_tensor_bytes(t, n, mode, seed, 0.5, 40.0);
        std::vector<std::byte> buffer(3);  // odd offset: unaligned data
        buffer.insert(buffer.end(), bytes.begin(), bytes.end());
        const std::vector<int64_t> shape{n};
        const tensor_view v{buffer.data() + 3, t, shape, n, memory_kind::host};
        auto values = reference::element_values(bytes.data(), t, n);
        // Without NaN too (special data usually holds one): replace NaN by a finite value.
        for (const bool drop_nan : {false, true}) {
          std::vector<std::byte> clean;
          tensor_view view = v;
          if (drop_nan) {
            for (auto& x : values) {
              if (std::isnan(x)) x = -3.25;
            }
            clean = reference::encode_values(dtype::float64, values);
            view = tensor_view{clean.data(), dtype::float64, shape, n, memory_kind::host};
          }
          SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n) + " " +
                       reference::to_string(mode) + " seed=" + std::to_string(seed) +
                       (drop_nan ? " (NaN replaced)" : ""));
          const auto r = kernels::compute_percentiles_cpu(view, qs);
          ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
          ASSERT_EQ(r->size(), qs.size());
          for (std::size_t i = 0; i < qs.size(); ++i) {
            const double expected = reference::percentile_numpy(values, qs[i]);
            EXPECT_TRUE(same((*r)[i], expected))
                << "q=" << qs[i] << " got " << (*r)[i] << " expected " << expected;
          }
        }
      }
    }
  }
}

TEST(TopKSumCpu, HandCheckedCases) {
  f64_tensor t{{0.1, 0.5, 0.2, 0.15, 0.05}, {}};
  auto r = kernels::compute_top_k_sum_cpu(t.view(), 3);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->k, 3);
  EXPECT_DOUBLE_EQ(r->top_sum, 0.85);
  EXPECT_DOUBLE_EQ(r->total_sum, 1.0);
  EXPECT_EQ(r->max, 0.5);
  // k > n: everything; k = 0: nothing.
  r = kernels::compute_top_k_sum_cpu(t.view(), 99);
  EXPECT_EQ(r->k, 5);
  EXPECT_DOUBLE_EQ(r->top_sum, 1.0);
  r = kernels::compute_top_k_sum_cpu(t.view(), 0);
  EXPECT_EQ(r->k, 0);
  EXPECT_EQ(r->top_sum, 0.0);
  // Empty: zero sums, NaN max. NaN anywhere: NaN sums and max.
  f64_tensor empty{{}, {}};
  r = kernels::compute_top_k_sum_cpu(empty.view(), 2);
  EXPECT_EQ(r->k, 0);
  EXPECT_EQ(r->total_sum, 0.0);
  EXPECT_TRUE(std::isnan(r->max));
  f64_tensor with_nan{{1, nan, 2}, {}};
  r = kernels::compute_top_k_sum_cpu(with_nan.view(), 1);
  EXPECT_TRUE(std::isnan(r->top_sum) && std::isnan(r->total_sum) && std::isnan(r->max));
  // Negative k is rejected.
  EXPECT_EQ(kernels::compute_top_k_sum_cpu(t.view(), -1).error_status().code(),
            error_code::invalid_argument);
}

TEST(TopKSumCpu, MatchesReferenceForEveryDtype) {
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {1, 5, 1000, 200003}) {
      for (const data_mode mode : {data_mode::normal, data_mode::special}) {
        const uint64_t seed = 77 + static_cast<uint64_t>(n) + static_cast<uint64_t>(mode) * 13;
        const auto bytes = reference::make_tensor_bytes(t, n, mode, seed, 2.0, 10.0);
        const std::vector<int64_t> shape{n};
        const tensor_view v{bytes.data(), t, shape, n, memory_kind::host};
        const auto values = reference::element_values(bytes.data(), t, n);
        for (const int64_t k : {int64_t{0}, int64_t{1}, int64_t{3}, n / 2, n + 1}) {
          SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n) + " k=" +
                       std::to_string(k) + " " + reference::to_string(mode) +
                       " seed=" + std::to_string(seed));
          const auto r = kernels::compute_top_k_sum_cpu(v, k);
          ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
          const auto ref = reference::top_k_sum_ref(values, k);
          EXPECT_EQ(r->k, ref.k);
          EXPECT_TRUE(same(r->max, ref.max));
          EXPECT_TRUE(reference::near_scaled("top_sum", r->top_sum, ref.top_sum, ref.top_abs));
          EXPECT_TRUE(
              reference::near_scaled("total_sum", r->total_sum, ref.total_sum, ref.total_abs));
        }
      }
    }
  }
}

}  // namespace
}  // namespace trialstat

// SPDX-License-Identifier: Apache-2.0
// CPU twin of count_equal vs the naive reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/value_counts/value_counts_cpu.hpp"
#include "tests/reference/reference_rule_stats.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

using reference::data_mode;

TEST(CountEqualCpu, HandCheckedCases) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {0, -0.0, 1, 1, 2, nan, inf, 0.5};
  const std::vector<int64_t> shape{8};
  const tensor_view v{reinterpret_cast<const std::byte*>(x.data()), dtype::float64, shape, 8,
                      memory_kind::host};
  const std::vector<double> targets = {0, 1, nan, inf, 3, 1};
  const auto r = kernels::count_equal_cpu(v, targets);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, (std::vector<int64_t>{2, 2, 0, 1, 0, 2}));
}

TEST(CountEqualCpu, MatchesReferenceForEveryDtype) {
  std::vector<double> targets;
  for (int i = -3; i < 20; ++i) targets.push_back(i);
  targets.push_back(0.5);
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {0, 3, 4096, 200001}) {
      const uint64_t seed = 17 + static_cast<uint64_t>(n);
      // Small integers: many exact hits.
      auto values = reference::element_values(
          reference::make_tensor_bytes(dtype::float64, n, data_mode::normal, seed, 3, 4).data(),
          dtype::float64, n);
      for (auto& x : values) x = std::round(x);
      const auto bytes = reference::encode_values(t, values);
      std::vector<std::byte> buffer(5);
      buffer.insert(buffer.end(), bytes.begin(), bytes.end());
      const std::vector<int64_t> shape{n};
      const tensor_view v{buffer.data() + 5, t, shape, n, memory_kind::host};
      SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n) + " seed=" +
                   std::to_string(seed));
      const auto r = kernels::count_equal_cpu(v, targets);
      ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
      EXPECT_EQ(*r, reference::count_equal_ref(reference::element_values(bytes.data(), t, n),
                                               targets));
    }
  }
}

}  // namespace
}  // namespace trialstat

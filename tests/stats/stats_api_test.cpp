// SPDX-License-Identifier: Apache-2.0
// Public statistics API (include/trialstat/stats/*): validation, backend selection, merge and
// the convenience entry points, on the CPU backend.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/reference/expect_stats.hpp"
#include "tests/reference/reference_stats.hpp"
#include "trialstat/config.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/segment.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"

namespace trialstat {
namespace {

using reference::data_mode;

TEST(StatsApi, BackendNamesAndAvailability) {
  EXPECT_EQ(stats::backend_name(stats::backend::cpu), "cpu");
  EXPECT_EQ(stats::backend_name(stats::backend::cuda), "cuda");
#if !TRIALSTAT_HAS_CUDA
  EXPECT_FALSE(stats::cuda_device_available());
#endif
}

TEST(StatsApi, UnavailableCudaIsAnErrorNotAFallback) {
  if (stats::cuda_device_available()) GTEST_SKIP() << "a CUDA device is visible";
  const auto bytes = reference::encode_values(dtype::float32, {1, 2, 3});
  const stats::segment seg{0, 3, dtype::float32};
  stats::moments m;
  const status s = stats::compute_moments(bytes.data(), {&seg, 1}, {&m, 1}, stats::backend::cuda);
  EXPECT_EQ(s.code(), error_code::invalid_argument);
  EXPECT_NE(s.message().find("cuda"), std::string::npos) << s.message();
  stats::histogram h;
  EXPECT_EQ(stats::compute_histograms(bytes.data(), {&seg, 1}, {&m, 1}, 64, {&h, 1},
                                      stats::backend::cuda)
                .code(),
            error_code::invalid_argument);
  tensor_view v{bytes.data(), dtype::float32, {}, 3, memory_kind::host};
  EXPECT_EQ(stats::compute_pairwise(v, v, {}, stats::backend::cuda).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(stats::count_along_axis0(v, {}, stats::backend::cuda).error_status().code(),
            error_code::invalid_argument);
  v.memory = memory_kind::device;  // a device view needs the CUDA backend
  EXPECT_EQ(stats::compute_moments(v).error_status().code(), error_code::invalid_argument);
}

TEST(StatsApi, MomentsAndHistogramsOfABatch) {
  std::vector<std::byte> buffer;
  std::vector<stats::segment> segments;
  std::vector<std::vector<double>> values;
  for (const dtype t : reference::real_dtypes()) {
    buffer.resize(buffer.size() + 3);
    const auto bytes = reference::make_tensor_bytes(t, 5000, data_mode::special, 61, 0.5, 40.0);
    segments.push_back({buffer.size(), 5000, t});
    buffer.insert(buffer.end(), bytes.begin(), bytes.end());
    values.push_back(reference::element_values(bytes.data(), t, 5000));
  }
  std::vector<stats::moments> m(segments.size());
  ASSERT_TRUE(stats::compute_moments(buffer.data(), segments, m).ok());
  std::vector<stats::histogram> h(segments.size());
  ASSERT_TRUE(stats::compute_histograms(buffer.data(), segments, m, stats::default_histogram_bins, h)
                  .ok());
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string ctx = std::string("dtype ") + std::string(dtype_name(segments[i].type));
    reference::expect_moments_match(m[i], reference::compute_moments_ref(values[i]), ctx);
    reference::expect_histogram_match(h[i], reference::compute_histogram_numpy(values[i], 64), ctx);
  }
}

TEST(StatsApi, ConvenienceMomentsAndMerge) {
  const std::vector<double> v = {4, -1, 2.5, std::numeric_limits<double>::infinity(), 0};
  const auto bytes = reference::encode_values(dtype::float64, v);
  tensor_view whole{bytes.data(), dtype::float64, {}, 5, memory_kind::host};
  const auto all = stats::compute_moments(whole);
  ASSERT_TRUE(all.has_value());
  reference::expect_moments_match(*all, reference::compute_moments_ref(v), "convenience");
  tensor_view left{bytes.data(), dtype::float64, {}, 2, memory_kind::host};
  tensor_view right{bytes.data() + 16, dtype::float64, {}, 3, memory_kind::host};
  const stats::moments merged = stats::merge(stats::compute_moments(left).value(),
                                             stats::compute_moments(right).value());
  reference::expect_moments_match(merged, reference::compute_moments_ref(v), "merge");
  // Merging with an empty record changes nothing.
  const stats::moments same = stats::merge(*all, stats::moments{});
  EXPECT_EQ(same.count, all->count);
  EXPECT_EQ(same.mean, all->mean);
  EXPECT_EQ(same.m2, all->m2);
}

TEST(StatsApi, Validation) {
  const auto bytes = reference::encode_values(dtype::float32, {1, 2});
  const stats::segment seg{0, 2, dtype::float32};
  std::vector<stats::moments> two(2);
  EXPECT_EQ(stats::compute_moments(bytes.data(), {&seg, 1}, two).code(),
            error_code::invalid_argument);
  const stats::segment cplx{0, 1, dtype::complex64};
  stats::moments m;
  const status s = stats::compute_moments(bytes.data(), {&cplx, 1}, {&m, 1});
  EXPECT_EQ(s.code(), error_code::unsupported_dtype);
  EXPECT_NE(s.message().find("complex64"), std::string::npos) << s.message();
  stats::histogram h;
  EXPECT_EQ(stats::compute_histograms(bytes.data(), {&seg, 1}, {&m, 1}, 0, {&h, 1}).code(),
            error_code::invalid_argument);
  tensor_view a{bytes.data(), dtype::float32, {}, 2, memory_kind::host};
  tensor_view b{bytes.data(), dtype::float32, {}, 1, memory_kind::host};
  EXPECT_EQ(stats::compute_pairwise(a, b, {}).error_status().code(), error_code::invalid_argument);
}

TEST(StatsApi, PairwiseAndAxisCounts) {
  const auto a = reference::encode_values(dtype::float32, {1, 2, 3, 4, 5, 6});
  const auto b = reference::encode_values(dtype::float32, {1, 2, 3, 4, 5, 7});
  const std::vector<int64_t> shape = {2, 3};
  tensor_view va{a.data(), dtype::float32, shape, 6, memory_kind::host};
  tensor_view vb{b.data(), dtype::float32, shape, 6, memory_kind::host};
  const auto p = stats::compute_pairwise(va, vb, {});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->diff_sum_squares, 1.0);
  EXPECT_EQ(p->previous_sum_squares, 91.0);
  EXPECT_EQ(p->allclose_violations, 1);
  stats::axis0_predicate pred{stats::axis0_predicate::kind::open_interval, 1.5, 5.5};
  const auto c = stats::count_along_axis0(va, pred);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->batch, 2);
  EXPECT_EQ(c->per_node, (std::vector<int64_t>{1, 2, 1}));  // [1,2,3] / [4,5,6] in (1.5, 5.5)
}

}  // namespace
}  // namespace trialstat

// SPDX-License-Identifier: Apache-2.0
// Public API of the statistics the later built-in rules need (order statistics, class counts,
// equality counts, per-channel sums, float64 conversion): validation and backend errors on the
// CPU, and the CPU-vs-CUDA twins (suites gpu_*, skipped without a device).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/gpu.hpp"
#include "tests/reference/expect_stats.hpp"
#include "tests/reference/reference_rule_stats.hpp"
#include "tests/reference/reference_stats.hpp"
#include "trialstat/config.hpp"
#include "trialstat/stats/channel_sums.hpp"
#include "trialstat/stats/class_counts.hpp"
#include "trialstat/stats/float64_values.hpp"
#include "trialstat/stats/order_statistics.hpp"
#include "trialstat/stats/value_counts.hpp"

#if TRIALSTAT_HAS_CUDA
#include <cuda_runtime_api.h>

#include "kernels/order_statistics/order_statistics_cuda.hpp"
#endif

namespace trialstat {
namespace {

using reference::data_mode;

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

/// Owned bytes + shape, viewed as a tensor.
struct owned_tensor {
  std::vector<std::byte> bytes;
  std::vector<int64_t> shape;
  dtype type = dtype::float64;
  int64_t n = 0;
  tensor_view view() const { return {bytes.data(), type, shape, n, memory_kind::host}; }
};

owned_tensor f64(std::vector<double> values, std::vector<int64_t> shape = {}) {
  owned_tensor t;
  t.n = static_cast<int64_t>(values.size());
  t.shape = shape.empty() ? std::vector<int64_t>{t.n} : shape;
  t.bytes = reference::encode_values(dtype::float64, values);
  return t;
}

TEST(RuleStatsApi, Float64Conversion) {
  const auto bytes = reference::encode_values(dtype::float16, {1.5, -2, 65504});
  const std::vector<int64_t> shape{3};
  std::vector<double> out = {9};
  ASSERT_TRUE(stats::append_as_float64({bytes.data(), dtype::float16, shape, 3, memory_kind::host},
                                       out)
                  .ok());
  EXPECT_EQ(out, (std::vector<double>{9, 1.5, -2, 65504}));
  EXPECT_EQ(stats::append_as_float64({nullptr, dtype::string, shape, 3, memory_kind::host}, out)
                .code(),
            error_code::unsupported_dtype);
}

TEST(RuleStatsApi, Validation) {
  const auto t = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  const std::vector<double> bad_q = {101};
  EXPECT_EQ(stats::compute_percentiles(t.view(), bad_q).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(stats::compute_top_k_sum(t.view(), -2).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(stats::compute_bincount(t.view(), 0).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(stats::compute_bincount(t.view(), stats::max_bincount_classes + 1).error_status().code(),
            error_code::invalid_argument);
  // Confusion: counts must match; argmax needs whole rows.
  const auto five = f64({0, 1, 2, 0, 1});
  EXPECT_EQ(stats::compute_confusion(five.view(), t.view(), 3, stats::prediction_kind::class_values)
                .error_status()
                .code(),
            error_code::invalid_argument);
  const auto two = f64({0, 1});
  const auto ok = stats::compute_confusion(two.view(), t.view(), 3,
                                           stats::prediction_kind::argmax_last_axis);
  ASSERT_TRUE(ok.has_value()) << ok.error_status().to_string();
  EXPECT_EQ(ok->at(0, 2), 1);  // row [1, 2, 3] → 2
  EXPECT_EQ(ok->at(1, 2), 1);  // row [4, 5, 6] → 2
  EXPECT_EQ(stats::compute_confusion(five.view(), t.view(), 3,
                                     stats::prediction_kind::argmax_last_axis)
                .error_status()
                .code(),
            error_code::invalid_argument);
  const std::vector<double> many(stats::max_counted_values + 1, 1.0);
  EXPECT_EQ(stats::count_equal(t.view(), many).error_status().code(), error_code::invalid_argument);
  // Channel axis: Python-style negative axes; rank 0 and out-of-range axes are rejected.
  const auto last = stats::compute_channel_sums(t.view(), -1);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->axis, 1);
  EXPECT_EQ(last->sum, (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(stats::compute_channel_sums(t.view(), 2).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(stats::compute_channel_sums(t.view(), -3).error_status().code(),
            error_code::invalid_argument);
  const std::vector<int64_t> scalar_shape;
  const tensor_view scalar{t.bytes.data(), dtype::float64, scalar_shape, 1, memory_kind::host};
  EXPECT_EQ(stats::compute_channel_sums(scalar, 0).error_status().code(),
            error_code::invalid_argument);
  // Unsupported dtypes.
  const tensor_view strings{t.bytes.data(), dtype::string, t.shape, 6, memory_kind::host};
  EXPECT_EQ(stats::count_equal(strings, std::vector<double>{1}).error_status().code(),
            error_code::unsupported_dtype);
}

TEST(RuleStatsApi, UnavailableCudaIsAnErrorNotAFallback) {
  if (stats::cuda_device_available()) GTEST_SKIP() << "a CUDA device is visible";
  const auto t = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto cuda = stats::backend::cuda;
  EXPECT_EQ(stats::compute_percentiles(t.view(), std::vector<double>{5}, cuda).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(stats::compute_top_k_sum(t.view(), 1, cuda).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(stats::compute_bincount(t.view(), 3, cuda).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(stats::compute_confusion(t.view(), t.view(), 3, stats::prediction_kind::class_values,
                                     cuda)
                .error_status()
                .code(),
            error_code::invalid_argument);
  EXPECT_EQ(stats::count_equal(t.view(), std::vector<double>{1}, cuda).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(stats::compute_channel_sums(t.view(), 1, cuda).error_status().code(),
            error_code::invalid_argument);
}

// ---- CPU vs CUDA ----------------------------------------------------------------------------

owned_tensor random_tensor(dtype t, std::vector<int64_t> shape, data_mode mode, uint64_t seed,
                           double offset, double scale) {
  owned_tensor out;
  out.type = t;
  out.shape = std::move(shape);
  out.n = 1;
  for (const auto d : out.shape) out.n *= d;
  out.bytes.resize(1);  // odd offset: unaligned on both backends
  const auto bytes = reference::make_tensor_bytes(t, out.n, mode, seed, offset, scale);
  out.bytes.insert(out.bytes.end(), bytes.begin(), bytes.end());
  return out;
}

tensor_view unaligned(const owned_tensor& t) {
  return {t.bytes.data() + 1, t.type, t.shape, t.n, memory_kind::host};
}

TEST(gpu_order_statistics, PercentilesIdenticalAndTopKWithinTolerance) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  const std::vector<double> qs = {0, 5, 50, 95, 99.5, 100};
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {0, 1, 2, 1000, 300001}) {
      for (const data_mode mode : {data_mode::normal, data_mode::special}) {
        const uint64_t seed = 31 + static_cast<uint64_t>(n);
        const auto x = random_tensor(t, {n}, mode, seed, 0.5, 30);
        const std::string ctx = std::string(dtype_name(t)) + " n=" + std::to_string(n) + " " +
                                reference::to_string(mode) + " seed=" + std::to_string(seed);
        const auto cpu = stats::compute_percentiles(unaligned(x), qs, stats::backend::cpu);
        const auto gpu = stats::compute_percentiles(unaligned(x), qs, stats::backend::cuda);
        ASSERT_TRUE(gpu.has_value()) << gpu.error_status().to_string();
        for (std::size_t i = 0; i < qs.size(); ++i) {
          EXPECT_TRUE(same((*gpu)[i], (*cpu)[i])) << ctx << " q=" << qs[i];
        }
        const auto values =
            reference::element_values(x.bytes.data() + 1, t, n);
        for (const int64_t k : {int64_t{0}, int64_t{3}, n}) {
          const auto g = stats::compute_top_k_sum(unaligned(x), k, stats::backend::cuda);
          ASSERT_TRUE(g.has_value()) << g.error_status().to_string();
          const auto ref = reference::top_k_sum_ref(values, k);
          EXPECT_EQ(g->k, ref.k) << ctx;
          EXPECT_TRUE(same(g->max, ref.max)) << ctx;
          EXPECT_TRUE(reference::near_scaled("top_sum", g->top_sum, ref.top_sum, ref.top_abs)) << ctx;
          EXPECT_TRUE(reference::near_scaled("total_sum", g->total_sum, ref.total_sum, ref.total_abs))
              << ctx;
        }
      }
    }
  }
}

TEST(gpu_class_counts, IdenticalToCpu) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {0, 1, 1000, 300001}) {
      for (const int64_t k : {1, 7, 100, 5000}) {
        const auto labels = random_tensor(t, {n}, data_mode::special, 3 + static_cast<uint64_t>(n), k / 2.0, k);
        const auto cpu = stats::compute_bincount(unaligned(labels), k, stats::backend::cpu);
        const auto gpu = stats::compute_bincount(unaligned(labels), k, stats::backend::cuda);
        ASSERT_TRUE(gpu.has_value()) << gpu.error_status().to_string();
        EXPECT_EQ(gpu->counts, cpu->counts) << dtype_name(t) << " n=" << n << " k=" << k;
        if (k > 100) continue;
        const auto predictions =
            random_tensor(dtype::float32, {n}, data_mode::special, 5 + static_cast<uint64_t>(n), k / 2.0, k);
        const auto scores =
            random_tensor(dtype::float16, {n, 4}, data_mode::special, 7 + static_cast<uint64_t>(n), 0, 1);
        for (const bool argmax : {false, true}) {
          const auto kind = argmax ? stats::prediction_kind::argmax_last_axis
                                   : stats::prediction_kind::class_values;
          const auto& p = argmax ? scores : predictions;
          const auto c = stats::compute_confusion(unaligned(labels), unaligned(p), k, kind,
                                                  stats::backend::cpu);
          const auto g = stats::compute_confusion(unaligned(labels), unaligned(p), k, kind,
                                                  stats::backend::cuda);
          ASSERT_TRUE(g.has_value()) << g.error_status().to_string();
          EXPECT_EQ(g->counts, c->counts) << dtype_name(t) << " n=" << n << " k=" << k
                                          << " argmax=" << argmax;
        }
      }
    }
  }
}

TEST(gpu_value_counts, IdenticalToCpu) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  std::vector<double> targets;
  for (int i = -5; i < 15; ++i) targets.push_back(i);  // 20 values: three passes of 8
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {0, 1, 1000, 300001}) {
      const auto x = random_tensor(t, {n}, data_mode::special, 11 + static_cast<uint64_t>(n), 2, 3);
      const auto cpu = stats::count_equal(unaligned(x), targets, stats::backend::cpu);
      const auto gpu = stats::count_equal(unaligned(x), targets, stats::backend::cuda);
      ASSERT_TRUE(gpu.has_value()) << gpu.error_status().to_string();
      EXPECT_EQ(*gpu, *cpu) << dtype_name(t) << " n=" << n;
    }
  }
}

TEST(gpu_channel_sums, CountsIdenticalSumsWithinTolerance) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  const std::vector<std::vector<int64_t>> shapes = {{5}, {7, 3}, {16, 3, 32, 32}, {100, 50, 3},
                                                    {2, 600, 40}, {3, 0, 4}};
  for (const dtype t : reference::real_dtypes()) {
    for (const auto& shape : shapes) {
      for (int64_t axis = 0; axis < static_cast<int64_t>(shape.size()); ++axis) {
        const auto x = random_tensor(t, shape, data_mode::special, 19 + static_cast<uint64_t>(axis), 0.3, 2);
        const auto cpu = stats::compute_channel_sums(unaligned(x), axis, stats::backend::cpu);
        const auto gpu = stats::compute_channel_sums(unaligned(x), axis, stats::backend::cuda);
        ASSERT_TRUE(gpu.has_value()) << gpu.error_status().to_string();
        const std::string ctx = std::string(dtype_name(t)) + " rank " +
                                std::to_string(shape.size()) + " axis " + std::to_string(axis);
        EXPECT_EQ(gpu->count, cpu->count) << ctx;
        EXPECT_EQ(gpu->nan_count, cpu->nan_count) << ctx;
        EXPECT_EQ(gpu->pos_inf_count, cpu->pos_inf_count) << ctx;
        EXPECT_EQ(gpu->neg_inf_count, cpu->neg_inf_count) << ctx;
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<std::size_t>(d)];
        for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
        const auto ref = reference::channel_sums_ref(
            reference::element_values(x.bytes.data() + 1, t, x.n), outer,
            shape[static_cast<std::size_t>(axis)], inner);
        for (std::size_t c = 0; c < gpu->channels(); ++c) {
          EXPECT_TRUE(reference::near_scaled("sum", gpu->sum[c], ref.sum[c], ref.sum_abs[c]))
              << ctx << " channel " << c;
        }
      }
    }
  }
}

#if TRIALSTAT_HAS_CUDA
TEST(gpu_launchers, PercentilesOnDevicePointersAndOwnStreamOverwritePoison) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  const int64_t n = 100003;
  const auto bytes = reference::make_tensor_bytes(dtype::float32, n, data_mode::normal, 3, 1, 2);
  const std::vector<double> qs = {5, 95};
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  void* d_data = nullptr;
  void* d_q = nullptr;
  void* d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_data, bytes.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_q, sizeof(double) * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, sizeof(double) * 2), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_q, qs.data(), sizeof(double) * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(d_out, 0xFF, sizeof(double) * 2), cudaSuccess);  // poison
  std::size_t ws = 0;
  const auto* data = static_cast<const std::byte*>(d_data);
  ASSERT_TRUE(kernels::launch_percentiles(data, dtype::float32, n, nullptr, 2, nullptr, nullptr,
                                          &ws, stream)
                  .ok());
  void* d_ws = nullptr;
  ASSERT_EQ(cudaMalloc(&d_ws, ws), cudaSuccess);
  ASSERT_TRUE(kernels::launch_percentiles(data, dtype::float32, n, static_cast<double*>(d_q), 2,
                                          static_cast<double*>(d_out), d_ws, &ws, stream)
                  .ok());
  std::vector<double> out(2);
  ASSERT_EQ(cudaMemcpyAsync(out.data(), d_out, sizeof(double) * 2, cudaMemcpyDeviceToHost, stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const auto values = reference::element_values(bytes.data(), dtype::float32, n);
  EXPECT_EQ(out[0], reference::percentile_numpy(values, 5));
  EXPECT_EQ(out[1], reference::percentile_numpy(values, 95));
  std::size_t tiny = 8;
  EXPECT_EQ(kernels::launch_percentiles(data, dtype::float32, n, static_cast<double*>(d_q), 2,
                                        static_cast<double*>(d_out), d_ws, &tiny, stream)
                .code(),
            error_code::invalid_argument);
  cudaFree(d_ws);
  cudaFree(d_out);
  cudaFree(d_q);
  cudaFree(d_data);
  cudaStreamDestroy(stream);
}
#endif

}  // namespace
}  // namespace trialstat

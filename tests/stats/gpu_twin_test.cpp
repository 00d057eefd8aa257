// SPDX-License-Identifier: Apache-2.0
// CPU vs CUDA twins (suites gpu_*): every statistic on both backends must agree — integer
// outputs exactly, floats within the documented tolerance of the long-double reference — and the
// launchers must work on device pointers with a non-default stream. Skipped without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/support/gpu.hpp"
#include "tests/reference/expect_stats.hpp"
#include "tests/reference/reference_stats.hpp"
#include "trialstat/config.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/segment.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"

#if TRIALSTAT_HAS_CUDA
#include <cuda_runtime_api.h>

#include "kernels/moments/moments_cuda.hpp"
#endif

namespace trialstat {
namespace {

using reference::data_mode;

/// A batch of every dtype × sizes around block/chunk boundaries × modes, at odd offsets.
struct batch {
  std::vector<std::byte> buffer;
  std::vector<stats::segment> segments;
  std::vector<std::vector<double>> values;
  std::vector<std::string> names;
};

batch make_batch(uint64_t seed) {
  batch b;
  std::mt19937_64 rng(seed);
  const int64_t sizes[] = {0, 1, 7, 255, 256, 4095, 4096, 4097, 65535, 65536, 65537, 300001};
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : sizes) {
      for (const data_mode mode : {data_mode::normal, data_mode::special, data_mode::bits}) {
        const uint64_t s = rng();
        const auto bytes = reference::make_tensor_bytes(t, n, mode, s, 0.25, 60.0);
        b.buffer.resize(b.buffer.size() + 1 + rng() % 7);
        b.segments.push_back({b.buffer.size(), n, t});
        b.buffer.insert(b.buffer.end(), bytes.begin(), bytes.end());
        b.values.push_back(reference::element_values(bytes.data(), t, n));
        b.names.push_back(std::string(dtype_name(t)) + " n=" + std::to_string(n) + " " +
                          reference::to_string(mode) + " seed=" + std::to_string(s));
      }
    }
  }
  // Many tiny segments.
  for (int i = 0; i < 2000; ++i) {
    const int64_t n = static_cast<int64_t>(rng() % 40);
    const uint64_t s = rng();
    const auto bytes = reference::make_tensor_bytes(dtype::float32, n, data_mode::special, s, 0, 1);
    b.buffer.resize(b.buffer.size() + rng() % 3);
    b.segments.push_back({b.buffer.size(), n, dtype::float32});
    b.buffer.insert(b.buffer.end(), bytes.begin(), bytes.end());
    b.values.push_back(reference::element_values(bytes.data(), dtype::float32, n));
    b.names.push_back("tiny float32 n=" + std::to_string(n) + " seed=" + std::to_string(s));
  }
  return b;
}

TEST(gpu_moments, MatchesReferenceAndCpuCounts) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  const batch b = make_batch(2024);
  std::vector<stats::moments> cpu(b.segments.size()), gpu(b.segments.size());
  for (auto& m : gpu) m.count = -5;  // poison
  ASSERT_TRUE(stats::compute_moments(b.buffer.data(), b.segments, cpu, stats::backend::cpu).ok());
  const status s = stats::compute_moments(b.buffer.data(), b.segments, gpu, stats::backend::cuda);
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (std::size_t i = 0; i < b.segments.size(); ++i) {
    reference::expect_moments_match(gpu[i], reference::compute_moments_ref(b.values[i]),
                                    "cuda " + b.names[i]);
    EXPECT_EQ(gpu[i].nan_count, cpu[i].nan_count);
    EXPECT_EQ(gpu[i].zero_count, cpu[i].zero_count);
    EXPECT_EQ(gpu[i].min, cpu[i].min);
    EXPECT_EQ(gpu[i].max, cpu[i].max);
    if (::testing::Test::HasFailure()) return;
  }
  // Deterministic on the device: a second run gives identical bytes.
  std::vector<stats::moments> again(b.segments.size());
  ASSERT_TRUE(stats::compute_moments(b.buffer.data(), b.segments, again, stats::backend::cuda).ok());
  EXPECT_EQ(std::memcmp(again.data(), gpu.data(), gpu.size() * sizeof(stats::moments)), 0);
}

TEST(gpu_histogram, CountsIdenticalToCpu) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  const batch b = make_batch(77);
  std::vector<stats::moments> m(b.segments.size());
  ASSERT_TRUE(stats::compute_moments(b.buffer.data(), b.segments, m).ok());
  for (const int bins : {64, 1, 7, 3000, 100000}) {
    std::vector<stats::histogram> cpu(b.segments.size()), gpu(b.segments.size());
    ASSERT_TRUE(stats::compute_histograms(b.buffer.data(), b.segments, m, bins, cpu).ok());
    const status s = stats::compute_histograms(b.buffer.data(), b.segments, m, bins, gpu,
                                               stats::backend::cuda);
    ASSERT_TRUE(s.ok()) << s.to_string();
    for (std::size_t i = 0; i < b.segments.size(); ++i) {
      SCOPED_TRACE(b.names[i] + " bins=" + std::to_string(bins));
      EXPECT_EQ(gpu[i].bins, cpu[i].bins);
      EXPECT_EQ(gpu[i].lo, cpu[i].lo);
      EXPECT_EQ(gpu[i].hi, cpu[i].hi);
      EXPECT_EQ(gpu[i].degenerate, cpu[i].degenerate);
      EXPECT_EQ(gpu[i].counts, cpu[i].counts);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(gpu_pairwise, MatchesReference) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {int64_t{1}, int64_t{4097}, int64_t{200003}}) {
      const auto a = reference::make_tensor_bytes(t, n, data_mode::special, 5, 0.5, 30.0);
      const auto b = reference::make_tensor_bytes(t, n, data_mode::special, 6, 0.5, 30.0);
      const auto b64 = reference::encode_values(dtype::float64,
                                                reference::element_values(b.data(), t, n));
      std::vector<std::byte> a_odd(1);
      a_odd.insert(a_odd.end(), a.begin(), a.end());
      tensor_view va{a_odd.data() + 1, t, {}, n, memory_kind::host};
      for (const auto& [bytes, tb] : {std::pair{&b, t}, std::pair{&b64, dtype::float64}}) {
        tensor_view vb{bytes->data(), tb, {}, n, memory_kind::host};
        for (const bool equal_nan : {false, true}) {
          const stats::allclose_params params{1e-5, 1e-8, equal_nan};
          const auto cpu = stats::compute_pairwise(va, vb, params, stats::backend::cpu);
          const auto gpu = stats::compute_pairwise(va, vb, params, stats::backend::cuda);
          ASSERT_TRUE(gpu.has_value()) << gpu.error_status().to_string();
          const auto ref = reference::compute_pairwise_ref(
              reference::element_values(a.data(), t, n),
              reference::element_values(bytes->data(), tb, n), 1e-5, 1e-8, equal_nan);
          const std::string ctx = std::string(dtype_name(t)) + " vs " +
                                  std::string(dtype_name(tb)) + " n=" + std::to_string(n);
          reference::expect_pairwise_match(*gpu, ref, "cuda " + ctx);
          EXPECT_EQ(gpu->allclose_violations, cpu->allclose_violations) << ctx;
          EXPECT_EQ(gpu->nan_mismatches, cpu->nan_mismatches) << ctx;
          EXPECT_EQ(gpu->diff_max_abs, cpu->diff_max_abs) << ctx;
        }
      }
    }
  }
}

TEST(gpu_axis_counts, IdenticalToCpu) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  const std::vector<std::vector<int64_t>> shapes = {{}, {17}, {4, 3}, {0, 5}, {64, 300},
                                                    {30000, 7}, {5, 4, 3, 2}, {33, 20000}};
  for (const dtype t : reference::real_dtypes()) {
    for (const auto& shape : shapes) {
      int64_t n = 1;
      for (const auto d : shape) n *= d;
      const auto bytes = reference::make_tensor_bytes(t, n, data_mode::special, 9, 0.1, 20.0);
      std::vector<std::byte> odd(1);
      odd.insert(odd.end(), bytes.begin(), bytes.end());
      tensor_view v{odd.data() + 1, t, shape, n, memory_kind::host};
      for (const auto kind : {stats::axis0_predicate::kind::positive,
                              stats::axis0_predicate::kind::open_interval}) {
        const stats::axis0_predicate p{kind, -1.5, 10.0};
        const auto cpu = stats::count_along_axis0(v, p, stats::backend::cpu);
        const auto gpu = stats::count_along_axis0(v, p, stats::backend::cuda);
        ASSERT_TRUE(gpu.has_value()) << gpu.error_status().to_string();
        EXPECT_EQ(gpu->batch, cpu->batch);
        EXPECT_EQ(gpu->per_node, cpu->per_node) << dtype_name(t) << " rank " << shape.size();
      }
    }
  }
}

#if TRIALSTAT_HAS_CUDA
TEST(gpu_launchers, MomentsOnDevicePointersAndOwnStream) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  const auto bytes = reference::make_tensor_bytes(dtype::float32, 100003, data_mode::special, 3, 1, 2);
  std::vector<std::byte> host(5);
  host.insert(host.end(), bytes.begin(), bytes.end());
  const std::vector<stats::segment> segs = {{5, 100003, dtype::float32}, {5, 10, dtype::float32}};
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  void* d_base = nullptr;
  void* d_segs = nullptr;
  void* d_out = nullptr;
  // Rounded to 16 bytes as device_batch asks (unaligned loads read the aligned words around an
  // element; the last float32 here starts at an odd offset).
  ASSERT_EQ(cudaMalloc(&d_base, (host.size() + 15) & ~std::size_t{15}), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_segs, segs.size() * sizeof(stats::segment)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, segs.size() * sizeof(stats::moments)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_base, host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_segs, segs.data(), segs.size() * sizeof(stats::segment),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  kernels::device_batch batch{static_cast<const std::byte*>(d_base),
                              static_cast<const stats::segment*>(d_segs), 2, 100013};
  std::size_t ws_bytes = 0;
  ASSERT_TRUE(kernels::launch_moments(batch, nullptr, nullptr, &ws_bytes, stream).ok());
  EXPECT_GT(ws_bytes, 0u);
  void* d_ws = nullptr;
  ASSERT_EQ(cudaMalloc(&d_ws, ws_bytes), cudaSuccess);
  ASSERT_TRUE(kernels::launch_moments(batch, static_cast<stats::moments*>(d_out), d_ws, &ws_bytes,
                                      stream)
                  .ok());
  std::vector<stats::moments> out(2);
  ASSERT_EQ(cudaMemcpyAsync(out.data(), d_out, 2 * sizeof(stats::moments), cudaMemcpyDeviceToHost,
                            stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const auto values = reference::element_values(bytes.data(), dtype::float32, 100003);
  reference::expect_moments_match(out[0], reference::compute_moments_ref(values), "whole");
  reference::expect_moments_match(
      out[1], reference::compute_moments_ref({values.begin(), values.begin() + 10}), "first 10");
  // A batch larger than the workspace was sized for: records poisoned, never silently wrong.
  kernels::device_batch small = batch;
  small.max_total_elements = 0;
  std::size_t small_bytes = 0;
  ASSERT_TRUE(kernels::launch_moments(small, nullptr, nullptr, &small_bytes, stream).ok());
  ASSERT_TRUE(kernels::launch_moments(small, static_cast<stats::moments*>(d_out), d_ws,
                                      &small_bytes, stream)
                  .ok());
  ASSERT_EQ(cudaMemcpyAsync(out.data(), d_out, 2 * sizeof(stats::moments), cudaMemcpyDeviceToHost,
                            stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(out[0].count, -1);
  EXPECT_TRUE(std::isnan(out[0].sum));
  // Too small a workspace is refused up front.
  std::size_t tiny = 8;
  EXPECT_EQ(kernels::launch_moments(batch, static_cast<stats::moments*>(d_out), d_ws, &tiny, stream)
                .code(),
            error_code::invalid_argument);
  cudaFree(d_ws);
  cudaFree(d_out);
  cudaFree(d_segs);
  cudaFree(d_base);
  cudaStreamDestroy(stream);
}
#endif

}  // namespace
}  // namespace trialstat

// SPDX-License-Identifier: Apache-2.0
// CUDA count_equal: one launch per group of `values_per_pass` values; a persistent grid walks
// the elements with per-thread register counters, warps reduce them with shuffles and lane 0
// adds to the global counters (64-bit atomics: exact).
#include "kernels/value_counts/value_counts_cuda.hpp"

#include <string>

#include "kernels/common/segmented_cuda.cuh"
#include "kernels/value_counts/value_counts_op.hpp"
#include "trialstat/stats/value_counts.hpp"

namespace trialstat::kernels {
namespace {

using namespace cuda_detail;

/// The values of one pass, by value (kernel argument space).
struct value_pass {
  double values[values_per_pass];
  int count;
};

__global__ void __launch_bounds__(block_threads)
    count_equal_kernel(const std::byte* data, dtype type, int64_t n, value_pass pass,
                       unsigned long long* counts) {
  unsigned long long mine[values_per_pass] = {};
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  dispatch_segment(type, bytes, [&](auto tag, auto aligned) {
    constexpr dtype D = decltype(tag)::value;
    constexpr bool A = decltype(aligned)::value;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * block_threads) {
      const double x = load_as_double<D, A>(bytes, i);
#pragma unroll
      for (int k = 0; k < values_per_pass; ++k) {
        mine[k] += (k < pass.count && equal_hit(x, pass.values[k])) ? 1ULL : 0ULL;
      }
    }
  });
  const int lane = static_cast<int>(threadIdx.x % 32);
#pragma unroll
  for (int k = 0; k < values_per_pass; ++k) {
    unsigned long long v = mine[k];
#pragma unroll
    for (int offset = 16; offset >= 1; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0 && k < pass.count && v != 0ULL) atomicAdd(&counts[k], v);
  }
}

}  // namespace

status launch_count_equal(const std::byte* d_data, dtype type, int64_t n,
                          std::span<const double> values, int64_t* d_counts,
                          cudaStream_t stream) noexcept {
  if (n < 0 || values.size() > stats::max_counted_values) {
    return status(error_code::invalid_argument,
                  "launch_count_equal: negative element count or more than " +
                      std::to_string(stats::max_counted_values) + " values");
  }
  if (!is_supported_dtype(type)) {
    return status(error_code::unsupported_dtype, "launch_count_equal: dtype " +
                                                     std::string(dtype_name(type)) +
                                                     " is not a real numeric type");
  }
  if (values.empty()) return status::success();
  if (d_counts == nullptr || (n > 0 && d_data == nullptr)) {
    return status(error_code::invalid_argument, "launch_count_equal: null data or counts");
  }
  TRIALSTAT_CUDA_TRY(cudaMemsetAsync(d_counts, 0, values.size() * sizeof(int64_t), stream));
  if (n == 0) return status::success();
  int grid = 0;
  TRIALSTAT_RETURN_IF_ERROR(persistent_grid(4, (n + block_threads - 1) / block_threads, grid));
  for (std::size_t first = 0; first < values.size(); first += values_per_pass) {
    value_pass pass{};
    const std::size_t left = values.size() - first;
    pass.count = static_cast<int>(left < values_per_pass ? left : values_per_pass);
    for (int k = 0; k < pass.count; ++k) pass.values[k] = values[first + static_cast<std::size_t>(k)];
    count_equal_kernel<<<grid, block_threads, 0, stream>>>(
        d_data, type, n, pass, reinterpret_cast<unsigned long long*>(d_counts + first));
    TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  }
  return status::success();
}

}  // namespace trialstat::kernels

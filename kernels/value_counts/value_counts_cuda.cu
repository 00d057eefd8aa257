// SPDX-License-Identifier: Apache-2.0
// CUDA count_equal: one launch per group of `values_per_pass` values; a persistent grid walks
// the elements with per-thread register counters, warps reduce them with shuffles and lane 0
// adds to the global counters (64-bit atomics: exact).
#include "kernels/value_counts/value_counts_cuda.hpp"

#include <string>

#include "kernels/common/segmented_cuda.cuh"
#include "kernels/common/tensor_task.hpp"
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

/// Counts `count` (≤ values_per_pass) values over elements [0, n) of one tensor with the
/// threads `first_thread`, `first_thread + thread_stride`, …: registers per thread, warp
/// shuffles, one 64-bit atomic per warp and value into counts[k]. Every lane of a warp calls it.
__device__ __forceinline__ void count_equal_range(const unsigned char* bytes, dtype type, int64_t n,
                                                  const double (&values)[values_per_pass], int count,
                                                  unsigned long long* counts, int64_t first_thread,
                                                  int64_t thread_stride) {
  unsigned long long mine[values_per_pass] = {};
  dispatch_segment(type, bytes, [&](auto tag, auto aligned) {
    constexpr dtype D = decltype(tag)::value;
    constexpr bool A = decltype(aligned)::value;
    for (int64_t i = first_thread; i < n; i += thread_stride) {
      const double x = load_as_double<D, A>(bytes, i);
#pragma unroll
      for (int k = 0; k < values_per_pass; ++k) {
        mine[k] += (k < count && equal_hit(x, values[k])) ? 1ULL : 0ULL;
      }
    }
  });
  const int lane = static_cast<int>(threadIdx.x % 32);
#pragma unroll
  for (int k = 0; k < values_per_pass; ++k) {
    unsigned long long v = mine[k];
#pragma unroll
    for (int offset = 16; offset >= 1; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0 && k < count && v != 0ULL) atomicAdd(&counts[k], v);
  }
}

__global__ void __launch_bounds__(block_threads)
    count_equal_kernel(const std::byte* data, dtype type, int64_t n, value_pass pass,
                       unsigned long long* counts) {
  count_equal_range(reinterpret_cast<const unsigned char*>(data), type, n, pass.values, pass.count, counts,
                    static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x,
                    static_cast<int64_t>(gridDim.x) * block_threads);
}

/// Tasks along y (a block row per task, striding over the tasks), elements along x.
__global__ void __launch_bounds__(block_threads)
    count_equal_tasks_kernel(const std::byte* base, const tensor_task* tasks, int64_t num_tasks,
                             const double* values, unsigned long long* counts) {
  for (int64_t t = blockIdx.y; t < num_tasks; t += gridDim.y) {
    const tensor_task task = tasks[t];
    double mine[values_per_pass] = {};
    const int count = static_cast<int>(task.params_count < values_per_pass ? task.params_count : values_per_pass);
    for (int k = 0; k < count; ++k) mine[k] = values[task.params_first + k];
    count_equal_range(reinterpret_cast<const unsigned char*>(base + task.offset_bytes), task.type,
                      task.num_elements, mine, count, counts + task.out_first,
                      static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x,
                      static_cast<int64_t>(gridDim.x) * block_threads);
  }
}

}  // namespace

status launch_count_equal_tasks(const std::byte* d_base, std::span<const tensor_task> tasks,
                                const tensor_task* d_tasks, const double* d_values, int64_t* d_counts,
                                int64_t num_counts, cudaStream_t stream) noexcept {
  int64_t largest = 0;
  for (const tensor_task& t : tasks) {
    if (t.num_elements < 0 || t.params_count < 0 || t.params_count > values_per_pass || t.out_first < 0 ||
        t.out_first + t.params_count > num_counts) {
      return status(error_code::invalid_argument,
                    "launch_count_equal_tasks: a task with negative sizes, more than " +
                        std::to_string(values_per_pass) + " values or outputs past " + std::to_string(num_counts));
    }
    if (!is_supported_dtype(t.type)) {
      return status(error_code::unsupported_dtype, "launch_count_equal_tasks: dtype " +
                                                       std::string(dtype_name(t.type)) + " is not a real numeric type");
    }
    largest = t.num_elements > largest ? t.num_elements : largest;
  }
  if (num_counts == 0) return status::success();
  if (d_counts == nullptr || d_tasks == nullptr || d_values == nullptr || d_base == nullptr) {
    return status(error_code::invalid_argument, "launch_count_equal_tasks: null base, tasks, values or counts");
  }
  TRIALSTAT_CUDA_TRY(cudaMemsetAsync(d_counts, 0, static_cast<std::size_t>(num_counts) * sizeof(int64_t), stream));
  if (tasks.empty() || largest == 0) return status::success();
  dim3 grid;
  TRIALSTAT_RETURN_IF_ERROR(task_grid(4, largest, static_cast<int64_t>(tasks.size()), grid));
  count_equal_tasks_kernel<<<grid, block_threads, 0, stream>>>(d_base, d_tasks, static_cast<int64_t>(tasks.size()),
                                                               d_values, reinterpret_cast<unsigned long long*>(d_counts));
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

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

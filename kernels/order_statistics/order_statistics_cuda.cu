// SPDX-License-Identifier: Apache-2.0
// CUDA order statistics: convert to float64 keys (flagging NaN), radix-sort the keys
// (cub::DeviceRadixSort orders doubles numerically; NaN never matters because any NaN makes
// every result NaN), then a tiny kernel reads the order statistics and applies the shared
// arithmetic of order_statistics_op.hpp, or cub::DeviceReduce::Sum adds the top k.
#include "kernels/order_statistics/order_statistics_cuda.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include <new>
#include <string>
#include <vector>

#include "kernels/common/segmented_cuda.cuh"
#include "kernels/common/tensor_task.hpp"
#include "kernels/order_statistics/order_statistics_op.hpp"

namespace trialstat::kernels {
namespace {

using namespace cuda_detail;

__device__ __forceinline__ double device_nan() { return __longlong_as_double(0x7ff8000000000000LL); }

/// keys[i] = element i as float64 for the elements [0, n) this thread visits (`first_thread`,
/// + `thread_stride`, …); *has_nan = 1 when any is NaN (zeroed beforehand). Every thread of the
/// block calls it (block-uniform arguments: it synchronises the block).
__device__ __forceinline__ void convert_keys_range(const std::byte* data, dtype type, int64_t n, double* keys,
                                                   unsigned int* has_nan, int64_t first_thread,
                                                   int64_t thread_stride) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  int nan_seen = 0;
  dispatch_segment(type, bytes, [&](auto tag, auto aligned) {
    constexpr dtype D = decltype(tag)::value;
    constexpr bool A = decltype(aligned)::value;
    for (int64_t i = first_thread; i < n; i += thread_stride) {
      const double x = load_as_double<D, A>(bytes, i);
      nan_seen |= is_nan(x) ? 1 : 0;
      keys[i] = x;
    }
  });
  if (__syncthreads_or(nan_seen) && threadIdx.x == 0) *has_nan = 1u;
}

__global__ void __launch_bounds__(block_threads)
    convert_keys_kernel(const std::byte* data, dtype type, int64_t n, double* keys,
                        unsigned int* has_nan) {
  convert_keys_range(data, type, n, keys, has_nan, static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x,
                     static_cast<int64_t>(gridDim.x) * block_threads);
}

/// Every task's keys: tasks along y, elements along x; has_nan[t] per task.
__global__ void __launch_bounds__(block_threads)
    convert_keys_tasks_kernel(const std::byte* base, const tensor_task* tasks, int64_t num_tasks, double* keys,
                              unsigned int* has_nan) {
  for (int64_t t = blockIdx.y; t < num_tasks; t += gridDim.y) {
    const tensor_task task = tasks[t];
    convert_keys_range(base + task.offset_bytes, task.type, task.num_elements, keys + task.keys_first, has_nan + t,
                       static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x,
                       static_cast<int64_t>(gridDim.x) * block_threads);
  }
}

/// Percentile q of n sorted keys (NaN when empty, when the tensor held NaN, or q is invalid).
__device__ __forceinline__ double percentile_of(const double* sorted, int64_t n, double q, bool has_nan) {
  if (n == 0 || has_nan || !valid_percentile(q)) return device_nan();
  const percentile_position p = linear_percentile_position(n, q);
  return numpy_lerp(sorted[p.lower], sorted[p.upper], p.gamma);
}

__global__ void percentiles_kernel(const double* sorted, int64_t n, const double* q_percent,
                                   int64_t num_q, const unsigned int* has_nan, double* out) {
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < num_q;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[j] = percentile_of(sorted, n, q_percent[j], *has_nan != 0u);
  }
}

/// Every task's percentiles: a block per task (striding), a thread per q.
__global__ void percentiles_tasks_kernel(const double* sorted, const tensor_task* tasks, int64_t num_tasks,
                                         const double* q_percent, const unsigned int* has_nan, double* out) {
  for (int64_t t = blockIdx.x; t < num_tasks; t += gridDim.x) {
    const tensor_task task = tasks[t];
    for (int64_t j = threadIdx.x; j < task.params_count; j += blockDim.x) {
      out[task.out_first + j] =
          percentile_of(sorted + task.keys_first, task.num_elements, q_percent[task.params_first + j], has_nan[t] != 0u);
    }
  }
}

__global__ void top_k_finish_kernel(const double* sorted, int64_t n, int64_t k,
                                    const double* sums, const unsigned int* has_nan,
                                    stats::top_k_sum* out) {
  // Written field by field: the host struct's default member initialisers are not device code.
  out->k = k;
  if (n == 0) {
    out->top_sum = 0.0;
    out->total_sum = 0.0;
    out->max = device_nan();
  } else if (*has_nan != 0u) {
    out->top_sum = device_nan();
    out->total_sum = device_nan();
    out->max = device_nan();
  } else {
    out->top_sum = k > 0 ? sums[0] : 0.0;
    out->total_sum = sums[1];
    out->max = sorted[n - 1];
  }
}

/// The scratch of both launchers, carved from one workspace.
struct order_scratch {
  double* keys = nullptr;
  double* sorted = nullptr;
  double* sums = nullptr;        // [2]
  unsigned int* has_nan = nullptr;
  void* cub_temp = nullptr;
  std::size_t cub_temp_bytes = 0;
};

status carve_order_scratch(void* d_workspace, int64_t n, bool with_sums, workspace_carver& carver,
                           order_scratch& s) {
  std::size_t sort_bytes = 0;
  std::size_t reduce_bytes = 0;
  if (n > 0) {
    TRIALSTAT_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes,
                                                      static_cast<const double*>(nullptr),
                                                      static_cast<double*>(nullptr), n));
    if (with_sums) {
      TRIALSTAT_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, reduce_bytes,
                                                static_cast<const double*>(nullptr),
                                                static_cast<double*>(nullptr), n));
    }
  }
  static_cast<void>(d_workspace);
  s.keys = carver.take<double>(static_cast<std::size_t>(n));
  s.sorted = carver.take<double>(static_cast<std::size_t>(n));
  s.sums = carver.take<double>(2);
  s.has_nan = carver.take<unsigned int>(1);
  s.cub_temp_bytes = sort_bytes > reduce_bytes ? sort_bytes : reduce_bytes;
  s.cub_temp = carver.take<std::byte>(s.cub_temp_bytes);
  return status::success();
}

/// Convert and sort: s.sorted holds the n keys ascending, *s.has_nan the NaN flag.
status enqueue_sorted_keys(const std::byte* d_data, dtype type, int64_t n, order_scratch& s,
                           cudaStream_t stream) {
  TRIALSTAT_CUDA_TRY(cudaMemsetAsync(s.has_nan, 0, sizeof(unsigned int), stream));
  if (n == 0) return status::success();
  int grid = 0;
  TRIALSTAT_RETURN_IF_ERROR(persistent_grid(8, (n + block_threads - 1) / block_threads, grid));
  convert_keys_kernel<<<grid, block_threads, 0, stream>>>(d_data, type, n, s.keys, s.has_nan);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  std::size_t temp_bytes = s.cub_temp_bytes;
  TRIALSTAT_CUDA_TRY(cub::DeviceRadixSort::SortKeys(s.cub_temp, temp_bytes,
                                                    static_cast<const double*>(s.keys), s.sorted,
                                                    n, 0, 64, stream));
  return status::success();
}

status check_common(const char* what, const std::byte* d_data, dtype type, int64_t n,
                    std::size_t* workspace_bytes) {
  if (workspace_bytes == nullptr || n < 0) {
    return status(error_code::invalid_argument,
                  std::string(what) + ": null workspace size or negative element count");
  }
  if (!is_supported_dtype(type)) {
    return status(error_code::unsupported_dtype,
                  std::string(what) + ": dtype " + std::string(dtype_name(type)) +
                      " is not a real numeric type");
  }
  if (n > 0 && d_data == nullptr) {
    return status(error_code::invalid_argument, std::string(what) + ": null data");
  }
  return status::success();
}

status check_workspace(const char* what, std::size_t have, std::size_t need) {
  if (have >= need) return status::success();
  return status(error_code::invalid_argument, std::string(what) + ": workspace of " +
                                                  std::to_string(have) + " bytes, " +
                                                  std::to_string(need) + " needed");
}

/// The tasks' key ranges, validated: keys_first ≥ 0, ranges inside [0, total) and disjoint.
status check_key_ranges(std::span<const tensor_task> tasks, int64_t& total_keys) {
  total_keys = 0;
  for (const tensor_task& t : tasks) {
    if (t.num_elements < 0 || t.keys_first != total_keys || t.params_count < 0 || t.params_first < 0 ||
        t.out_first < 0) {
      return status(error_code::invalid_argument,
                    "launch_percentiles_tasks: tasks must have consecutive key ranges (keys_first = the sum of "
                    "the earlier tasks' elements) and non-negative sizes");
    }
    if (!is_supported_dtype(t.type)) {
      return status(error_code::unsupported_dtype, "launch_percentiles_tasks: dtype " +
                                                       std::string(dtype_name(t.type)) + " is not a real numeric type");
    }
    total_keys += t.num_elements;
  }
  return status::success();
}

}  // namespace

status launch_percentiles_tasks(const std::byte* d_base, std::span<const tensor_task> tasks,
                                const tensor_task* d_tasks, const double* d_q_percent, double* d_out,
                                void* d_workspace, std::size_t* workspace_bytes, cudaStream_t stream) noexcept {
  if (workspace_bytes == nullptr) {
    return status(error_code::invalid_argument, "launch_percentiles_tasks: null workspace size");
  }
  int64_t total_keys = 0;
  TRIALSTAT_RETURN_IF_ERROR(check_key_ranges(tasks, total_keys));
  const auto num_tasks = static_cast<int64_t>(tasks.size());
  // Small tasks: one segmented sort (their begin/end offsets in the workspace); large: one each.
  std::vector<int64_t> small_begin;
  std::vector<int64_t> small_end;
  int64_t largest = 0;
  std::size_t sort_bytes = 0;
  try {
    for (const tensor_task& t : tasks) {
      largest = t.num_elements > largest ? t.num_elements : largest;
      if (t.num_elements <= 1) continue;  // sorted already
      if (t.num_elements <= percentile_large_task_elements) {
        small_begin.push_back(t.keys_first);
        small_end.push_back(t.keys_first + t.num_elements);
      } else {
        std::size_t bytes = 0;
        TRIALSTAT_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const double*>(nullptr),
                                                          static_cast<double*>(nullptr), t.num_elements));
        sort_bytes = bytes > sort_bytes ? bytes : sort_bytes;
      }
    }
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory, "launch_percentiles_tasks: no host memory for the segment offsets");
  }
  const auto num_small = static_cast<int64_t>(small_begin.size());
  if (num_small > 0) {
    std::size_t bytes = 0;
    TRIALSTAT_CUDA_TRY(cub::DeviceSegmentedRadixSort::SortKeys(
        nullptr, bytes, static_cast<const double*>(nullptr), static_cast<double*>(nullptr), total_keys, num_small,
        static_cast<const int64_t*>(nullptr), static_cast<const int64_t*>(nullptr)));
    sort_bytes = bytes > sort_bytes ? bytes : sort_bytes;
  }
  workspace_carver carver(d_workspace);
  double* keys = carver.take<double>(static_cast<std::size_t>(total_keys));
  double* sorted = carver.take<double>(static_cast<std::size_t>(total_keys));
  auto* has_nan = carver.take<unsigned int>(static_cast<std::size_t>(num_tasks));
  auto* d_begin = carver.take<int64_t>(static_cast<std::size_t>(num_small));
  auto* d_end = carver.take<int64_t>(static_cast<std::size_t>(num_small));
  void* cub_temp = carver.take<std::byte>(sort_bytes);
  if (d_workspace == nullptr) {
    *workspace_bytes = carver.used();
    return status::success();
  }
  TRIALSTAT_RETURN_IF_ERROR(check_workspace("launch_percentiles_tasks", *workspace_bytes, carver.used()));
  if (tasks.empty()) return status::success();
  if (d_base == nullptr || d_tasks == nullptr || d_q_percent == nullptr || d_out == nullptr) {
    return status(error_code::invalid_argument, "launch_percentiles_tasks: null base, tasks, q or output");
  }
  TRIALSTAT_CUDA_TRY(cudaMemsetAsync(has_nan, 0, static_cast<std::size_t>(num_tasks) * sizeof(unsigned int), stream));
  if (total_keys > 0) {
    dim3 grid;
    TRIALSTAT_RETURN_IF_ERROR(task_grid(8, largest, num_tasks, grid));
    convert_keys_tasks_kernel<<<grid, block_threads, 0, stream>>>(d_base, d_tasks, num_tasks, keys, has_nan);
    TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
    // One-element tasks are their own sorted order.
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(sorted, keys, static_cast<std::size_t>(total_keys) * sizeof(double),
                                       cudaMemcpyDeviceToDevice, stream));
  }
  if (num_small > 0) {
    // Pageable host memory: the copies return once their bytes are staged, so the vectors may go.
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(d_begin, small_begin.data(), small_begin.size() * sizeof(int64_t),
                                       cudaMemcpyHostToDevice, stream));
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(d_end, small_end.data(), small_end.size() * sizeof(int64_t),
                                       cudaMemcpyHostToDevice, stream));
    std::size_t temp_bytes = sort_bytes;
    TRIALSTAT_CUDA_TRY(cub::DeviceSegmentedRadixSort::SortKeys(cub_temp, temp_bytes, static_cast<const double*>(keys),
                                                               sorted, total_keys, num_small,
                                                               static_cast<const int64_t*>(d_begin),
                                                               static_cast<const int64_t*>(d_end), 0, 64, stream));
  }
  for (const tensor_task& t : tasks) {
    if (t.num_elements <= percentile_large_task_elements) continue;
    std::size_t temp_bytes = sort_bytes;
    TRIALSTAT_CUDA_TRY(cub::DeviceRadixSort::SortKeys(cub_temp, temp_bytes, static_cast<const double*>(keys + t.keys_first),
                                                      sorted + t.keys_first, t.num_elements, 0, 64, stream));
  }
  const int64_t blocks = num_tasks < 65535 ? num_tasks : 65535;
  percentiles_tasks_kernel<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(sorted, d_tasks, num_tasks, d_q_percent,
                                                                             has_nan, d_out);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

status launch_percentiles(const std::byte* d_data, dtype type, int64_t n,
                          const double* d_q_percent, int64_t num_q, double* d_out,
                          void* d_workspace, std::size_t* workspace_bytes,
                          cudaStream_t stream) noexcept {
  TRIALSTAT_RETURN_IF_ERROR(check_common("launch_percentiles", d_data, type, n, workspace_bytes));
  if (num_q < 0) {
    return status(error_code::invalid_argument, "launch_percentiles: negative num_q");
  }
  workspace_carver carver(d_workspace);
  order_scratch s;
  TRIALSTAT_RETURN_IF_ERROR(carve_order_scratch(d_workspace, n, false, carver, s));
  if (d_workspace == nullptr) {
    *workspace_bytes = carver.used();
    return status::success();
  }
  TRIALSTAT_RETURN_IF_ERROR(check_workspace("launch_percentiles", *workspace_bytes, carver.used()));
  if (num_q == 0) return status::success();
  if (d_q_percent == nullptr || d_out == nullptr) {
    return status(error_code::invalid_argument, "launch_percentiles: null q or output");
  }
  TRIALSTAT_RETURN_IF_ERROR(enqueue_sorted_keys(d_data, type, n, s, stream));
  const int64_t blocks = (num_q + 127) / 128;
  percentiles_kernel<<<static_cast<unsigned>(blocks < 1024 ? blocks : 1024), 128, 0, stream>>>(
      s.sorted, n, d_q_percent, num_q, s.has_nan, d_out);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

status launch_top_k_sum(const std::byte* d_data, dtype type, int64_t n, int64_t k,
                        stats::top_k_sum* d_out, void* d_workspace, std::size_t* workspace_bytes,
                        cudaStream_t stream) noexcept {
  TRIALSTAT_RETURN_IF_ERROR(check_common("launch_top_k_sum", d_data, type, n, workspace_bytes));
  if (k < 0) return status(error_code::invalid_argument, "launch_top_k_sum: negative k");
  workspace_carver carver(d_workspace);
  order_scratch s;
  TRIALSTAT_RETURN_IF_ERROR(carve_order_scratch(d_workspace, n, true, carver, s));
  if (d_workspace == nullptr) {
    *workspace_bytes = carver.used();
    return status::success();
  }
  TRIALSTAT_RETURN_IF_ERROR(check_workspace("launch_top_k_sum", *workspace_bytes, carver.used()));
  if (d_out == nullptr) return status(error_code::invalid_argument, "launch_top_k_sum: null output");
  const int64_t used_k = k < n ? k : n;
  TRIALSTAT_RETURN_IF_ERROR(enqueue_sorted_keys(d_data, type, n, s, stream));
  if (n > 0) {
    std::size_t temp_bytes = s.cub_temp_bytes;
    if (used_k > 0) {
      TRIALSTAT_CUDA_TRY(cub::DeviceReduce::Sum(s.cub_temp, temp_bytes,
                                                static_cast<const double*>(s.sorted + (n - used_k)),
                                                s.sums, used_k, stream));
    }
    temp_bytes = s.cub_temp_bytes;
    TRIALSTAT_CUDA_TRY(cub::DeviceReduce::Sum(s.cub_temp, temp_bytes,
                                              static_cast<const double*>(s.keys), s.sums + 1, n,
                                              stream));
  }
  top_k_finish_kernel<<<1, 1, 0, stream>>>(s.sorted, n, used_k, s.sums, s.has_nan, d_out);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

}  // namespace trialstat::kernels

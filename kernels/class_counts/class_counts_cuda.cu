// SPDX-License-Identifier: Apache-2.0
// CUDA class counts: a persistent grid walks the elements (or label/prediction pairs); each block
// counts into shared 64-bit counters when the output is small, then adds them to the global
// counters once; otherwise every hit is a global atomic. Integer atomics: exact in any order.
#include "kernels/class_counts/class_counts_cuda.hpp"

#include <string>

#include "kernels/class_counts/class_counts_op.hpp"
#include "kernels/common/segmented_cuda.cuh"

namespace trialstat::kernels {
namespace {

using namespace cuda_detail;

constexpr int64_t max_shared_counters = 4096;  // 32 KiB of unsigned long long

__device__ __forceinline__ void add_count(unsigned long long* counters, int64_t index) {
  atomicAdd(&counters[index], 1ULL);
}

/// Zero the block's shared counters (or nothing when counting globally).
__device__ __forceinline__ void zero_shared(unsigned long long* shared, int64_t counters,
                                            bool use_shared) {
  if (!use_shared) return;
  for (int64_t c = threadIdx.x; c < counters; c += blockDim.x) shared[c] = 0ULL;
  __syncthreads();
}

__device__ __forceinline__ void flush_shared(const unsigned long long* shared, int64_t counters,
                                             bool use_shared, unsigned long long* global) {
  if (!use_shared) return;
  __syncthreads();
  for (int64_t c = threadIdx.x; c < counters; c += blockDim.x) {
    if (shared[c] != 0ULL) atomicAdd(&global[c], shared[c]);
  }
}

__global__ void __launch_bounds__(block_threads)
    bincount_kernel(const std::byte* data, dtype type, int64_t n, int64_t num_classes,
                    unsigned long long* counts) {
  __shared__ unsigned long long shared[max_shared_counters];
  const int64_t counters = num_classes + 1;
  const bool use_shared = counters <= max_shared_counters;
  zero_shared(shared, counters, use_shared);
  unsigned long long* target = use_shared ? shared : counts;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  dispatch_segment(type, bytes, [&](auto tag, auto aligned) {
    constexpr dtype D = decltype(tag)::value;
    constexpr bool A = decltype(aligned)::value;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * block_threads) {
      add_count(target, class_of(load_as_double<D, A>(bytes, i), num_classes));
    }
  });
  flush_shared(shared, counters, use_shared, counts);
}

__global__ void __launch_bounds__(block_threads)
    confusion_kernel(const std::byte* labels, dtype label_type, const std::byte* predictions,
                     dtype prediction_type, int64_t num_pairs, int64_t width, int64_t num_classes,
                     bool argmax, unsigned long long* counts) {
  __shared__ unsigned long long shared[max_shared_counters];
  const int64_t side = num_classes + 1;
  const int64_t counters = side * side;
  const bool use_shared = counters <= max_shared_counters;
  zero_shared(shared, counters, use_shared);
  unsigned long long* target = use_shared ? shared : counts;
  const auto* label_bytes = reinterpret_cast<const unsigned char*>(labels);
  const auto* prediction_bytes = reinterpret_cast<const unsigned char*>(predictions);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x; i < num_pairs;
       i += static_cast<int64_t>(gridDim.x) * block_threads) {
    const int64_t label = class_of(load_any_as_double(label_type, label_bytes, i), num_classes);
    const int64_t prediction =
        argmax ? argmax_class(prediction_type, prediction_bytes, i, width, num_classes)
               : class_of(load_any_as_double(prediction_type, prediction_bytes, i), num_classes);
    add_count(target, label * side + prediction);
  }
  flush_shared(shared, counters, use_shared, counts);
}

status check_dtype(const char* what, dtype type) {
  if (is_supported_dtype(type)) return status::success();
  return status(error_code::unsupported_dtype, std::string(what) + ": dtype " +
                                                   std::string(dtype_name(type)) +
                                                   " is not a real numeric type");
}

}  // namespace

status launch_bincount(const std::byte* d_data, dtype type, int64_t n, int64_t num_classes,
                       int64_t* d_counts, cudaStream_t stream) noexcept {
  if (n < 0 || num_classes < 1) {
    return status(error_code::invalid_argument,
                  "launch_bincount: negative element count or num_classes < 1");
  }
  TRIALSTAT_RETURN_IF_ERROR(check_dtype("launch_bincount", type));
  if (d_counts == nullptr || (n > 0 && d_data == nullptr)) {
    return status(error_code::invalid_argument, "launch_bincount: null data or counts");
  }
  TRIALSTAT_CUDA_TRY(cudaMemsetAsync(
      d_counts, 0, static_cast<std::size_t>(num_classes + 1) * sizeof(int64_t), stream));
  if (n == 0) return status::success();
  int grid = 0;
  TRIALSTAT_RETURN_IF_ERROR(persistent_grid(4, (n + block_threads - 1) / block_threads, grid));
  bincount_kernel<<<grid, block_threads, 0, stream>>>(
      d_data, type, n, num_classes, reinterpret_cast<unsigned long long*>(d_counts));
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

status launch_confusion(const std::byte* d_labels, dtype label_type,
                        const std::byte* d_predictions, dtype prediction_type, int64_t num_pairs,
                        int64_t width, int64_t num_classes, stats::prediction_kind kind,
                        int64_t* d_counts, cudaStream_t stream) noexcept {
  if (num_pairs < 0 || width < 1 || num_classes < 1) {
    return status(error_code::invalid_argument,
                  "launch_confusion: negative pair count, width < 1 or num_classes < 1");
  }
  TRIALSTAT_RETURN_IF_ERROR(check_dtype("launch_confusion (labels)", label_type));
  TRIALSTAT_RETURN_IF_ERROR(check_dtype("launch_confusion (predictions)", prediction_type));
  if (d_counts == nullptr || (num_pairs > 0 && (d_labels == nullptr || d_predictions == nullptr))) {
    return status(error_code::invalid_argument, "launch_confusion: null data or counts");
  }
  const int64_t side = num_classes + 1;
  TRIALSTAT_CUDA_TRY(cudaMemsetAsync(d_counts, 0,
                                     static_cast<std::size_t>(side * side) * sizeof(int64_t),
                                     stream));
  if (num_pairs == 0) return status::success();
  int grid = 0;
  TRIALSTAT_RETURN_IF_ERROR(
      persistent_grid(4, (num_pairs + block_threads - 1) / block_threads, grid));
  confusion_kernel<<<grid, block_threads, 0, stream>>>(
      d_labels, label_type, d_predictions, prediction_type, num_pairs, width, num_classes,
      kind == stats::prediction_kind::argmax_last_axis,
      reinterpret_cast<unsigned long long*>(d_counts));
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

}  // namespace trialstat::kernels

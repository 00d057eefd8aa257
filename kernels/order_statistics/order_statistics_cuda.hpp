// SPDX-License-Identifier: Apache-2.0
/// @file order_statistics_cuda.hpp
/// @brief CUDA launchers of the order statistics (internal; only built with CUDA).
/// Both convert the tensor to float64 in device scratch and sort it with cub::DeviceRadixSort.
/// Two-phase: with a null `d_workspace` only `*workspace_bytes` is written (the size needed for
/// n elements: about 2·n·8 bytes plus CUB's temporary storage).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/common/tensor_task.hpp"
#include "trialstat/dtype.hpp"
#include "trialstat/stats/order_statistics.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief d_out[j] = percentile d_q_percent[j] of the n elements at d_data (semantics:
/// stats::compute_percentiles; a q outside [0, 100] gives NaN — the host validates first),
/// asynchronously on `stream`.
/// @param d_data      device bytes of a real dtype, any alignment
/// @param d_q_percent [num_q] device; d_out [num_q] device
/// @return ok; invalid_argument (negative sizes, null pointers, unsupported dtype, workspace too
///   small); cuda_error/cuda_fatal.
[[nodiscard]] status launch_percentiles(const std::byte* d_data, dtype type, int64_t n,
                                        const double* d_q_percent, int64_t num_q, double* d_out,
                                        void* d_workspace, std::size_t* workspace_bytes,
                                        cudaStream_t stream) noexcept;

/// @brief For every task t of a batch at `d_base`: d_out[t.out_first + j] = percentile
/// d_q_percent[t.params_first + j] (j < t.params_count) of its t.num_elements elements of t.type
/// at d_base + t.offset_bytes — semantics of stats::compute_percentiles. Keys: the tasks' key
/// ranges are consecutive (t.keys_first = Σ earlier num_elements). One conversion launch, one
/// cub::DeviceSegmentedRadixSort over the tasks of ≤ percentile_large_task_elements elements (a
/// block per tensor), one cub::DeviceRadixSort per larger task, one launch picking every task's
/// percentiles, asynchronously on `stream`. Two-phase: workspace ≈ 2 × 8 bytes per element +
/// CUB's temporary storage.
/// @param tasks  the host copy of the table (validated; plans the sorts); `d_tasks` the device one
/// @return ok; invalid_argument (key ranges not consecutive, negative sizes, null pointers,
///   workspace too small), unsupported_dtype, out_of_memory (host); cuda_error/cuda_fatal.
[[nodiscard]] status launch_percentiles_tasks(const std::byte* d_base, std::span<const tensor_task> tasks,
                                              const tensor_task* d_tasks, const double* d_q_percent, double* d_out,
                                              void* d_workspace, std::size_t* workspace_bytes,
                                              cudaStream_t stream) noexcept;

/// @brief *d_out = top-k and total sums of the n elements at d_data (semantics:
/// stats::compute_top_k_sum; sums by cub::DeviceReduce::Sum, a fixed tree: deterministic on one
/// device), asynchronously on `stream`. k ≥ 0.
/// @return ok; invalid_argument (negative sizes, null pointers, unsupported dtype, workspace too
///   small); cuda_error/cuda_fatal.
[[nodiscard]] status launch_top_k_sum(const std::byte* d_data, dtype type, int64_t n, int64_t k,
                                      stats::top_k_sum* d_out, void* d_workspace,
                                      std::size_t* workspace_bytes, cudaStream_t stream) noexcept;

}  // namespace trialstat::kernels

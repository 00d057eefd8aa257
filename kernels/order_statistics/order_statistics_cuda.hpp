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

/// @brief *d_out = top-k and total sums of the n elements at d_data (semantics:
/// stats::compute_top_k_sum; sums by cub::DeviceReduce::Sum, a fixed tree: deterministic on one
/// device), asynchronously on `stream`. k ≥ 0.
/// @return ok; invalid_argument (negative sizes, null pointers, unsupported dtype, workspace too
///   small); cuda_error/cuda_fatal.
[[nodiscard]] status launch_top_k_sum(const std::byte* d_data, dtype type, int64_t n, int64_t k,
                                      stats::top_k_sum* d_out, void* d_workspace,
                                      std::size_t* workspace_bytes, cudaStream_t stream) noexcept;

}  // namespace trialstat::kernels

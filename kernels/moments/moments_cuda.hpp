// SPDX-License-Identifier: Apache-2.0
/// @file moments_cuda.hpp
/// @brief CUDA moments launcher (internal; only built with CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/common/cuda_batch.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief Moments of every segment of a device batch, asynchronously on `stream`.
///
/// Two-phase: with `d_workspace == nullptr`, only sets `*workspace_bytes` (depends on
/// num_segments and max_total_elements) and returns. Otherwise `*workspace_bytes` must be at
/// least that size; the launch enqueues a chunk-planning scan, one persistent kernel in which a
/// block reduces each 64 Ki-element chunk (chunks of one segment run on many blocks; a small
/// segment is one block's chunk) and a merge kernel (one warp per segment, fixed-order tree).
/// float64 accumulation; dtype conversion in registers; deterministic for a given device.
/// @param d_out [num_segments] device records, written in full
/// @return ok; invalid_argument (null pointers, workspace too small); cuda_error/cuda_fatal.
[[nodiscard]] status launch_moments(const device_batch& batch, stats::moments* d_out,
                                    void* d_workspace, std::size_t* workspace_bytes,
                                    cudaStream_t stream) noexcept;

}  // namespace trialstat::kernels

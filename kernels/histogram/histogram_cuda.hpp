// SPDX-License-Identifier: Apache-2.0
/// @file histogram_cuda.hpp
/// @brief CUDA histogram launcher (internal; only built with CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/cuda_batch.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief Histogram counts of every segment of a device batch over the [min, max] of its
/// moments record (semantics: histogram_op.hpp), asynchronously on `stream`.
///
/// Two-phase as launch_moments. Each block counts a 64 Ki-element chunk into per-warp
/// shared-memory sub-histograms (global atomics when `bins` is too large for shared memory) and
/// adds them to the segment's row with 64-bit atomics: counts are exact and deterministic.
/// `lo`, `hi` and `degenerate` of each histogram are `make_histogram_params(min, max, bins)`,
/// computed by the caller from the same moments.
/// @param d_moments [num_segments] device records from launch_moments
/// @param d_counts  [num_segments × bins] device int64, zeroed and written by the launch; a
///                  segment without finite values keeps an all-zero row; every count is −1
///                  when the batch exceeds max_total_elements
/// @return ok; invalid_argument (bins < 1, null pointers, workspace too small); cuda_error.
[[nodiscard]] status launch_histograms(const device_batch& batch, const stats::moments* d_moments,
                                       int bins, int64_t* d_counts, void* d_workspace,
                                       std::size_t* workspace_bytes, cudaStream_t stream) noexcept;

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
/// @file log_histogram_cuda.hpp
/// @brief CUDA log-scale histogram launcher (internal; only built with CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/cuda_batch.hpp"
#include "kernels/log_histogram/log_histogram_op.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief Cells (log_histogram_op.hpp) of every segment of a device batch, asynchronously on
/// `stream`. Two-phase as launch_moments. A persistent grid walks 64 Ki-element chunks; each
/// block keeps the lookup tables and per-warp-group sub-histograms in shared memory and flushes
/// non-zero cells with 64-bit atomics: exact and deterministic.
/// @param d_cells [num_segments × log_histogram_num_cells] device int64, zeroed and written by
///                the launch; every cell is −1 when the batch exceeds max_total_elements
/// @return ok; invalid_argument (null pointers, workspace too small); cuda_error/cuda_fatal.
[[nodiscard]] status launch_log_histograms(const device_batch& batch, int64_t* d_cells,
                                           void* d_workspace, std::size_t* workspace_bytes,
                                           cudaStream_t stream) noexcept;

/// @brief Copy the device's lookup tables (log_histogram_op.hpp) to `h_tables` (tests compare
/// them with the host's make_log_histogram_tables()). Synchronous. @return ok; cuda_error.
[[nodiscard]] status copy_log_histogram_device_tables(log_histogram_tables* h_tables) noexcept;

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
/// @file pairwise_cuda.hpp
/// @brief CUDA pairwise launcher (internal; only built with CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/common/cuda_batch.hpp"
#include "trialstat/stats/pairwise.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief Pairwise statistics of segment i of `previous` against segment i of `current`, for
/// every i, asynchronously on `stream` (semantics: pairwise_op.hpp). Both batches have the same
/// num_segments and pairwise equal element counts (checked by the caller); dtypes may differ.
/// Two-phase as launch_moments (the workspace is sized from `previous`).
/// @param d_out [num_segments] device records
/// @return ok; invalid_argument (null pointers, segment counts differ, workspace too small);
///   cuda_error/cuda_fatal.
[[nodiscard]] status launch_pairwise(const device_batch& previous, const device_batch& current,
                                     const stats::allclose_params& params, stats::pairwise* d_out,
                                     void* d_workspace, std::size_t* workspace_bytes,
                                     cudaStream_t stream) noexcept;

}  // namespace trialstat::kernels

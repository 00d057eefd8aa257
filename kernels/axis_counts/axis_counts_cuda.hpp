// SPDX-License-Identifier: Apache-2.0
/// @file axis_counts_cuda.hpp
/// @brief CUDA per-node axis-0 counts launcher (internal; only built with CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "trialstat/dtype.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief count[j] = #{ i < batch : predicate(x[i·nodes + j]) } for a device tensor of a real
/// dtype (any alignment), asynchronously on `stream`. Threads own nodes (coalesced rows); tall
/// tensors also split the batch across blocks and add with 64-bit atomics: exact.
/// Needs no workspace.
/// @param d_counts [nodes] device int64, zeroed and written by the launch
/// @return ok; invalid_argument (null pointers, negative sizes, unsupported dtype);
///   cuda_error/cuda_fatal.
[[nodiscard]] status launch_axis0_counts(const std::byte* d_data, dtype type, int64_t batch,
                                         int64_t nodes, const stats::axis0_predicate& predicate,
                                         int64_t* d_counts, cudaStream_t stream) noexcept;

}  // namespace trialstat::kernels

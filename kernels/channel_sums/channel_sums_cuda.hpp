// SPDX-License-Identifier: Apache-2.0
/// @file channel_sums_cuda.hpp
/// @brief CUDA launcher of the per-channel sums (internal; only built with CUDA). No workspace.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>

#include "kernels/channel_sums/channel_sums_op.hpp"
#include "kernels/common/tensor_task.hpp"
#include "trialstat/dtype.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief d_states[c] = totals of channel c of the tensor at d_data viewed as
/// [outer, channels, inner] (zeroed here), asynchronously on `stream`. Blocks accumulate in
/// shared memory when channels ≤ 512 (a warp whose 32 elements share one channel adds once),
/// then add to the output with atomics: counts exact; sums in a run-dependent order (within the
/// tolerance of stats::compute_channel_sums).
/// @return ok; invalid_argument (null pointers, negative sizes, unsupported dtype);
///   cuda_error/cuda_fatal.
[[nodiscard]] status launch_channel_sums(const std::byte* d_data, dtype type, int64_t outer,
                                         int64_t channels, int64_t inner,
                                         channel_state* d_states, cudaStream_t stream) noexcept;

/// @brief For every task t of a batch at `d_base`: d_states[t.out_first + c] = totals of channel
/// c < t.channels of its t.num_elements elements of t.type at d_base + t.offset_bytes, viewed as
/// [outer, t.channels, t.inner]. All `num_states` states are zeroed here; one launch (the same
/// per-block accumulation as launch_channel_sums), asynchronously on `stream`.
/// @param tasks  the host copy of the table (validated, sizes the grid); `d_tasks` the device one
/// @return ok; invalid_argument (a layout that does not divide the elements, outputs past
///   num_states, null pointers), unsupported_dtype; cuda_error/cuda_fatal.
[[nodiscard]] status launch_channel_sums_tasks(const std::byte* d_base, std::span<const tensor_task> tasks,
                                               const tensor_task* d_tasks, channel_state* d_states, int64_t num_states,
                                               cudaStream_t stream) noexcept;

}  // namespace trialstat::kernels

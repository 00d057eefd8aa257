// SPDX-License-Identifier: Apache-2.0
/// @file value_counts_cuda.hpp
/// @brief CUDA launchers of count_equal, one tensor or a table of tensors (internal; only built
/// with CUDA). No workspace.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>

#include "kernels/common/tensor_task.hpp"
#include "trialstat/dtype.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief d_counts[k] = #{i < n : x[i] == values[k]} (zeroed here), asynchronously on `stream`.
/// `values` is host memory (≤ stats::max_counted_values; passed as kernel arguments, so it may be
/// reused once this returns). Threads keep `values_per_pass` counters in registers per pass,
/// warps add them with shuffles and one 64-bit atomic per warp and value: exact.
/// @return ok; invalid_argument (null pointers, negative sizes, too many values, unsupported
///   dtype); cuda_error/cuda_fatal.
[[nodiscard]] status launch_count_equal(const std::byte* d_data, dtype type, int64_t n,
                                        std::span<const double> values, int64_t* d_counts,
                                        cudaStream_t stream) noexcept;

/// @brief For every task t of a batch at `d_base`: d_counts[t.out_first + k] = #{x == value
/// d_values[t.params_first + k]} over its t.num_elements elements of t.type at d_base +
/// t.offset_bytes, k < t.params_count ≤ values_per_pass (a tensor with more values is several
/// tasks). All `num_counts` counts are zeroed here; one launch, asynchronously on `stream`.
/// @param tasks    the host copy of the table (validated, sizes the grid); `d_tasks` the device one
/// @return ok; invalid_argument (negative sizes, too many values, an output past num_counts, null
///   pointers), unsupported_dtype; cuda_error/cuda_fatal.
[[nodiscard]] status launch_count_equal_tasks(const std::byte* d_base, std::span<const tensor_task> tasks,
                                              const tensor_task* d_tasks, const double* d_values, int64_t* d_counts,
                                              int64_t num_counts, cudaStream_t stream) noexcept;

}  // namespace trialstat::kernels

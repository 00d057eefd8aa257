// SPDX-License-Identifier: Apache-2.0
/// @file value_counts_cuda.hpp
/// @brief CUDA launcher of count_equal (internal; only built with CUDA). No workspace.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>

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

}  // namespace trialstat::kernels

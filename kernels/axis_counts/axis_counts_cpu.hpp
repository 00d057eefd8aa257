// SPDX-License-Identifier: Apache-2.0
/// @file axis_counts_cpu.hpp
/// @brief CPU twin of the per-node axis-0 counts (internal; host/stats/axis_counts.cpp).
#pragma once

#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::kernels {

/// @brief count[j] = #{ i : predicate(x[i, j]) } for a host tensor (layout: axis0_layout).
/// OpenMP over node ranges (wide tensors) or batch ranges (narrow ones); exact.
/// @return the counts; invalid_argument (shape/num_elements mismatch, null data);
///   unsupported_dtype; out_of_memory.
[[nodiscard]] result<stats::axis0_counts> count_along_axis0_cpu(
    const tensor_view& tensor, const stats::axis0_predicate& predicate) noexcept;

}  // namespace trialstat::kernels

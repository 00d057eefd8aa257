// SPDX-License-Identifier: Apache-2.0
/// @file value_counts_op.hpp
/// @brief The single definition, host and device, of "x equals v" for count_equal
/// (include/trialstat/stats/value_counts.hpp): IEEE float64 equality — −0.0 == +0.0, NaN equal
/// to nothing, each infinity equal to itself.
#pragma once

#include "kernels/common/element_op.hpp"

namespace trialstat::kernels {

/// @brief Values compared per pass of the CUDA kernel (registers per thread).
inline constexpr int values_per_pass = 8;

/// @brief Whether element x counts for value v.
TRIALSTAT_HD_INLINE bool equal_hit(double x, double v) { return x == v; }

}  // namespace trialstat::kernels

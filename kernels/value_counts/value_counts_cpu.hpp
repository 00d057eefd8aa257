// SPDX-License-Identifier: Apache-2.0
/// @file value_counts_cpu.hpp
/// @brief CPU twin of count_equal (internal; host/stats/value_counts.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::kernels {

/// @brief counts[k] = #{i : x[i] == values[k]} for a host tensor (semantics:
/// stats::count_equal; arguments validated by the caller). OpenMP over fixed chunks; exact.
[[nodiscard]] result<std::vector<int64_t>> count_equal_cpu(const tensor_view& tensor,
                                                           std::span<const double> values) noexcept;

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
/// @file order_statistics_cpu.hpp
/// @brief CPU twins of the order statistics (internal; host/stats/order_statistics.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/stats/order_statistics.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::kernels {

/// @brief Percentiles of a host tensor (semantics: stats::compute_percentiles): converts to a
/// float64 copy and selects each needed order statistic with std::nth_element on the part
/// above the previous one. @return as stats::compute_percentiles (no backend errors).
[[nodiscard]] result<std::vector<double>> compute_percentiles_cpu(
    const tensor_view& tensor, std::span<const double> q_percent) noexcept;

/// @brief Top-k and total sums of a host tensor (semantics: stats::compute_top_k_sum): total in
/// element order, the k largest (selected by std::nth_element, then sorted descending) summed
/// pairwise in that order. Deterministic.
[[nodiscard]] result<stats::top_k_sum> compute_top_k_sum_cpu(const tensor_view& tensor,
                                                             int64_t k) noexcept;

}  // namespace trialstat::kernels

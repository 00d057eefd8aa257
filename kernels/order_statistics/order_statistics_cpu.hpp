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

/// @brief Percentiles of a host tensor (semantics: stats::compute_percentiles) by a radix
/// selection on order-preserving keys of the element's width (−0.0 below +0.0, NaN outside
/// ±Inf): a histogram of the keys' top 11 bits locates every needed rank at once — of every
/// 7th key, checked by the copying pass, for float32/int32/uint32 tensors of 2^14 elements or
/// more on AVX-512; of every key otherwise — then only the keys of the buckets holding a rank
/// are copied out and narrowed (more radix levels, std::nth_element below 512 keys). 16-bit
/// dtypes of 2^14 elements or more: one histogram of the whole key instead. Results
/// are the same on every ISA and equal, bit for bit, to selecting from a float64 copy sorted
/// with −0.0 below +0.0. Synchronous; one thread per call.
/// @return as stats::compute_percentiles (no backend errors).
[[nodiscard]] result<std::vector<double>> compute_percentiles_cpu(
    const tensor_view& tensor, std::span<const double> q_percent) noexcept;

/// @brief Top-k and total sums of a host tensor (semantics: stats::compute_top_k_sum): total in
/// element order, the k largest (selected by std::nth_element, then sorted descending) summed
/// pairwise in that order. Deterministic.
[[nodiscard]] result<stats::top_k_sum> compute_top_k_sum_cpu(const tensor_view& tensor,
                                                             int64_t k) noexcept;

}  // namespace trialstat::kernels

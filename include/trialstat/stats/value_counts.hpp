// SPDX-License-Identifier: Apache-2.0
/// @file value_counts.hpp
/// @brief count(x == v) for a short list of values v (NLPSequenceRatio's token ratios,
/// spec/RULES.md §3.18, §4 "count(x == v) for given v").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/status.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats {

/// @brief Largest number of values one call accepts.
inline constexpr std::size_t max_counted_values = 64;

/// @brief counts[k] = #{i : x[i] == values[k]}, comparing in float64 after the usual conversion
/// (so int64 elements beyond 2^53 compare by their nearest double). −0.0 equals +0.0; NaN equals
/// nothing (a NaN in `values` counts 0); ±Inf equal the same infinity. Empty tensor: all 0.
/// @param values [num_values] ≤ max_counted_values (duplicates allowed, each counted)
/// @return [num_values] counts; errors: invalid_argument (too many values, null data with
///   elements, backend unavailable); unsupported_dtype; cuda_error/cuda_fatal. Synchronous; exact
///   and identical on every backend.
[[nodiscard]] result<std::vector<int64_t>> count_equal(const tensor_view& tensor,
                                                       std::span<const double> values,
                                                       backend which = backend::cpu);

}  // namespace trialstat::stats

// SPDX-License-Identifier: Apache-2.0
/// @file float64_values.hpp
/// @brief A tensor's elements as float64, with the conversion every statistic uses (bool → 0/1,
/// integers → nearest double, float16/bfloat16 exactly; kernels/common/element_op.hpp). For rules
/// that combine the values of several tensors on the host (Confusion concatenates label tensors,
/// FeatureImportanceOverweight gathers scalars) and for the CPU order statistics.
#pragma once

#include <span>
#include <vector>

#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats {

/// @brief Convert every element of a host tensor to float64, appending to `out`.
/// @param tensor host memory, any alignment; num_elements ≥ 0
/// @param out    values appended in C order (existing contents kept)
/// @return ok; unsupported_dtype for string/complex/invalid dtypes; invalid_argument for a null
///   buffer with elements or a negative count; out_of_memory. Synchronous, exact.
[[nodiscard]] status append_as_float64(const tensor_view& tensor, std::vector<double>& out);

}  // namespace trialstat::stats

// SPDX-License-Identifier: Apache-2.0
/// @file axis_counts.hpp
/// @brief Per-node counts along axis 0 (the batch) for DeadRelu and SaturatedActivation
/// (spec/RULES.md §2 "per node", §3.9, §3.17): for a tensor of shape [batch, d1, d2, ...],
/// node j is a flat index over (d1, d2, ...), and count[j] = #{ i : predicate(x[i, j]) }.
/// Tensors of rank ≤ 1 have batch 1 and one node per element.
#pragma once

#include <cstdint>
#include <vector>

#include "trialstat/status.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats {

/// @brief What to count per node.
struct axis0_predicate {
  enum class kind : uint8_t {
    positive,       ///< x > 0 (DeadRelu activity); NaN never counts
    open_interval,  ///< lo < x < hi (SaturatedActivation "in range"); NaN never counts
  };
  kind what = kind::positive;
  double lo = 0.0;
  double hi = 0.0;
};

/// @brief Per-node counts of one tensor.
struct axis0_counts {
  int64_t batch = 0;               ///< size of axis 0 (1 for rank ≤ 1)
  std::vector<int64_t> per_node;   ///< [num_elements / batch]
};

/// @brief Count along axis 0. Errors: unsupported_dtype (string/complex), invalid_argument
/// (backend unavailable). Exact and identical on every backend.
[[nodiscard]] result<axis0_counts> count_along_axis0(const tensor_view& tensor,
                                                     const axis0_predicate& predicate,
                                                     backend which = backend::cpu);

}  // namespace trialstat::stats

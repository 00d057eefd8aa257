// SPDX-License-Identifier: Apache-2.0
/// @file axis_counts_op.hpp
/// @brief The single definition of the per-node axis-0 predicate, host and device
/// (include/trialstat/stats/axis_counts.hpp): positive = x > 0; open_interval = lo < x < hi;
/// NaN never counts (every comparison with NaN is false).
#pragma once

#include <cstdint>

#include "kernels/common/element_op.hpp"
#include "trialstat/stats/axis_counts.hpp"

namespace trialstat::kernels {

/// @brief Device-safe copy of stats::axis0_predicate.
struct axis0_test {
  bool open_interval;  ///< false: x > 0
  double lo;
  double hi;
};

inline axis0_test make_axis0_test(const stats::axis0_predicate& p) {
  return {p.what == stats::axis0_predicate::kind::open_interval, p.lo, p.hi};
}

/// @brief Whether x counts for its node.
TRIALSTAT_HD_INLINE bool axis0_hit(const axis0_test& t, double x) {
  return t.open_interval ? ((x > t.lo) & (x < t.hi)) : (x > 0.0);
}

/// @brief batch (axis-0 size) and nodes (elements per batch item) of a C-order shape:
/// rank ≥ 2 → (shape[0], Π shape[1:]); rank ≤ 1 → (1, num_elements). Returns false if the
/// shape does not describe num_elements elements or has a negative extent.
inline bool axis0_layout(const int64_t* shape, std::size_t rank, int64_t num_elements,
                         int64_t& batch, int64_t& nodes) {
  if (rank < 2) {
    batch = 1;
    nodes = num_elements;
    return num_elements >= 0;
  }
  batch = shape[0];
  nodes = 1;
  if (batch < 0) return false;
  for (std::size_t i = 1; i < rank; ++i) {
    if (shape[i] < 0) return false;
    if (shape[i] != 0 && nodes > INT64_MAX / shape[i]) return false;
    nodes *= shape[i];
  }
  if (batch != 0 && nodes > INT64_MAX / batch) return false;
  return batch * nodes == num_elements;
}

}  // namespace trialstat::kernels

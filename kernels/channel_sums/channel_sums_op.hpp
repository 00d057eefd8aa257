// SPDX-License-Identifier: Apache-2.0
/// @file channel_sums_op.hpp
/// @brief The single definition, host and device, of the per-channel layout and accumulation
/// (include/trialstat/stats/channel_sums.hpp): a C-order shape viewed as [outer, channels, inner]
/// around the channel axis; finite values add to the sum, every element to the count, NaN and
/// ±Inf to their own counts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/element_op.hpp"

namespace trialstat::kernels {

/// @brief Per-channel accumulator (also the CPU twin's partial result).
struct channel_state {
  double sum;
  int64_t count;
  int64_t nan_count;
  int64_t pos_inf_count;
  int64_t neg_inf_count;
};

TRIALSTAT_HD_INLINE channel_state channel_identity() { return channel_state{0.0, 0, 0, 0, 0}; }

TRIALSTAT_HD_INLINE void accumulate_channel(channel_state& s, double x) {
  ++s.count;
  if (is_finite(x)) {
    s.sum += x;
  } else if (is_nan(x)) {
    ++s.nan_count;
  } else if (x > 0.0) {
    ++s.pos_inf_count;
  } else {
    ++s.neg_inf_count;
  }
}

TRIALSTAT_HD_INLINE channel_state merge_channel(const channel_state& a, const channel_state& b) {
  return channel_state{a.sum + b.sum, a.count + b.count, a.nan_count + b.nan_count,
                       a.pos_inf_count + b.pos_inf_count, a.neg_inf_count + b.neg_inf_count};
}

/// @brief outer = Π shape[:axis], channels = shape[axis], inner = Π shape[axis+1:] for a rank ≥ 1
/// shape and a normalised axis in [0, rank). False when the shape has a negative extent,
/// overflows, or does not describe num_elements elements.
inline bool channel_layout(const int64_t* shape, std::size_t rank, std::size_t axis,
                           int64_t num_elements, int64_t& outer, int64_t& channels,
                           int64_t& inner) {
  if (axis >= rank) return false;
  outer = 1;
  inner = 1;
  channels = shape[axis];
  int64_t total = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    if (shape[d] < 0) return false;
    if (shape[d] != 0 && total > INT64_MAX / shape[d]) return false;
    total *= shape[d];
    if (d < axis) outer *= shape[d];
    if (d > axis) inner *= shape[d];
  }
  return total == num_elements;
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
/// @file channel_sums.hpp
/// @brief Per-channel sums and counts along one axis (CheckInputImages' per-channel means over
/// every other axis, spec/RULES.md §3.8, §4 "per-channel sum and count"). Records merge by
/// adding, so the rule keeps running totals over steps.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "trialstat/status.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats {

/// @brief For each index c of the channel axis, over all elements with that index.
struct channel_sums {
  int64_t axis = 0;                     ///< the channel axis, normalised to [0, rank)
  std::vector<double> sum;              ///< [channels] Σx over the finite elements
  std::vector<int64_t> count;           ///< [channels] all elements, non-finite included
  std::vector<int64_t> nan_count;       ///< [channels]
  std::vector<int64_t> pos_inf_count;   ///< [channels]
  std::vector<int64_t> neg_inf_count;   ///< [channels]

  [[nodiscard]] std::size_t channels() const noexcept { return sum.size(); }

  /// @brief numpy's mean of channel c: NaN when empty, when it holds a NaN, or both infinities;
  /// ±Inf when it holds only one sign of infinity; else sum / count.
  [[nodiscard]] double mean(std::size_t c) const noexcept {
    if (count[c] == 0 || nan_count[c] > 0 || (pos_inf_count[c] > 0 && neg_inf_count[c] > 0)) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    if (pos_inf_count[c] > 0) return std::numeric_limits<double>::infinity();
    if (neg_inf_count[c] > 0) return -std::numeric_limits<double>::infinity();
    return sum[c] / static_cast<double>(count[c]);
  }

  /// @brief Add another record of the same axis and channel count (running totals).
  /// @return false (nothing changed) when the axis or the channel count differ.
  bool add(const channel_sums& other) {
    if (other.axis != axis || other.channels() != channels()) return false;
    for (std::size_t c = 0; c < channels(); ++c) {
      sum[c] += other.sum[c];
      count[c] += other.count[c];
      nan_count[c] += other.nan_count[c];
      pos_inf_count[c] += other.pos_inf_count[c];
      neg_inf_count[c] += other.neg_inf_count[c];
    }
    return true;
  }
};

/// @brief Per-channel totals of a tensor along `axis` (Python-style: −1 is the last axis).
/// Element (o, c, i) of the shape viewed as [outer, channels, inner] adds to channel c.
/// @param tensor rank ≥ 1 (0-d tensors have no channel axis)
/// @return the record; errors: invalid_argument (rank 0, axis outside [−rank, rank), shape not
///   describing num_elements, null data with elements, backend unavailable); unsupported_dtype;
///   out_of_memory; cuda_error/cuda_fatal. Counts exact on both backends; sums within 1e-12
///   relative to the channel's Σ|x| of a long-double reference (the CPU is deterministic; CUDA adds
///   partial sums with atomics, so the last bits may vary between runs). Synchronous.
[[nodiscard]] result<channel_sums> compute_channel_sums(const tensor_view& tensor, int64_t axis,
                                                        backend which = backend::cpu);

}  // namespace trialstat::stats

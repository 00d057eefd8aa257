// SPDX-License-Identifier: Apache-2.0
/// @file result_poison.hpp
/// @brief The one definition of a poisoned result, host and device. A CUDA kernel cannot return
/// an error, so a result it could not compute (the batch outgrew the workspace sized for it, an
/// unsupported dtype reached the device) is written as poison instead:
///  - moments and pairwise records: count −1 and NaN values (`moments_poison`, `pairwise_poison`
///    in moments_op.hpp / pairwise_op.hpp);
///  - histogram and log-histogram cells: every cell −1.
/// Poison is sticky: merging a poisoned part with anything (merge_moments, merge_pairwise,
/// merge_counts) gives poison again — count −1, cells −1, never −k — so a split tensor or a
/// chunk merge cannot turn it into a plausible value. Every consumer of device results (the
/// CUDA executor, host/stats' CUDA paths) checks each result kind with the predicates below
/// before a value reaches a record, and reports cuda_error instead.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/element_op.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"

namespace trialstat::kernels {

/// @brief The count (and cell value) of poison.
inline constexpr int64_t poison_count = -1;

/// @brief A quiet NaN, host and device.
TRIALSTAT_HD_INLINE double quiet_nan() {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(0x7ff8000000000000LL);
#else
  return __builtin_nan("");
#endif
}

/// @brief Whether a public moments / pairwise record is poison (no real record has count < 0).
TRIALSTAT_HD_INLINE bool is_poisoned(const stats::moments& m) { return m.count < 0; }
TRIALSTAT_HD_INLINE bool is_poisoned(const stats::pairwise& p) {
  return p.count < 0 || p.allclose_violations < 0;
}

/// @brief Whether any of `n` counts is poison (histogram, log-histogram and axis-0 cells).
TRIALSTAT_HD_INLINE bool counts_poisoned(const int64_t* cells, std::size_t n) {
  bool poisoned = false;
  for (std::size_t i = 0; i < n; ++i) poisoned = poisoned | (cells[i] < 0);
  return poisoned;
}

/// @brief Sticky sum of two counts: poison when either is poison (so merged poisoned pieces
/// stay −1), else a + b.
TRIALSTAT_HD_INLINE int64_t merge_counts(int64_t a, int64_t b) {
  return (a < 0 || b < 0) ? poison_count : a + b;
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
/// @file pairwise_op.hpp
/// @brief The single definition of the pairwise semantics (a = previous, b = current), host and
/// device, in float64 IEEE arithmetic with nothing filtered:
///  - Σ(b − a)² and Σa² propagate NaN/Inf as numpy's ‖W_s − W_p‖ does;
///  - max |b − a| over the pairs whose difference is not NaN (0 when there is none);
///  - numpy.isclose(a, b, rtol, atol, equal_nan) (numpy 2.x `isclose`):
///      close = (|a − b| ≤ atol + rtol·|b| and b finite) or a == b
///              or (equal_nan and a, b both NaN),
///    i.e. finite pairs by tolerance, infinities only to the same infinity, NaN never (or to NaN
///    with equal_nan). The tolerance is rounded as numpy rounds it (no FMA);
///  - the pairs where exactly one of a, b is NaN (a NaN facing a number: a difference that
///    max |b − a| cannot show; ReplicaConsistency reports them).
#pragma once

#include <cstdint>

#include "kernels/common/element_op.hpp"
#include "kernels/common/result_poison.hpp"

namespace trialstat::kernels {

/// @brief Mergeable partial result over a range of element pairs.
struct pairwise_state {
  int64_t count;
  int64_t violations;
  int64_t nan_mismatches;
  double diff_sum_squares;
  double diff_max_abs;
  double previous_sum_squares;
};

TRIALSTAT_HD_INLINE pairwise_state pairwise_identity() { return pairwise_state{0, 0, 0, 0.0, 0.0, 0.0}; }

/// @brief The poisoned record (result_poison.hpp): counts −1, values NaN.
TRIALSTAT_HD_INLINE pairwise_state pairwise_poison() {
  const double nan = quiet_nan();
  return pairwise_state{poison_count, poison_count, poison_count, nan, nan, nan};
}

TRIALSTAT_HD_INLINE bool is_poisoned(const pairwise_state& s) {
  return s.count < 0 || s.violations < 0;
}

/// @brief Combine two disjoint ranges, `a` before `b` (sums add; max; counts add exactly).
/// Poison is sticky: a poisoned range gives the poisoned record.
TRIALSTAT_HD_INLINE pairwise_state merge_pairwise(const pairwise_state& a, const pairwise_state& b) {
  if (is_poisoned(a) || is_poisoned(b)) return pairwise_poison();
  pairwise_state r;
  r.count = a.count + b.count;
  r.violations = a.violations + b.violations;
  r.nan_mismatches = a.nan_mismatches + b.nan_mismatches;
  r.diff_sum_squares = a.diff_sum_squares + b.diff_sum_squares;
  r.diff_max_abs = b.diff_max_abs > a.diff_max_abs ? b.diff_max_abs : a.diff_max_abs;
  r.previous_sum_squares = a.previous_sum_squares + b.previous_sum_squares;
  return r;
}

/// @brief Convert to / from the public record.
TRIALSTAT_HD_INLINE void store_pairwise(const pairwise_state& s, stats::pairwise* out) {
  out->count = s.count;
  out->diff_sum_squares = s.diff_sum_squares;
  out->diff_max_abs = s.diff_max_abs;
  out->previous_sum_squares = s.previous_sum_squares;
  out->allclose_violations = s.violations;
  out->nan_mismatches = s.nan_mismatches;
}

TRIALSTAT_HD_INLINE pairwise_state load_pairwise(const stats::pairwise& p) {
  return pairwise_state{p.count,          p.allclose_violations, p.nan_mismatches,
                        p.diff_sum_squares, p.diff_max_abs,        p.previous_sum_squares};
}

struct merge_pairwise_fn {
  TRIALSTAT_HD_INLINE pairwise_state operator()(const pairwise_state& a,
                                               const pairwise_state& b) const {
    return merge_pairwise(a, b);
  }
};

/// @brief numpy.isclose(a, b) for one pair (b = current supplies the relative scale).
TRIALSTAT_HD_INLINE bool pair_is_close(double a, double b, double rtol, double atol,
                                       bool equal_nan) {
  const double tolerance = add_rn(atol, mul_rn(rtol, abs_value(b)));
  const bool within = (abs_value(a - b) <= tolerance) & is_finite(b);
  const bool both_nan = equal_nan & is_nan(a) & is_nan(b);
  return within | (a == b) | both_nan;
}

/// @brief Accumulate one pair.
TRIALSTAT_HD_INLINE void accumulate_pair(pairwise_state& s, double a, double b, double rtol,
                                         double atol, bool equal_nan) {
  const double d = b - a;
  const double ad = abs_value(d);
  s.count += 1;
  s.diff_sum_squares += d * d;
  s.diff_max_abs = ad > s.diff_max_abs ? ad : s.diff_max_abs;  // NaN never compares greater
  s.previous_sum_squares += a * a;
  s.violations += pair_is_close(a, b, rtol, atol, equal_nan) ? 0 : 1;
  s.nan_mismatches += is_nan(a) != is_nan(b) ? 1 : 0;
}

}  // namespace trialstat::kernels

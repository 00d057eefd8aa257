// SPDX-License-Identifier: Apache-2.0
/// @file moments_op.hpp
/// @brief The single definition of the moments semantics, host and device: the mergeable state,
/// per-element classification and accumulation, the per-block two-pass second moment, and the
/// Chan et al. merge. Both twins (moments_cpu.cpp, moments_cuda.cu) build on these functions.
///
/// Semantics (../shared/trials/README.md "stats"): count every element; NaN, +Inf, −Inf, zero
/// (−0.0 included), finite positive and finite negative counts; over finite values min, max,
/// Σx, Σ|x|, Σx², max|x|, mean = Σx / n (as numpy: Σx overflowing gives an infinite mean) and
/// m2 = Σ(x − mean)², all in float64.
///
/// Signed zeros: min and max order −0.0 below +0.0 (`ordered_min` / `ordered_max`,
/// element_op.hpp), so a tensor holding both zeros has min −0.0 (when no value is smaller) and
/// max +0.0 (when none is larger), whatever the order of its elements and of the reduction. The
/// CPU lanes (cpu_lanes.hpp min_lanes / max_lanes / reduce_min / reduce_max) and the CUDA
/// kernels apply the same rule, so every twin writes the same bits.
///
/// Accuracy of m2 when |mean| ≫ standard deviation: the partial means that Chan's merge
/// subtracts would carry rounding errors of ulp(mean), large next to their true differences.
/// So within one tensor every value is first shifted by a representative value K of that tensor
/// (`moments_shift`: its first finite element among the first 64), and the merge works on
/// `centre` = mean(x − K), whose errors are relative to the spread, not to |mean|.
#pragma once

#include <cstdint>

#include "kernels/common/element_op.hpp"
#include "kernels/common/result_poison.hpp"
#include "trialstat/stats/moments.hpp"

namespace trialstat::kernels {

/// @brief Device-safe twin of `stats::moments` (plain aggregate: no host-only initialisers).
struct moments_state {
  int64_t count;
  int64_t nan_count;
  int64_t pos_inf_count;
  int64_t neg_inf_count;
  int64_t zero_count;
  int64_t positive_count;
  int64_t negative_count;
  double min;
  double max;
  double sum;
  double sum_abs;
  double sum_squares;
  double max_abs;
  double mean;
  double m2;
  double centre;  ///< mean of (x − K) over finite values; K = the tensor's shift (0 in records)

  TRIALSTAT_HD_INLINE int64_t finite_count() const {
    return count - nan_count - pos_inf_count - neg_inf_count;
  }
};

/// @brief The record of an empty part: counts 0, min +Inf, max −Inf, sums/mean/m2 0.
TRIALSTAT_HD_INLINE moments_state moments_identity() {
  moments_state s{};
  s.min = positive_infinity();
  s.max = -positive_infinity();
  return s;
}

/// @brief The poisoned record (result_poison.hpp): count −1, every value NaN.
TRIALSTAT_HD_INLINE moments_state moments_poison() {
  moments_state s = moments_identity();
  const double nan = quiet_nan();
  s.count = poison_count;
  s.min = s.max = s.sum = s.sum_abs = s.sum_squares = s.max_abs = s.mean = s.m2 = s.centre = nan;
  return s;
}

TRIALSTAT_HD_INLINE bool is_poisoned(const moments_state& s) { return s.count < 0; }

/// @brief Chan et al. (1979) parallel merge of two disjoint parts, `a` before `b`, that share
/// one shift K. Counts add exactly; sums add; mean = Σx / n; centre = Chan's weighted centre;
/// m2 = m2a + m2b + δ²·na·nb/n with δ = centre_b − centre_a. Poison is sticky: a poisoned part
/// gives the poisoned record (count −1, not a sum of counts).
TRIALSTAT_HD_INLINE moments_state merge_moments(const moments_state& a, const moments_state& b) {
  if (is_poisoned(a) || is_poisoned(b)) return moments_poison();
  moments_state r;
  r.count = a.count + b.count;
  r.nan_count = a.nan_count + b.nan_count;
  r.pos_inf_count = a.pos_inf_count + b.pos_inf_count;
  r.neg_inf_count = a.neg_inf_count + b.neg_inf_count;
  r.zero_count = a.zero_count + b.zero_count;
  r.positive_count = a.positive_count + b.positive_count;
  r.negative_count = a.negative_count + b.negative_count;
  r.min = ordered_min(a.min, b.min);
  r.max = ordered_max(a.max, b.max);
  r.sum = a.sum + b.sum;
  r.sum_abs = a.sum_abs + b.sum_abs;
  r.sum_squares = a.sum_squares + b.sum_squares;
  r.max_abs = b.max_abs > a.max_abs ? b.max_abs : a.max_abs;
  const int64_t na = a.finite_count();
  const int64_t nb = b.finite_count();
  if (na == 0) {
    r.mean = b.mean;
    r.m2 = b.m2;
    r.centre = b.centre;
  } else if (nb == 0) {
    r.mean = a.mean;
    r.m2 = a.m2;
    r.centre = a.centre;
  } else {
    const double n = static_cast<double>(na + nb);
    const double delta = b.centre - a.centre;
    const double weight_b = static_cast<double>(nb) / n;
    r.mean = r.sum / n;
    r.centre = a.centre + delta * weight_b;
    r.m2 = a.m2 + b.m2 + delta * delta * (static_cast<double>(na) * weight_b);
  }
  return r;
}

/// @brief Callable form of merge_moments (for ordered_tree_merger and block reductions).
struct merge_moments_fn {
  TRIALSTAT_HD_INLINE moments_state operator()(const moments_state& a,
                                              const moments_state& b) const {
    return merge_moments(a, b);
  }
};

/// @brief First pass over one element: counts, extremes and sums (finite values only), and
/// Σ(x − K) into `shifted_sum`. Branch-free so that loops over a block vectorise.
TRIALSTAT_HD_INLINE void accumulate_first_pass(moments_state& s, double& shifted_sum, double x,
                                               double shift) {
  const bool finite = is_finite(x);
  s.nan_count += is_nan(x) ? 1 : 0;
  s.pos_inf_count += (x == positive_infinity()) ? 1 : 0;
  s.neg_inf_count += (x == -positive_infinity()) ? 1 : 0;
  s.zero_count += (x == 0.0) ? 1 : 0;
  s.positive_count += (finite & (x > 0.0)) ? 1 : 0;
  s.negative_count += (finite & (x < 0.0)) ? 1 : 0;
  const double lo = finite ? x : positive_infinity();
  const double hi = finite ? x : -positive_infinity();
  const double xf = finite ? x : 0.0;
  const double ax = abs_value(xf);
  s.min = ordered_min(lo, s.min);
  s.max = ordered_max(hi, s.max);
  s.sum += xf;
  s.sum_abs += ax;
  s.sum_squares += xf * xf;
  s.max_abs = ax > s.max_abs ? ax : s.max_abs;
  shifted_sum += finite ? x - shift : 0.0;
}

/// @brief The shift K of a tensor of n elements of dtype D: its first finite element among the
/// first 64, else 0. Host and device compute the same K.
template <dtype D, bool Aligned>
TRIALSTAT_HD_INLINE double moments_shift(const unsigned char* bytes, int64_t n) {
  const int64_t probe = n < 64 ? n : 64;
  for (int64_t i = 0; i < probe; ++i) {
    const double x = load_as_double<D, Aligned>(bytes, i);
    if (is_finite(x)) return x;
  }
  return 0.0;
}

/// @brief Second-pass accumulator: Σd and Σd² with d = (x − K) − centre over finite values,
/// for the corrected two-pass m2 = Σd² − (Σd)²/n (Chan, Golub & LeVeque 1983).
struct deviation_sums {
  double sum;
  double sum_squares;
};

TRIALSTAT_HD_INLINE void accumulate_deviation(deviation_sums& d, double x, double shift,
                                              double centre) {
  const double dev = is_finite(x) ? (x - shift) - centre : 0.0;
  d.sum += dev;
  d.sum_squares += dev * dev;
}

/// @brief Complete a block's first-pass state: `shifted_sum` = Σ(x − K) over its finite
/// values gives centre; mean = Σx/n; m2 from the block's deviation sums around centre.
TRIALSTAT_HD_INLINE double block_centre(const moments_state& s, double shifted_sum) {
  const int64_t n = s.finite_count();
  return n > 0 ? shifted_sum / static_cast<double>(n) : 0.0;
}

TRIALSTAT_HD_INLINE void finish_block(moments_state& s, double centre, const deviation_sums& d) {
  const int64_t n = s.finite_count();
  if (n <= 0) {
    s.mean = 0.0;
    s.m2 = 0.0;
    s.centre = 0.0;
    return;
  }
  s.mean = s.sum / static_cast<double>(n);
  s.centre = centre;
  const double m2 = d.sum_squares - d.sum * d.sum / static_cast<double>(n);
  s.m2 = m2 > 0.0 ? m2 : (m2 == m2 ? 0.0 : m2);  // rounding can make it a hair negative
}

/// @brief Convert to / from the public record (host side; field by field on the device).
TRIALSTAT_HD_INLINE void store_moments(const moments_state& s, stats::moments* out) {
  out->count = s.count;
  out->nan_count = s.nan_count;
  out->pos_inf_count = s.pos_inf_count;
  out->neg_inf_count = s.neg_inf_count;
  out->zero_count = s.zero_count;
  out->positive_count = s.positive_count;
  out->negative_count = s.negative_count;
  out->min = s.min;
  out->max = s.max;
  out->sum = s.sum;
  out->sum_abs = s.sum_abs;
  out->sum_squares = s.sum_squares;
  out->max_abs = s.max_abs;
  out->mean = s.mean;
  out->m2 = s.m2;
}

TRIALSTAT_HD_INLINE moments_state load_moments(const stats::moments& m) {
  moments_state s;
  s.count = m.count;
  s.nan_count = m.nan_count;
  s.pos_inf_count = m.pos_inf_count;
  s.neg_inf_count = m.neg_inf_count;
  s.zero_count = m.zero_count;
  s.positive_count = m.positive_count;
  s.negative_count = m.negative_count;
  s.min = m.min;
  s.max = m.max;
  s.sum = m.sum;
  s.sum_abs = m.sum_abs;
  s.sum_squares = m.sum_squares;
  s.max_abs = m.max_abs;
  s.mean = m.mean;
  s.m2 = m.m2;
  s.centre = m.mean;  // a stored record has shift 0
  return s;
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
/// @file histogram_op.hpp
/// @brief The single definition of the histogram semantics, host and device:
/// numpy.histogram(x_finite, bins, range=(min, max)) in float64 (numpy/lib/_histograms_impl.py).
///  - range widening: min == max → [min − 0.5, max + 0.5]; if that is lost to rounding
///    (lo == hi) the histogram is degenerate: every kept value goes to bin bins/2;
///  - edges = numpy.linspace(lo, hi, bins + 1): step = (hi − lo)/bins; edge[i] = i·step + lo
///    (two roundings, no FMA); edge[bins] = hi; when step == 0, edge[i] = (i/bins)·(hi − lo) + lo;
///  - kept values: lo ≤ x ≤ hi (NaN/±Inf never);
///  - index: guess = int(((x − lo) / (hi − lo)) · bins), clamped to [0, bins − 1]; then numpy's
///    one-step correction: if x < edge[g]: g − 1; elif x ≥ edge[g+1] and g ≠ bins − 1: g + 1.
/// Edges are recomputed (two flops) instead of read from a table, so the loop needs no gather.
#pragma once

#include <cstdint>

#include "kernels/common/element_op.hpp"

namespace trialstat::kernels {

/// @brief Everything a histogram pass needs for one tensor (computed from its finite min/max).
struct histogram_params {
  double lo;        ///< first edge (after widening)
  double hi;        ///< last edge
  double delta;     ///< hi − lo (numpy's norm_denom)
  double step;      ///< delta / bins (linspace step)
  int bins;         ///< ≥ 1
  bool step_zero;   ///< linspace's `step == 0` branch
  bool degenerate;  ///< lo == hi after widening: every kept value in bin bins/2
};

/// @brief numpy's range and edges for finite `min` ≤ `max` (the tensor's finite extremes).
TRIALSTAT_HD_INLINE histogram_params make_histogram_params(double min, double max, int bins) {
  histogram_params p;
  p.bins = bins;
  p.lo = min;
  p.hi = max;
  if (p.lo == p.hi) {
    p.lo = p.lo - 0.5;
    p.hi = p.hi + 0.5;
  }
  p.degenerate = p.lo == p.hi;
  if (p.degenerate) {
    // README: "lo == hi == min". (Widening lost to rounding: lo == hi == min already, except
    // in the rounding direction; record the tensor's own value.)
    p.lo = min;
    p.hi = min;
  }
  p.delta = p.hi - p.lo;
  p.step = p.delta / static_cast<double>(bins);
  p.step_zero = p.step == 0.0;
  return p;
}

/// @brief edge[i] for 0 ≤ i ≤ bins, exactly as numpy.linspace(lo, hi, bins + 1) computes it.
/// `StepZero` selects linspace's `step == 0` branch (p.step_zero); written with selects only,
/// so that CPU loops over many values vectorise.
template <bool StepZero>
TRIALSTAT_HD_INLINE double histogram_edge_t(const histogram_params& p, int i) {
  const double y = static_cast<double>(i);
  double e;
  if constexpr (StepZero) {
    e = add_rn(mul_rn(y / static_cast<double>(p.bins), p.delta), p.lo);
  } else {
    e = add_rn(mul_rn(y, p.step), p.lo);
  }
  return i >= p.bins ? p.hi : e;
}

TRIALSTAT_HD_INLINE double histogram_edge(const histogram_params& p, int i) {
  return p.step_zero ? histogram_edge_t<true>(p, i) : histogram_edge_t<false>(p, i);
}

/// @brief Whether numpy keeps x: lo ≤ x ≤ hi (false for NaN and ±Inf when the range is finite).
TRIALSTAT_HD_INLINE bool histogram_keeps(const histogram_params& p, double x) {
  return (x >= p.lo) & (x <= p.hi);
}

/// @brief numpy's bin of a kept, non-degenerate value x (see the file comment), for
/// p.step_zero == StepZero. Branch-free. Non-kept values: unspecified but in [0, bins).
template <bool StepZero>
TRIALSTAT_HD_INLINE int histogram_bin_t(const histogram_params& p, double x) {
  // numpy: f_indices = ((x - first_edge) / norm_denom) * norm_numerator; astype(intp);
  // indices[indices == bins] -= 1. The clamp also maps a NaN guess (overflowing range) to 0.
  const double f = mul_rn((x - p.lo) / p.delta, static_cast<double>(p.bins));
  const double fmax_bin = static_cast<double>(p.bins - 1);
  const double fc = f > 0.0 ? (f < fmax_bin ? f : fmax_bin) : 0.0;
  const int g = static_cast<int>(fc);
  const bool decrement = x < histogram_edge_t<StepZero>(p, g);
  const bool increment = !decrement & (x >= histogram_edge_t<StepZero>(p, g + 1)) &
                         (g != p.bins - 1);
  const int r = g - (decrement ? 1 : 0) + (increment ? 1 : 0);
  return r < 0 ? 0 : r;  // r < 0 only for x < lo, which is not kept
}

/// @brief numpy's bin of a kept value x: bins/2 when degenerate, else histogram_bin_t.
TRIALSTAT_HD_INLINE int histogram_bin(const histogram_params& p, double x) {
  if (p.degenerate) return p.bins / 2;
  return p.step_zero ? histogram_bin_t<true>(p, x) : histogram_bin_t<false>(p, x);
}

}  // namespace trialstat::kernels

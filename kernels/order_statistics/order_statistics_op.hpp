// SPDX-License-Identifier: Apache-2.0
/// @file order_statistics_op.hpp
/// @brief The single definition, host and device, of numpy's 'linear' percentile: where a
/// percentile falls among n sorted values and how its two neighbours are interpolated
/// (include/trialstat/stats/order_statistics.hpp). Source: numpy/lib/function_base.py
/// `_quantile` (virtual index (n − 1)·q), `_get_indexes` (above-bounds → last element),
/// `_get_gamma` and `_lerp`.
#pragma once

#include <math.h>

#include <cstdint>

#include "kernels/common/element_op.hpp"

namespace trialstat::kernels {

/// @brief Indices of the two sorted neighbours of a percentile and the interpolation weight.
struct percentile_position {
  int64_t lower = 0;   ///< index of a = v[lower]
  int64_t upper = 0;   ///< index of b = v[upper]
  double gamma = 0.0;  ///< weight of b
};

/// @brief Position of percentile `q_percent` (in [0, 100]) among n ≥ 1 sorted values.
/// numpy: quantile = q / 100 (true_divide), virtual = (n − 1)·quantile, lower = floor(virtual),
/// upper = lower + 1, gamma = virtual − lower; virtual ≥ n − 1 uses index −1 (the last value)
/// for both, so gamma = virtual + 1 there (irrelevant unless the last value is infinite).
TRIALSTAT_HD_INLINE percentile_position linear_percentile_position(int64_t n, double q_percent) {
  const double quantile = q_percent / 100.0;
  const double last = static_cast<double>(n - 1);
  const double virtual_index = mul_rn(last, quantile);
  percentile_position p;
  if (virtual_index >= last) {
    p.lower = n - 1;
    p.upper = n - 1;
    p.gamma = add_rn(virtual_index, 1.0);
    return p;
  }
  const double lower = floor(virtual_index);
  p.lower = static_cast<int64_t>(lower);
  p.upper = p.lower + 1;
  p.gamma = add_rn(virtual_index, -lower);
  return p;
}

/// @brief numpy `_lerp(a, b, t)`: d = b − a; t < 0.5 → a + d·t, else b − d·(1 − t). Each
/// product and sum rounded separately (numpy evaluates them as separate ufuncs).
TRIALSTAT_HD_INLINE double numpy_lerp(double a, double b, double t) {
  const double diff = add_rn(b, -a);
  if (t >= 0.5) return add_rn(b, -mul_rn(diff, add_rn(1.0, -t)));
  return add_rn(a, mul_rn(diff, t));
}

/// @brief Whether q is an acceptable percentile (in [0, 100], not NaN).
TRIALSTAT_HD_INLINE bool valid_percentile(double q_percent) {
  return q_percent >= 0.0 && q_percent <= 100.0;
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
/// @file class_counts_op.hpp
/// @brief The single definition, host and device, of a value's class and of numpy's argmax
/// (include/trialstat/stats/class_counts.hpp): class = trunc(x) when x is finite and
/// 0 ≤ trunc(x) < num_classes, else the "other" class num_classes; argmax = the first maximal
/// index, or the first NaN's index (numpy.argmax).
#pragma once

#include <math.h>

#include <cstdint>

#include "kernels/common/element_op.hpp"

namespace trialstat::kernels {

/// @brief Class index of x in [0, num_classes] (num_classes = "other").
TRIALSTAT_HD_INLINE int64_t class_of(double x, int64_t num_classes) {
  if (!is_finite(x)) return num_classes;
  const double t = trunc(x);  // −0.5 → −0.0, which is class 0 (numpy astype(int) gives 0)
  if (t < 0.0 || t >= static_cast<double>(num_classes)) return num_classes;
  return static_cast<int64_t>(t);
}

/// @brief Element `index` of a tensor of runtime dtype `type` (any alignment) as float64
/// (0 for an unsupported dtype, which callers reject beforehand).
TRIALSTAT_HD_INLINE double load_any_as_double(dtype type, const unsigned char* bytes,
                                              int64_t index) {
  double v = 0.0;
  visit_real_dtype(type, [&](auto tag) { v = load_as_double<decltype(tag)::value, false>(bytes, index); });
  return v;
}

/// @brief numpy.argmax over elements [row·width, row·width + width) (width ≥ 1).
TRIALSTAT_HD_INLINE int64_t argmax_row(dtype type, const unsigned char* bytes, int64_t row,
                                       int64_t width) {
  const int64_t first = row * width;
  double best = load_any_as_double(type, bytes, first);
  if (is_nan(best)) return 0;
  int64_t best_index = 0;
  for (int64_t j = 1; j < width; ++j) {
    const double x = load_any_as_double(type, bytes, first + j);
    if (is_nan(x)) return j;
    if (x > best) {
      best = x;
      best_index = j;
    }
  }
  return best_index;
}

/// @brief Predicted class of row `row` of a scores tensor: its argmax, or "other" (num_classes)
/// when the row is wider than the classes counted.
TRIALSTAT_HD_INLINE int64_t argmax_class(dtype type, const unsigned char* bytes, int64_t row,
                                         int64_t width, int64_t num_classes) {
  const int64_t j = argmax_row(type, bytes, row, width);
  return j < num_classes ? j : num_classes;
}

}  // namespace trialstat::kernels

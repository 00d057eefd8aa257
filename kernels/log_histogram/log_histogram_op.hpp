// SPDX-License-Identifier: Apache-2.0
/// @file log_histogram_op.hpp
/// @brief The single definition of the fixed log-scale histogram, host and device: TensorBoard's
/// default buckets as smdebug builds them (spec/FORMAT.md §10; smdebug `_get_default_bins`, from
/// TensorFlow's `InitDefaultBucketsInner`):
///     v = 1e-12; while v < 1e20: positive edge v; v *= 1.1   (774 edges, float64 products)
///     edges = [−p₇₇₃ … −p₀, 0, p₀ … p₇₇₃]                       (1549 edges, 1548 bins)
/// and `numpy.histogram(x, bins=edges)`: bin i = [edge[i], edge[i+1]), the last bin closed;
/// values outside [edge[0], edge[1548]] are not binned. Because the edges are fixed, counts of
/// different steps and tensors are directly comparable (unlike the [min, max] histogram).
/// Beside the bins, every element lands in exactly one extra cell: NaN, +Inf, −Inf, finite below
/// edge[0] or finite above edge[1548] — nothing is dropped.
///
/// The bin of x: a guess from log2(|x|) in float (cheap, both twins), then the exact correction
/// against the edge table (`while x < edge[b]: b−−; while x ≥ edge[b+1]: b++`), so the result is
/// numpy's whatever the guess's rounding.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/common/element_op.hpp"

namespace trialstat::kernels {

/// @brief Positive edges p_k = 1e-12 · 1.1^k (by repeated multiplication), k < 774.
inline constexpr int log_histogram_positive_edges = 774;
inline constexpr int log_histogram_num_edges = 2 * log_histogram_positive_edges + 1;  // 1549
inline constexpr int log_histogram_num_bins = log_histogram_num_edges - 1;            // 1548

/// @brief Cells per tensor: the bins, then the five extra cells.
inline constexpr int log_cell_nan = log_histogram_num_bins;
inline constexpr int log_cell_pos_inf = log_histogram_num_bins + 1;
inline constexpr int log_cell_neg_inf = log_histogram_num_bins + 2;
inline constexpr int log_cell_below = log_histogram_num_bins + 3;  ///< finite x < edge[0]
inline constexpr int log_cell_above = log_histogram_num_bins + 4;  ///< finite x > edge[last]
inline constexpr int log_histogram_num_cells = log_histogram_num_bins + 5;

/// @brief The edge table (a struct so that it can be a constexpr value and a __constant__).
struct log_histogram_edge_table {
  double edge[log_histogram_num_edges];
};

/// @brief Count of positive edges by smdebug's loop (checked against the constant above).
constexpr int count_log_histogram_positive_edges() {
  int k = 0;
  double v = 1e-12;
  while (v < 1e20) {
    ++k;
    v *= 1.1;
  }
  return k;
}
static_assert(count_log_histogram_positive_edges() == log_histogram_positive_edges,
              "smdebug's default bucket loop gives 774 positive edges");

/// @brief The edges, computed at compile time with smdebug's float64 products (exact IEEE
/// arithmetic in constant evaluation; tests compare with a run-time loop).
constexpr log_histogram_edge_table make_log_histogram_edges() {
  log_histogram_edge_table t{};
  constexpr int k_zero = log_histogram_positive_edges;
  double v = 1e-12;
  for (int k = 0; k < log_histogram_positive_edges; ++k) {
    t.edge[k_zero + 1 + k] = v;
    t.edge[k_zero - 1 - k] = -v;
    v *= 1.1;
  }
  t.edge[k_zero] = 0.0;
  return t;
}

/// @brief The cell of x (a bin index, or one of the extra cells) given the edge table `edges`
/// (host: make_log_histogram_edges(); device: a shared-memory copy).
TRIALSTAT_HD_INLINE int log_histogram_cell(const double* edges, double x) {
  if (is_nan(x)) return log_cell_nan;
  if (x == positive_infinity()) return log_cell_pos_inf;
  if (x == -positive_infinity()) return log_cell_neg_inf;
  if (x < edges[0]) return log_cell_below;
  if (x > edges[log_histogram_num_edges - 1]) return log_cell_above;
  constexpr int k_zero = log_histogram_positive_edges;
  constexpr int last_bin = log_histogram_num_bins - 1;
  const double ax = abs_value(x);
  int bin;
  if (ax < 1e-12) {
    bin = x >= 0.0 ? k_zero : k_zero - 1;  // [0, p0) or [−p0, 0)
  } else {
    // j with p_j ≤ |x| < p_{j+1}: log2(|x|/1e-12) / log2(1.1), guessed in float.
    const float lg = log2f(static_cast<float>(ax)) + 39.86313713864835f;
    int j = static_cast<int>(lg * 7.272540897341713f);
    j = j < 0 ? 0 : (j > log_histogram_positive_edges - 2 ? log_histogram_positive_edges - 2 : j);
    bin = x > 0.0 ? k_zero + 1 + j : k_zero - 2 - j;
  }
  bin = bin < 0 ? 0 : (bin > last_bin ? last_bin : bin);
  while (bin > 0 && x < edges[bin]) --bin;
  while (bin < last_bin && x >= edges[bin + 1]) ++bin;
  return bin;
}

}  // namespace trialstat::kernels

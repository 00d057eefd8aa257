// SPDX-License-Identifier: Apache-2.0
/// @file reference_stats.hpp
/// @brief Naive scalar references for the statistics kernels (long double accumulation, written
/// independently of kernels/ — own dtype decoding, own numpy histogram), plus seeded test-data
/// generators producing raw little-endian tensor bytes of every real dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trialstat/dtype.hpp"

namespace trialstat::reference {

/// @brief Element i of a little-endian tensor of `type` (any alignment) as float64, decoded
/// without kernels/: float16 by exponent/mantissa arithmetic (ldexp), bfloat16 as the top half
/// of a binary32, integers by static_cast (round to nearest), bool nonzero → 1.
[[nodiscard]] double element_value(const std::byte* data, dtype type, int64_t index);

/// @brief All elements as float64.
[[nodiscard]] std::vector<double> element_values(const std::byte* data, dtype type, int64_t n);

/// @brief Statistics of the finite values in long double (min/max/max_abs exact).
struct moments_ref {
  int64_t count = 0, nan_count = 0, pos_inf_count = 0, neg_inf_count = 0;
  int64_t zero_count = 0, positive_count = 0, negative_count = 0, finite_count = 0;
  double min = 0, max = 0, max_abs = 0;
  long double sum = 0, sum_abs = 0, sum_squares = 0, mean = 0, m2 = 0;
};
[[nodiscard]] moments_ref compute_moments_ref(const std::vector<double>& values);

/// @brief numpy.histogram(x_finite, bins, range=(min, max)) following numpy's source literally:
/// linspace edges table in double, guess ((x - lo) / (hi - lo)) * bins, clamp, one decrement /
/// increment step against the table. Degenerate (lo == hi after widening): bin bins/2.
struct histogram_ref {
  int bins = 0;
  double lo = 0, hi = 0;
  bool degenerate = false;
  std::vector<int64_t> counts;
  std::vector<double> edges;  ///< [bins + 1] (empty when degenerate or no finite value)
};
[[nodiscard]] histogram_ref compute_histogram_numpy(const std::vector<double>& values, int bins);

/// @brief The textbook definition over the same edges: bin = the last i with edge[i] ≤ x
/// (x == hi → last bin). Equals numpy whenever numpy's guess is off by at most one bin.
[[nodiscard]] histogram_ref compute_histogram_textbook(const std::vector<double>& values, int bins);

/// @brief Pairwise statistics in long double (diff max exact), isclose by numpy 1.x's
/// branchy definition (finite pairs by tolerance, others by equality, equal_nan).
struct pairwise_ref {
  int64_t count = 0;
  long double diff_sum_squares = 0, previous_sum_squares = 0;
  double diff_max_abs = 0;
  int64_t violations = 0;
  int64_t nan_mismatches = 0;  ///< exactly one of a, b NaN
};
[[nodiscard]] pairwise_ref compute_pairwise_ref(const std::vector<double>& a,
                                                const std::vector<double>& b, double rtol,
                                                double atol, bool equal_nan);

/// @brief count[j] = #{i : pred(x[i*nodes + j])}; pred: open_interval ? lo < x < hi : x > 0.
[[nodiscard]] std::vector<int64_t> count_axis0_ref(const std::vector<double>& values,
                                                   int64_t batch, int64_t nodes,
                                                   bool open_interval, double lo, double hi);

/// @brief Kinds of generated data.
enum class data_mode {
  normal,   ///< N(offset, scale) values converted to the dtype, with no specials
  special,  ///< normal values sprinkled with NaN, ±Inf, ±0, denormals, extremes (floats)
  bits,     ///< uniformly random bit patterns (floats: exponents bounded so Σx² stays finite)
};
[[nodiscard]] std::string to_string(data_mode mode);

/// @brief n elements of `type` as raw bytes, deterministic in `seed`.
[[nodiscard]] std::vector<std::byte> make_tensor_bytes(dtype type, int64_t n, data_mode mode,
                                                       uint64_t seed, double offset = 0.0,
                                                       double scale = 1.0);

/// @brief Encode float64 values as `type` (round to nearest; saturating for integers;
/// float16/bfloat16 round-to-nearest-even with overflow to Inf). Values must fit the dtype's
/// meaning (e.g. integers for integer types are rounded).
[[nodiscard]] std::vector<std::byte> encode_values(dtype type, const std::vector<double>& values);

/// @brief The 13 real dtypes.
[[nodiscard]] const std::vector<dtype>& real_dtypes();

/// @brief smdebug's `_get_default_bins` evaluated at run time (volatile: no constant folding):
/// v = 1e-12, v *= 1.1 while v < 1e20; edges = [−p₇₇₃ … −p₀, 0, p₀ … p₇₇₃] (1549 edges).
[[nodiscard]] std::vector<double> log_histogram_edges_by_loop();

/// @brief `numpy.histogram(x, bins=edges)` by definition (upper_bound over the edges, the last
/// bin closed), plus the cells beside the bins.
struct log_histogram_ref {
  std::vector<int64_t> counts;
  int64_t nan = 0, pos_inf = 0, neg_inf = 0, below = 0, above = 0;
};
[[nodiscard]] log_histogram_ref log_histogram_counts(const std::vector<double>& values,
                                                     const std::vector<double>& edges);

}  // namespace trialstat::reference

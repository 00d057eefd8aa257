// SPDX-License-Identifier: Apache-2.0
/// @file order_statistics.hpp
/// @brief Statistics that need the values in order: percentiles with numpy's default 'linear'
/// method (PoorWeightInitialization's 5th/95th, spec/RULES.md §3.16) and the sum of the k largest
/// values (FeatureImportanceOverweight, §3.20; TreeDepth's max, §3.11).
///
/// Values are the tensor's elements converted to float64 (as for every statistic). The CPU twin
/// of the percentiles selects on order-preserving integer keys of the element's own width (a
/// radix selection: O(n) time, one or two passes over the tensor for every q at once; scratch:
/// the keys of the few radix buckets that hold a needed rank, at most n keys of the element
/// width); its top-k sums select on a float64 copy (std::nth_element, n·8 bytes). The CUDA twin
/// converts into device scratch and sorts with cub::DeviceRadixSort (2·n·8 bytes). Both read the
/// same order statistics and apply the same arithmetic (kernels/order_statistics/
/// order_statistics_op.hpp), so percentiles agree exactly between backends, except that a zero
/// may differ in sign: the CPU twin orders −0.0 below +0.0, the CUDA sort treats them as equal.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/status.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats {

/// @brief numpy.percentile(x.ravel(), q) (method 'linear', numpy ≥ 1.22) for each q, in float64.
///
/// With n values sorted ascending (v), q in percent: virtual index i = (n − 1)·(q / 100);
/// lo = floor(i), hi = lo + 1, g = i − lo; when i ≥ n − 1 both neighbours are v[n − 1] (g = i + 1,
/// numpy's bookkeeping). Result = lerp(v[lo], v[hi], g) with numpy's `_lerp`: d = b − a;
/// g < 0.5 → a + d·g, else b − d·(1 − g) (two roundings each, never fused).
///  - NaN: any NaN element makes every result NaN (numpy).
///  - ±Inf take part in the ordering and in the arithmetic exactly as in numpy, so an infinite
///    neighbour can give NaN (e.g. lerp(+Inf, +Inf) = Inf − Inf = NaN; lerp(−Inf, 1, 0) = NaN).
///  - Empty tensor: every result NaN (numpy raises IndexError).
///  - numpy computes b − a in the input dtype (float32 for float32 tensors); trialstat always
///    subtracts in float64, which can differ by one float32 rounding of the difference.
/// @param q_percent [num_q] each in [0, 100]
/// @return [num_q] results in the order of `q_percent`; errors: invalid_argument (a q outside
///   [0, 100] or NaN, null data with elements, backend unavailable); unsupported_dtype;
///   out_of_memory; cuda_error/cuda_fatal. Synchronous; deterministic; exact on both backends.
/// Source: numpy/lib/function_base.py `_quantile`, `_get_indexes`, `_lerp` (1.22–2.x).
[[nodiscard]] result<std::vector<double>> compute_percentiles(const tensor_view& tensor,
                                                              std::span<const double> q_percent,
                                                              backend which = backend::cpu);

/// @brief Sum of the k largest values and of all values.
struct top_k_sum {
  int64_t k = 0;            ///< values summed into `top_sum`: min(k requested, n)
  double top_sum = 0.0;     ///< Σ of the k largest values (0 when k = 0)
  double total_sum = 0.0;   ///< Σ of all values (0 for an empty tensor)
  double max = 0.0;         ///< largest value; NaN for an empty tensor
};

/// @brief Σ of the k largest values, Σ of all values and the maximum, over float64-converted
/// elements. Any NaN element makes top_sum, total_sum and max NaN. ±Inf take part (sums follow
/// IEEE: +Inf + −Inf = NaN). Ties do not matter (equal values are interchangeable).
/// Sums are pairwise (CPU) or tree (CUDA) reductions: each within 1e-12 relative to the sum of
/// |x| of the reference (long double); `k` and `max` exact.
/// @param k ≥ 0
/// @return the sums; errors: invalid_argument (k < 0, null data with elements, backend
///   unavailable); unsupported_dtype; out_of_memory; cuda_error/cuda_fatal. Synchronous.
/// Source: spec/RULES.md §3.20 ("Σ top-nfeatures / Σ all"), §4 ("max, top-k sum").
[[nodiscard]] result<top_k_sum> compute_top_k_sum(const tensor_view& tensor, int64_t k,
                                                  backend which = backend::cpu);

}  // namespace trialstat::stats

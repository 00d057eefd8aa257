// SPDX-License-Identifier: Apache-2.0
/// @file pairwise.hpp
/// @brief Statistics of two same-shaped tensors: a tensor at step s (`current`) against an
/// earlier saved step p of the same tensor and worker (`previous`) — for WeightUpdateRatio and
/// UnchangedTensor (spec/RULES.md §3.3, §3.6) — or against another trial (SimilarAcrossRuns).
#pragma once

#include <cmath>
#include <cstdint>

#include "trialstat/status.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats {

/// @brief numpy.allclose parameters (spec/RULES.md §3.6 defaults).
struct allclose_params {
  double rtol = 1e-5;
  double atol = 1e-8;
  bool equal_nan = false;
  friend bool operator==(const allclose_params&, const allclose_params&) = default;
};

/// @brief Results over all element pairs (a = previous, b = current), IEEE arithmetic in
/// float64 with nothing filtered, so non-finite inputs propagate as numpy's would.
struct pairwise {
  int64_t count = 0;                 ///< element pairs compared
  double diff_sum_squares = 0.0;     ///< Σ(b − a)² (NaN/Inf propagate)
  double diff_max_abs = 0.0;         ///< max |b − a| over pairs whose difference is not NaN
  double previous_sum_squares = 0.0; ///< Σa² over all elements of `previous` (NaN/Inf propagate)
  /// Pairs violating numpy.isclose(a, b): |a − b| ≤ atol + rtol·|b| (b = current); infinities
  /// close only to the same-signed infinity; NaN close to NaN only with equal_nan.
  int64_t allclose_violations = 0;
  /// Pairs where exactly one of a, b is NaN (a NaN against a number, ±Inf included). Each is
  /// also an allclose violation, whatever equal_nan; its |b − a| is NaN, so `diff_max_abs`
  /// cannot show it. NaN against NaN is not counted here.
  int64_t nan_mismatches = 0;

  /// @brief ‖b − a‖₂ (Frobenius over all elements).
  [[nodiscard]] double diff_l2() const noexcept { return std::sqrt(diff_sum_squares); }
  /// @brief ‖a‖₂.
  [[nodiscard]] double previous_l2() const noexcept { return std::sqrt(previous_sum_squares); }
  /// @brief numpy.allclose(a, b, ...) for the parameters the record was computed with.
  [[nodiscard]] bool all_close() const noexcept { return allclose_violations == 0; }
};

/// @brief Compare `previous` (a) with `current` (b).
/// @return the record; errors: invalid_argument when element counts differ (shapes are compared
///   by the caller) or the backend is unavailable; unsupported_dtype for string/complex.
/// Sums agree with a long-double reference within 1e-12 relative; counts exactly.
[[nodiscard]] result<pairwise> compute_pairwise(const tensor_view& previous,
                                                const tensor_view& current,
                                                const allclose_params& params,
                                                backend which = backend::cpu);

}  // namespace trialstat::stats

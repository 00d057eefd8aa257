// SPDX-License-Identifier: Apache-2.0
/// @file expect_stats.hpp
/// @brief GoogleTest comparisons of statistics records with the references, at the tolerances
/// the public headers promise: counts, min, max and max|x| exact; Σx, Σ|x| and the mean within
/// 1e-12 relative to Σ|x| (mean: Σ|x|/n); Σx² within 1e-12 relative; the variance within
/// 1e-12 relative to max(variance, mean²). Header-only (inline), used by test_kernels and
/// test_stats.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "tests/reference/reference_stats.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"

namespace trialstat::reference {

inline constexpr double stats_rel_tolerance = 1e-12;

/// @brief |actual − expected| ≤ tol·scale, with Inf/NaN expected exactly.
inline ::testing::AssertionResult near_scaled(const char* what, double actual, long double expected,
                                              long double scale) {
  const long double e = expected;
  if (std::isnan(static_cast<double>(e))) {
    if (std::isnan(actual)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << what << ": expected NaN, got " << actual;
  }
  if (std::fabs(e) > static_cast<long double>(std::numeric_limits<double>::max())) {
    const double inf = e > 0 ? std::numeric_limits<double>::infinity()
                             : -std::numeric_limits<double>::infinity();
    if (actual == inf) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << what << ": expected " << inf << ", got " << actual;
  }
  const long double err = std::fabs(static_cast<long double>(actual) - e);
  const long double allowed = stats_rel_tolerance * scale;
  if (err <= allowed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << ": got " << std::hexfloat << actual << std::defaultfloat << " (" << actual
         << "), expected " << static_cast<double>(e) << ", error " << static_cast<double>(err)
         << " > allowed " << static_cast<double>(allowed);
}

/// @brief Every field of a moments record against the reference; `context` names the case
/// (dtype, size, mode, seed) in failure messages.
inline void expect_moments_match(const stats::moments& m, const moments_ref& r,
                                 const std::string& context) {
  SCOPED_TRACE(context);
  EXPECT_EQ(m.count, r.count);
  EXPECT_EQ(m.nan_count, r.nan_count);
  EXPECT_EQ(m.pos_inf_count, r.pos_inf_count);
  EXPECT_EQ(m.neg_inf_count, r.neg_inf_count);
  EXPECT_EQ(m.zero_count, r.zero_count);
  EXPECT_EQ(m.positive_count, r.positive_count);
  EXPECT_EQ(m.negative_count, r.negative_count);
  EXPECT_EQ(m.finite_count(), r.finite_count);
  if (r.finite_count == 0) {
    EXPECT_EQ(m.min, std::numeric_limits<double>::infinity());
    EXPECT_EQ(m.max, -std::numeric_limits<double>::infinity());
    EXPECT_EQ(m.sum, 0.0);
    EXPECT_EQ(m.sum_abs, 0.0);
    EXPECT_EQ(m.sum_squares, 0.0);
    EXPECT_EQ(m.max_abs, 0.0);
    EXPECT_EQ(m.mean, 0.0);
    EXPECT_EQ(m.m2, 0.0);
    EXPECT_TRUE(std::isnan(m.variance()));
    return;
  }
  EXPECT_EQ(m.min, r.min);
  EXPECT_EQ(m.max, r.max);
  EXPECT_EQ(m.max_abs, r.max_abs);
  const long double n = static_cast<long double>(r.finite_count);
  EXPECT_TRUE(near_scaled("sum", m.sum, r.sum, r.sum_abs));
  EXPECT_TRUE(near_scaled("sum_abs", m.sum_abs, r.sum_abs, r.sum_abs));
  EXPECT_TRUE(near_scaled("sum_squares", m.sum_squares, r.sum_squares, r.sum_squares));
  EXPECT_TRUE(near_scaled("mean", m.mean, r.mean, r.sum_abs / n));
  const long double var = r.m2 / n;
  const long double var_scale = std::max(var, r.mean * r.mean);
  EXPECT_TRUE(near_scaled("variance", m.variance(), var, var_scale));
}

/// @brief A histogram against the numpy reference: bins, edges and every count exact.
inline void expect_histogram_match(const stats::histogram& h, const histogram_ref& r,
                                   const std::string& context) {
  SCOPED_TRACE(context);
  ASSERT_EQ(h.bins, r.bins);
  if (r.bins == 0) {
    EXPECT_TRUE(h.counts.empty());
    return;
  }
  EXPECT_EQ(h.lo, r.lo);
  EXPECT_EQ(h.hi, r.hi);
  EXPECT_EQ(h.degenerate, r.degenerate);
  ASSERT_EQ(h.counts.size(), r.counts.size());
  for (std::size_t i = 0; i < r.counts.size(); ++i) {
    EXPECT_EQ(h.counts[i], r.counts[i]) << "bin " << i;
  }
}

/// @brief A pairwise record against the reference.
inline void expect_pairwise_match(const stats::pairwise& p, const pairwise_ref& r,
                                  const std::string& context) {
  SCOPED_TRACE(context);
  EXPECT_EQ(p.count, r.count);
  EXPECT_EQ(p.allclose_violations, r.violations);
  EXPECT_EQ(p.nan_mismatches, r.nan_mismatches);
  EXPECT_EQ(p.diff_max_abs, r.diff_max_abs);
  EXPECT_TRUE(near_scaled("diff_sum_squares", p.diff_sum_squares, r.diff_sum_squares,
                          r.diff_sum_squares));
  EXPECT_TRUE(near_scaled("previous_sum_squares", p.previous_sum_squares, r.previous_sum_squares,
                          r.previous_sum_squares));
}

}  // namespace trialstat::reference

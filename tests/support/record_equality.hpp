// SPDX-License-Identifier: Apache-2.0
// Test helpers: gtest expectations that two statistics records agree exactly — the moments
// (every double field by its bits) and the histograms: the fixed-bin one (bins, range,
// degenerate flag, counts) and the fixed log-scale one (counts and the NaN/±Inf/below/above
// cells). Used wherever two executors, two paths of one executor, two ISAs or two dtypes of
// the same values must agree.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>

#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/statistics_record.hpp"

namespace trialstat::testing {

/// @brief Bit-identical, or both NaN (which NaN payload an x86 add propagates depends on the
/// operand order the compiler picked for a commutative instruction).
inline bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

/// @brief The moments' element counts (all, NaN, ±Inf, zero, positive, negative) are equal.
inline void expect_same_moment_counts(const stats::moments& a, const stats::moments& b) {
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.nan_count, b.nan_count);
  EXPECT_EQ(a.pos_inf_count, b.pos_inf_count);
  EXPECT_EQ(a.neg_inf_count, b.neg_inf_count);
  EXPECT_EQ(a.zero_count, b.zero_count);
  EXPECT_EQ(a.positive_count, b.positive_count);
  EXPECT_EQ(a.negative_count, b.negative_count);
}

/// @brief Every count equal and every double field the same bits (same_bits); `what` names the
/// case in failure messages.
inline void expect_identical_moments(const stats::moments& a, const stats::moments& b,
                                     const std::string& what) {
  SCOPED_TRACE(what);
  expect_same_moment_counts(a, b);
  for (auto [x, y, name] : {std::tuple{a.min, b.min, "min"}, {a.max, b.max, "max"},
                            {a.sum, b.sum, "sum"}, {a.sum_abs, b.sum_abs, "sum_abs"},
                            {a.sum_squares, b.sum_squares, "sum_squares"},
                            {a.max_abs, b.max_abs, "max_abs"}, {a.mean, b.mean, "mean"},
                            {a.m2, b.m2, "m2"}}) {
    EXPECT_TRUE(same_bits(x, y)) << name << ": " << std::hexfloat << x << " vs " << y;
  }
}

/// @brief The same log-scale histogram: every bin and the five counts beside them.
inline void expect_same_log_histogram(const stats::log_histogram& a, const stats::log_histogram& b) {
  EXPECT_EQ(a.counts, b.counts);
  EXPECT_EQ(a.nan_count, b.nan_count);
  EXPECT_EQ(a.pos_inf_count, b.pos_inf_count);
  EXPECT_EQ(a.neg_inf_count, b.neg_inf_count);
  EXPECT_EQ(a.below_count, b.below_count);
  EXPECT_EQ(a.above_count, b.above_count);
}

/// @brief Both records have a fixed-bin histogram or neither, and it is the same; likewise the
/// log-scale histogram. Non-fatal failures, except a presence mismatch (fatal in this helper).
inline void expect_same_histograms(const stats::statistics_record& a,
                                   const stats::statistics_record& b) {
  ASSERT_EQ(a.histogram.has_value(), b.histogram.has_value());
  if (a.histogram) {
    EXPECT_EQ(a.histogram->bins, b.histogram->bins);
    EXPECT_EQ(a.histogram->lo, b.histogram->lo);
    EXPECT_EQ(a.histogram->hi, b.histogram->hi);
    EXPECT_EQ(a.histogram->degenerate, b.histogram->degenerate);
    EXPECT_EQ(a.histogram->counts, b.histogram->counts);
  }
  ASSERT_EQ(a.log_histogram.has_value(), b.log_histogram.has_value());
  if (a.log_histogram) expect_same_log_histogram(*a.log_histogram, *b.log_histogram);
}

}  // namespace trialstat::testing

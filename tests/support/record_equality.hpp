// SPDX-License-Identifier: Apache-2.0
// Test helper: gtest expectations that two statistics records carry the same histograms — the
// fixed-bin one (bins, range, degenerate flag, counts) and the fixed log-scale one (counts and
// the NaN/±Inf/below/above cells) — exactly. Used wherever two executors or two paths of one
// executor must agree (tests/pipeline/gpu_executor_test.cpp, tests/stats/cpu_blocked_executor_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include "trialstat/stats/statistics_record.hpp"

namespace trialstat::testing {

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
  if (a.log_histogram) {
    EXPECT_EQ(a.log_histogram->counts, b.log_histogram->counts);
    EXPECT_EQ(a.log_histogram->nan_count, b.log_histogram->nan_count);
    EXPECT_EQ(a.log_histogram->pos_inf_count, b.log_histogram->pos_inf_count);
    EXPECT_EQ(a.log_histogram->neg_inf_count, b.log_histogram->neg_inf_count);
    EXPECT_EQ(a.log_histogram->below_count, b.log_histogram->below_count);
    EXPECT_EQ(a.log_histogram->above_count, b.log_histogram->above_count);
  }
}

}  // namespace trialstat::testing

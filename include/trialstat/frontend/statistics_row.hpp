// SPDX-License-Identifier: Apache-2.0
/// @file statistics_row.hpp
/// @brief One statistics record as a flat row of numbers — the row of the C API
/// (`trialstat_stats_row`, the log-histogram buffer) and of Python's statistics columns — with
/// one convention for what a row holds when a statistic does not exist.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/stats/statistics_record.hpp"

namespace trialstat::frontend {

/// @brief A record's statistics as numbers.
///
/// Without a usable raw value (`has_raw` false: the record is not saved raw, could not be read,
/// or no moments were computed) the counts are −1 and every double is NaN. With one, the doubles
/// are statistics over the finite elements and NaN when there is none. `update_ratio` is
/// ‖W_s − W_prev‖₂ / (‖W_prev‖₂ + report::update_ratio_epsilon) (report::update_ratio: the most
/// recent previous saved step of the same tensor, shapes equal, IEEE propagation of non-finite
/// values), NaN and `prev_step` −1 when not computed (no history requested, the first saved
/// step, shapes differ, or no raw value).
struct statistics_row {
  bool has_raw = false;
  int64_t nan_count = -1;
  int64_t pos_inf_count = -1;
  int64_t neg_inf_count = -1;
  int64_t zero_count = -1;
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
  double mean = std::numeric_limits<double>::quiet_NaN();
  double variance = std::numeric_limits<double>::quiet_NaN();  ///< population (ddof 0)
  double std_dev = std::numeric_limits<double>::quiet_NaN();   ///< sqrt(variance)
  double sum = std::numeric_limits<double>::quiet_NaN();
  double l1 = std::numeric_limits<double>::quiet_NaN();        ///< Σ|x|
  double l2 = std::numeric_limits<double>::quiet_NaN();        ///< sqrt(Σx²)
  double linf = std::numeric_limits<double>::quiet_NaN();      ///< max |x|
  double mean_abs = std::numeric_limits<double>::quiet_NaN();  ///< Σ|x| / finite count
  double update_ratio = std::numeric_limits<double>::quiet_NaN();
  int64_t prev_step = -1;  ///< global step `update_ratio` compares with
};

/// @brief The row of one record (see statistics_row for the missing-value convention).
/// Pure, deterministic; never fails.
[[nodiscard]] statistics_row make_statistics_row(const stats::statistics_record& record);

/// @brief Cells of one log-histogram row: `stats::log_histogram_bins` bin counts, then the NaN,
/// +Inf, −Inf, below-range and above-range counts (the C API's TRIALSTAT_LOG_HISTOGRAM_* layout).
inline constexpr std::size_t log_histogram_row_cells =
    static_cast<std::size_t>(stats::log_histogram_bins) + 5;
/// @brief Index of each count beside the bins in a log-histogram row.
enum log_histogram_cell : std::size_t {
  log_histogram_nan_cell = static_cast<std::size_t>(stats::log_histogram_bins),
  log_histogram_pos_inf_cell,
  log_histogram_neg_inf_cell,
  log_histogram_below_cell,
  log_histogram_above_cell,
};

/// @brief Write the log-histogram row of `record` into `cells`.
/// Without a log-scale histogram of `log_histogram_bins` bins (none requested, or no raw value):
/// zero bins and −1 in the five cells beside them.
/// @return whether the record had a histogram.
bool fill_log_histogram_row(const stats::statistics_record& record,
                            std::span<int64_t, log_histogram_row_cells> cells);

}  // namespace trialstat::frontend

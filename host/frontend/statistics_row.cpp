// SPDX-License-Identifier: Apache-2.0
#include "trialstat/frontend/statistics_row.hpp"

#include <algorithm>

#include "trialstat/report/statistics_writer.hpp"

namespace trialstat::frontend {

statistics_row make_statistics_row(const stats::statistics_record& record) {
  statistics_row row;
  if (!record.raw_status.ok() || !record.moments.has_value()) return row;
  const auto& m = *record.moments;
  row.has_raw = true;
  row.nan_count = m.nan_count;
  row.pos_inf_count = m.pos_inf_count;
  row.neg_inf_count = m.neg_inf_count;
  row.zero_count = m.zero_count;
  if (m.has_finite()) {
    row.min = m.min;
    row.max = m.max;
    row.mean = m.mean;
    row.variance = m.variance();
    row.std_dev = m.std_dev();
    row.sum = m.sum;
    row.l1 = m.sum_abs;
    row.l2 = m.l2();
    row.linf = m.max_abs;
    row.mean_abs = m.mean_abs();
  }
  // prev_step is written only when there is a ratio, so it stays -1 otherwise.
  if (const auto ratio = report::update_ratio(record, &row.prev_step)) row.update_ratio = *ratio;
  return row;
}

bool fill_log_histogram_row(const stats::statistics_record& record,
                            std::span<int64_t, log_histogram_row_cells> cells) {
  constexpr auto bins = static_cast<std::size_t>(stats::log_histogram_bins);
  const bool present = record.raw_status.ok() && record.moments.has_value() &&
                       record.log_histogram.has_value() && record.log_histogram->counts.size() == bins;
  if (!present) {
    std::fill(cells.begin(), cells.begin() + bins, int64_t{0});
    std::fill(cells.begin() + bins, cells.end(), int64_t{-1});
    return false;
  }
  const auto& h = *record.log_histogram;
  std::copy(h.counts.begin(), h.counts.end(), cells.begin());
  cells[log_histogram_nan_cell] = h.nan_count;
  cells[log_histogram_pos_inf_cell] = h.pos_inf_count;
  cells[log_histogram_neg_inf_cell] = h.neg_inf_count;
  cells[log_histogram_below_cell] = h.below_count;
  cells[log_histogram_above_cell] = h.above_count;
  return true;
}

}  // namespace trialstat::frontend

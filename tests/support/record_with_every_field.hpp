// SPDX-License-Identifier: Apache-2.0
// A statistics record with every field set to something other than its default: what the record
// codec's round trip (MPI step messages, store blobs) and the pipeline's record recycling start
// from. A new field of stats::statistics_record belongs here too: both tests then cover it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trialstat/stats/statistics_record.hpp"

namespace trialstat::testing_support {

/// The record; `values` (its kept float16 values, 6 of them, shape [2, 3]) must outlive it.
inline stats::statistics_record record_with_every_field(const std::vector<uint16_t>& values) {
  stats::statistics_record r;
  r.tensor = 3;
  r.worker = 2;
  r.step = 17;
  r.mode = mode::eval;
  r.mode_step = 4;
  r.wall_time = 1700000000.25;
  r.raw_status = status(error_code::data_loss, "events/x: record at byte 12: bad CRC");
  r.type = dtype::float16;
  r.shape = {2, 3};
  r.num_elements = 6;
  r.moments = stats::moments{};
  r.moments->count = 6;
  r.moments->sum = 1.5;
  r.histogram = stats::histogram{4, -1.0, 1.0, false, {1, 2, 0, 3}};
  r.log_histogram = stats::log_histogram{};
  r.scalar = 0.25;
  stats::previous_comparison c;
  c.previous_step = 12;
  c.result.diff_sum_squares = 2.0;
  c.allclose_violations = {1, 0};
  r.previous = {c};
  r.axis0 = {stats::axis0_counts{2, {1, 0, 2}}};
  r.saved_reductions = {{trial::reduction_op::l2, true, 3.5, dtype::float32}};
  r.reduction_problems = {{trial::record_location{96, 40, 1},
                           status(error_code::truncated_record, "events/y: record at byte 96: cut short")}};
  r.percentiles = {{5.0, -0.5}, {95.0, 0.75}};
  r.equal_counts = {{0.0, 2}};
  stats::channel_sums sums;
  sums.axis = 1;
  sums.sum = {1.0, 2.0, 3.0};
  sums.count = {2, 2, 2};
  sums.nan_count = sums.pos_inf_count = sums.neg_inf_count = {0, 0, 0};
  r.channel_sums = {sums};
  r.strings = {"0-1", "", std::string("nul\0byte", 8)};  // keep_strings (TreeDepth's links)
  r.values_data = reinterpret_cast<const std::byte*>(values.data());
  return r;
}

}  // namespace trialstat::testing_support

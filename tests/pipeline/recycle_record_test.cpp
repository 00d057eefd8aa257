// SPDX-License-Identifier: Apache-2.0
// detail::recycle_record: a record of an earlier step, every field set, recycled for the next
// step must equal a default-constructed record field for field (compared through the record
// codec, which writes every field), while its shape and pairwise list keep their capacity.
// A new statistics_record field: set it below, and reset it in recycle_record.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "host/pipeline/step_reader.hpp"
#include "trialstat/stats/record_codec.hpp"

namespace trialstat {
namespace {

std::vector<std::byte> encoded(const stats::statistics_record& r) {
  std::vector<std::byte> bytes;
  stats::append_record(r, bytes);
  return bytes;
}

TEST(RecycleRecord, EqualsADefaultRecordAndKeepsItsBuffers) {
  const std::vector<uint16_t> halves = {1, 2, 3, 4, 5, 6};
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
  r.histogram = stats::histogram{4, -1.0, 1.0, false, {1, 2, 0, 3}};
  r.log_histogram = stats::log_histogram{};
  r.scalar = 0.25;
  stats::previous_comparison c;
  c.previous_step = 12;
  c.allclose_violations = {1, 0};
  r.previous = {c};
  r.axis0 = {stats::axis0_counts{2, {1, 0, 2}}};
  r.saved_reductions = {{trial::reduction_op::l2, true, 3.5, dtype::float32}};
  r.reduction_problems = {{trial::record_location{96, 40, 1}, status(error_code::truncated_record, "cut short")}};
  r.percentiles = {{5.0, -0.5}};
  r.equal_counts = {{0.0, 2}};
  r.channel_sums = {stats::channel_sums{}};
  r.strings = {"0-1"};
  r.values_data = reinterpret_cast<const std::byte*>(halves.data());
  const int64_t* shape_buffer = r.shape.data();
  const stats::previous_comparison* previous_buffer = r.previous.data();

  pipeline::detail::recycle_record(r);

  EXPECT_EQ(encoded(r), encoded(stats::statistics_record{}));
  EXPECT_TRUE(r.raw_status.ok());
  EXPECT_EQ(r.values_data, nullptr);
  r.shape = {16, 16};
  EXPECT_EQ(r.shape.data(), shape_buffer);  // no new allocation for the next step's shape
  r.previous.emplace_back();
  EXPECT_EQ(r.previous.data(), previous_buffer);
}

}  // namespace
}  // namespace trialstat

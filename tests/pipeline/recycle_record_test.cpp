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
#include "tests/support/record_with_every_field.hpp"
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
  stats::statistics_record r = testing_support::record_with_every_field(halves);
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

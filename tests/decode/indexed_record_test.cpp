// SPDX-License-Identifier: Apache-2.0
// decode::decode_indexed_record, the one decode of an indexed record (FORMAT §6): every corrupt
// case that either of the two former paths (io::read_tensor_record and the step reader's own
// decode) rejected is rejected here, with the code each gave and a message naming the file, the
// byte offset and what was expected.
//
// The record under test (built byte by byte, at file offset 4096):
//   [u64 len][u32 crc(len)] Event{ wall_time 1234.5, step 7,
//     summary.value{ tag "w", tensor{ DT_FLOAT, shape [3], tensor_content 1 2 3 } } } [footer]
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/decode/wire_writer.hpp"
#include "tests/io/record_builder.hpp"
#include "trialstat/decode/indexed_record.hpp"

namespace trialstat::decode {
namespace {

using trialstat::testing::make_record;
using trialstat::testing::test_footer;
using trialstat::testing::wire_writer;

constexpr uint64_t at_bytes = 4096;
constexpr std::string_view file_name = "events/000000000007/000000000007_worker_0.tfevents";

/// An Event payload holding one tensor `tag` of `dtype_number` with `values` (float32 bytes).
std::string event_payload(std::string_view tag, const std::vector<float>& values,
                          uint64_t dtype_number = 1) {
  std::string content(values.size() * 4, '\0');
  if (!values.empty()) std::memcpy(content.data(), values.data(), content.size());
  wire_writer dim;
  dim.varint(1, values.size());
  wire_writer shape;
  shape.message(2, dim);
  wire_writer tensor;
  tensor.varint(1, dtype_number).message(2, shape).bytes(4, content);
  wire_writer value;
  value.bytes(1, tag).message(8, tensor);
  wire_writer summary;
  summary.message(1, value);
  wire_writer event;
  event.f64(1, 1234.5).varint(2, 7).message(5, summary);
  return event.str();
}

std::vector<std::byte> record_of(const std::string& payload,
                                 test_footer footer = test_footer::smdebug) {
  return make_record(trialstat::testing::as_bytes(payload), footer);
}

struct decode_case {
  event_decoder decoder;
  event_record out;
  status run(std::span<const std::byte> bytes, record_expectation expected) {
    return decode_indexed_record(bytes, at_bytes + bytes.size(), expected, file_name, decoder, out);
  }
};

/// Failure with `code`, the "<file>: record at byte 4096: " prefix, and `detail` in the message.
void expect_rejected(const status& s, error_code code, std::string_view detail) {
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_EQ(s.message().rfind(fmt::format("{}: record at byte 4096: ", file_name), 0), 0u)
      << s.message();
  EXPECT_NE(s.message().find(detail), std::string::npos) << s.message();
}

TEST(indexed_record, decodes_a_good_record_in_place) {
  const auto record = record_of(event_payload("w", {1.0f, 2.0f, 3.0f}));
  decode_case c;
  io::record_frame frame;
  const status s = decode_indexed_record(record, at_bytes + record.size(),
                                         {at_bytes, record.size(), "w"}, file_name, c.decoder,
                                         c.out, &frame);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(c.out.tag, "w");
  EXPECT_EQ(c.out.wall_time, 1234.5);
  EXPECT_EQ(c.out.step, 7);
  EXPECT_EQ(c.out.type, dtype::float32);
  EXPECT_EQ(c.out.shape, (std::vector<int64_t>{3}));
  // Numeric content is a view into the given bytes: no copy of tensor bytes.
  ASSERT_EQ(c.out.content.size(), 12u);
  EXPECT_GE(c.out.content.data(), record.data());
  EXPECT_LE(c.out.content.data() + 12, record.data() + record.size());
  EXPECT_EQ(frame.offset_bytes, at_bytes);
  EXPECT_EQ(frame.size_bytes(), record.size());
  // No tag expected: not checked.
  EXPECT_TRUE(c.run(record, {at_bytes, record.size()}).ok());
  // The payload-CRC footer (TensorBoard) is accepted too.
  const auto tensorboard = record_of(event_payload("w", {1.0f}), test_footer::payload_crc);
  EXPECT_TRUE(c.run(tensorboard, {at_bytes, tensorboard.size(), "w"}).ok());
}

TEST(indexed_record, truncated_record_when_the_file_ends_inside_it) {
  const auto record = record_of(event_payload("w", {1.0f, 2.0f, 3.0f}));
  decode_case c;
  for (const std::size_t have : {std::size_t{0}, std::size_t{11}, record.size() - 1}) {
    SCOPED_TRACE(have);
    expect_rejected(c.run(std::span(record).first(have), {at_bytes, record.size(), "w"}),
                    error_code::truncated_record,
                    fmt::format("the index says {} bytes but the file ends after {}",
                                record.size(), have));
  }
}

TEST(indexed_record, data_loss_for_an_index_length_below_the_framing) {
  const auto record = record_of(event_payload("w", {1.0f}));
  decode_case c;
  for (const uint64_t length : {uint64_t{0}, uint64_t{15}}) {
    expect_rejected(c.run(record, {at_bytes, length, "w"}), error_code::data_loss,
                    "smaller than the 16 framing bytes");
  }
}

TEST(indexed_record, data_loss_for_bad_length_crc_and_bad_footer) {
  const auto good = record_of(event_payload("w", {1.0f}));
  decode_case c;
  auto bad_crc = good;
  bad_crc[8] ^= std::byte{0x01};
  expect_rejected(c.run(bad_crc, {at_bytes, good.size(), "w"}), error_code::data_loss, "");
  auto bad_footer = good;
  bad_footer.back() ^= std::byte{0x01};
  expect_rejected(c.run(bad_footer, {at_bytes, good.size(), "w"}), error_code::data_loss, "");
  // A corrupt length whose CRC still matches would be caught by the size check below; a
  // corrupt length with a bad CRC is caught here, whatever the length says.
  auto huge = good;
  huge[7] = std::byte{0x7f};
  expect_rejected(c.run(huge, {at_bytes, good.size(), "w"}), error_code::data_loss, "");
}

TEST(indexed_record, data_loss_when_the_index_length_differs_from_the_record) {
  const auto record = record_of(event_payload("w", {1.0f, 2.0f}));
  decode_case c;
  // The index says one byte more than the record (the next byte is there): the former step
  // reader's "is N bytes but the index says M", read_tensor_record's "does not match".
  auto longer = record;
  longer.push_back(std::byte{0});
  expect_rejected(c.run(longer, {at_bytes, record.size() + 1, "w"}), error_code::data_loss,
                  fmt::format("index length {} does not match the record size {}",
                              record.size() + 1, record.size()));
  // One byte less: the record runs past the indexed range, which is whole, so an index
  // mismatch (data_loss), not a tail still being written (truncated_record).
  expect_rejected(c.run(record, {at_bytes, record.size() - 1, "w"}), error_code::data_loss,
                  fmt::format("index length {} does not match the record size {}",
                              record.size() - 1, record.size()));
}

TEST(indexed_record, data_loss_for_a_tag_other_than_the_index_names) {
  const auto record = record_of(event_payload("other", {1.0f}));
  decode_case c;
  expect_rejected(c.run(record, {at_bytes, record.size(), "w"}), error_code::data_loss,
                  "holds 'other' but the index says 'w'");
}

TEST(indexed_record, saved_reduction_must_be_one_number) {
  const std::string tag = saved_reduction_tag("l2", true, "w");
  EXPECT_EQ(tag, "smdebug/reductions/abs_l2/w");
  decode_case c;
  const auto one = record_of(event_payload(tag, {2.5f}));
  EXPECT_TRUE(c.run(one, {at_bytes, one.size(), tag, /*one_number=*/true}).ok());
  const auto three = record_of(event_payload(tag, {1.0f, 2.0f, 3.0f}));
  expect_rejected(c.run(three, {at_bytes, three.size(), tag, /*one_number=*/true}),
                  error_code::data_loss, "a saved reduction must be one number, found 3 float32");
}

TEST(indexed_record, malformed_event_and_unknown_dtype) {
  decode_case c;
  // smdebug's footer does not cover the payload: the framing is valid, the decoder rejects it.
  std::string payload = event_payload("w", {1.0f});
  payload.back() = static_cast<char>(0xff);  // truncates the last varint-ended field
  payload += '\x80';
  const auto malformed = record_of(payload);
  expect_rejected(c.run(malformed, {at_bytes, malformed.size(), "w"}), error_code::data_loss,
                  "[payload starts at file byte 4108]");
  const auto unknown = record_of(event_payload("w", {1.0f}, /*dtype_number=*/999));
  expect_rejected(c.run(unknown, {at_bytes, unknown.size(), "w"}), error_code::unsupported_dtype,
                  "");
}

}  // namespace
}  // namespace trialstat::decode

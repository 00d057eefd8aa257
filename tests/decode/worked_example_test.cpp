// SPDX-License-Identifier: Apache-2.0
// spec/FORMAT.md §11: the 99-byte record of `CrossEntropyLoss_output_0` at global step 5, built
// byte for byte from the hex in the spec, through parse_record, event_decoder and
// read_tensor_record (placed at start_idx 10168 of a file, as in the real index entry).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/shared_trials.hpp"
#include "trialstat/io/crc32c.hpp"
#include "trialstat/decode/event_decoder.hpp"
#include "trialstat/decode/indexed_record.hpp"
#include "trialstat/io/record_reader.hpp"

namespace trialstat::decode {
namespace {

using namespace trialstat::io;  // the framing and the file reader, used beside the decoder

std::vector<std::byte> worked_example_bytes() {
  // clang-format off
  const std::vector<int> hex = {
      0x53, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,              // len = 83
      0x0d, 0x7d, 0x4e, 0x91,                                      // masked crc32c(len)
      0x09, 0x58, 0xf5, 0x71, 0x63, 0xb5, 0xc0, 0xda, 0x41,        // Event.1 wall_time
      0x10, 0x05,                                                  // Event.2 step = 5
      0x2a, 0x46,                                                  // Event.5 summary, 70 bytes
      0x0a, 0x44,                                                  // Summary.1 value, 68 bytes
      0x0a, 0x19,                                                  // Value.1 tag, 25 bytes
  };
  // clang-format on
  std::vector<std::byte> out;
  for (int b : hex) out.push_back(static_cast<std::byte>(b));
  for (char c : std::string("CrossEntropyLoss_output_0")) out.push_back(static_cast<std::byte>(c));
  // clang-format off
  const std::vector<int> rest = {
      0x42, 0x0a,                                                  // Value.8 tensor, 10 bytes
      0x08, 0x01,                                                  // dtype = DT_FLOAT
      0x12, 0x00,                                                  // tensor_shape {} (0-d)
      0x22, 0x04, 0x6b, 0xb0, 0x13, 0x40,                          // tensor_content
      0x4a, 0x1b,                                                  // Value.9 metadata, 27 bytes
      0x0a, 0x0e, 0x0a, 0x09,                                      // plugin_data, plugin_name
  };
  // clang-format on
  for (int b : rest) out.push_back(static_cast<std::byte>(b));
  const auto add_text = [&](std::string_view s) {
    for (char c : s) out.push_back(static_cast<std::byte>(c));
  };
  add_text("mode_step");
  for (int b : {0x12, 0x01}) out.push_back(static_cast<std::byte>(b));
  add_text("5");
  for (int b : {0x0a, 0x09, 0x0a, 0x04}) out.push_back(static_cast<std::byte>(b));
  add_text("mode");
  for (int b : {0x12, 0x01}) out.push_back(static_cast<std::byte>(b));
  add_text("1");
  for (int b : {0xb3, 0xc0, 0x2d, 0x06}) out.push_back(static_cast<std::byte>(b));  // footer
  return out;
}

void expect_worked_example(const event_record& r) {
  EXPECT_EQ(r.tag, "CrossEntropyLoss_output_0");
  EXPECT_EQ(r.step, 5);
  EXPECT_NEAR(r.wall_time, 1.7953478537806e9, 1e-3);
  EXPECT_TRUE(r.has_mode);
  EXPECT_EQ(r.mode, mode::train);
  EXPECT_EQ(r.mode_step, 5);
  EXPECT_TRUE(r.has_tensor);
  EXPECT_EQ(r.proto_dtype, 1);
  EXPECT_EQ(r.type, dtype::float32);
  EXPECT_TRUE(r.shape.empty());
  EXPECT_EQ(r.num_elements, 1);
  ASSERT_EQ(r.content.size(), 4u);
  uint32_t bits = 0;
  std::memcpy(&bits, r.content.data(), 4);
  EXPECT_EQ(bits, 0x4013B06Bu);
  float value = 0;
  std::memcpy(&value, r.content.data(), 4);
  EXPECT_FLOAT_EQ(value, 2.3076427f);
}

TEST(worked_example, framing_and_crc_values_match_the_spec) {
  const auto bytes = worked_example_bytes();
  ASSERT_EQ(bytes.size(), 99u);
  // crc 0xC91AF765 → rot 0xEECB9235 → +0xA282EAD8 = 0x914E7D0D
  EXPECT_EQ(crc32c(std::span(bytes).first(8)), 0xC91AF765u);
  EXPECT_EQ(mask_crc32c(0xC91AF765u), 0x914E7D0Du);
  auto frame = parse_record(bytes, 10168, "000000000005_worker_0.tfevents");
  ASSERT_TRUE(frame) << frame.error_status().to_string();
  EXPECT_EQ(frame->payload.size(), 83u);
  EXPECT_EQ(frame->size_bytes(), 99u);
  EXPECT_EQ(frame->footer, footer_kind::smdebug_constant);
  EXPECT_EQ(frame->offset_bytes, 10168u);
}

TEST(worked_example, decodes_to_the_loss_value) {
  const auto bytes = worked_example_bytes();
  auto frame = parse_record(bytes, 10168, "000000000005_worker_0.tfevents");
  ASSERT_TRUE(frame);
  event_decoder decoder;
  event_record r;
  const status s = decoder.decode(frame->payload, r);
  ASSERT_TRUE(s.ok()) << s.to_string();
  expect_worked_example(r);
  // The content is a view into the record bytes (zero copy).
  EXPECT_EQ(r.content.data(), bytes.data() + 12 + 50);
}

TEST(worked_example, read_tensor_record_at_start_idx_10168) {
  const auto dir = trialstat::testing::make_scratch_dir("worked_example");
  const auto path = dir / "000000000005_worker_0.tfevents";
  const auto record = worked_example_bytes();
  {
    std::ofstream out(path, std::ios::binary);
    const std::string filler(10168, '\x5a');
    out.write(filler.data(), static_cast<std::streamsize>(filler.size()));
    out.write(reinterpret_cast<const char*>(record.data()),
              static_cast<std::streamsize>(record.size()));
  }
  auto file = file_reader::open(path);
  ASSERT_TRUE(file) << file.error_status().to_string();
  record_read_buffers buffers;
  buffers.bytes.assign(4096, std::byte{0xFF});  // poison a reused buffer
  event_record r;
  record_frame frame;
  const status s = read_tensor_record(*file, {10168, 99}, buffers, r, &frame);
  ASSERT_TRUE(s.ok()) << s.to_string();
  expect_worked_example(r);
  EXPECT_EQ(frame.offset_bytes, 10168u);
  EXPECT_EQ(frame.payload.size(), 83u);
  for (std::size_t i = 99; i < 99 + record_padding_bytes; ++i) {
    ASSERT_EQ(buffers.bytes[i], std::byte{0}) << "padding byte " << i;
  }

  const std::string prefix = path.string() + ": record at byte ";
  // Index length that does not match the record's own size.
  for (const uint64_t length : {uint64_t{98}, uint64_t{100}, uint64_t{16}, uint64_t{15}}) {
    SCOPED_TRACE(length);
    const uint64_t start = length == 100 ? 10167 : 10168;
    const status bad = read_tensor_record(*file, {start, length}, buffers, r);
    if (length == 100) {
      // One byte early: the filler byte breaks the length CRC.
      EXPECT_EQ(bad.code(), error_code::data_loss) << bad.to_string();
      EXPECT_EQ(bad.message().rfind(prefix + "10167: ", 0), 0u) << bad.message();
      continue;
    }
    EXPECT_EQ(bad.code(), error_code::data_loss) << bad.to_string();
    EXPECT_EQ(bad.message().rfind(prefix + "10168: ", 0), 0u) << bad.message();
  }
  {
    // The record followed by one more byte: the frame is 99 bytes, the index says 100.
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out.put('\0');
  }
  ASSERT_TRUE(file->refresh_size().ok());
  const status longer = read_tensor_record(*file, {10168, 100}, buffers, r);
  EXPECT_EQ(longer.code(), error_code::data_loss) << longer.to_string();
  EXPECT_NE(longer.message().find("index length 100 does not match the record size 99"),
            std::string::npos)
      << longer.message();
  // A range past the end of the file.
  const status past = read_tensor_record(*file, {10168, 1000}, buffers, r);
  EXPECT_EQ(past.code(), error_code::truncated_record) << past.to_string();
  EXPECT_EQ(past.message().rfind(prefix + "10168: ", 0), 0u) << past.message();
  const status huge = read_tensor_record(*file, {10168, uint64_t{1} << 63}, buffers, r);
  EXPECT_EQ(huge.code(), error_code::truncated_record) << huge.to_string();
  const status far = read_tensor_record(*file, {~uint64_t{0}, 99}, buffers, r);
  EXPECT_EQ(far.code(), error_code::truncated_record) << far.to_string();
  // And the good read still works with the same buffers.
  ASSERT_TRUE(read_tensor_record(*file, {10168, 99}, buffers, r).ok());
  expect_worked_example(r);
  std::filesystem::remove_all(dir);
}

TEST(worked_example, corrupt_payload_names_file_and_offsets) {
  const auto dir = trialstat::testing::make_scratch_dir("worked_example");
  const auto path = dir / "corrupt.tfevents";
  auto record = worked_example_bytes();
  record[12 + 48] = std::byte{0x21};  // tensor_content's tag 0x22 → field 4, wire type 1
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(record.data()),
              static_cast<std::streamsize>(record.size()));
  }
  auto file = file_reader::open(path);
  ASSERT_TRUE(file);
  record_read_buffers buffers;
  event_record r;
  // smdebug's footer does not cover the payload, so the framing is valid and the decoder
  // catches it.
  const status s = read_tensor_record(*file, {0, 99}, buffers, r);
  EXPECT_EQ(s.code(), error_code::data_loss) << s.to_string();
  EXPECT_EQ(s.message().rfind(path.string() + ": record at byte 0: ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("payload byte 48"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("payload starts at file byte 12"), std::string::npos) << s.message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trialstat::decode

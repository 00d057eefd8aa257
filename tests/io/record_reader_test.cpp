// SPDX-License-Identifier: Apache-2.0
// TFRecord framing (FORMAT §2): parse_record on valid, truncated, corrupt and absurd-length
// records; record_scanner over several records with corruption and a tail still being written.
// Every failure message must name the file and the record's byte offset.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/io/record_builder.hpp"
#include "trialstat/io/record_reader.hpp"

namespace trialstat::io {
namespace {

using trialstat::testing::append;
using trialstat::testing::append_le;
using trialstat::testing::bytes_of;
using trialstat::testing::make_header;
using trialstat::testing::make_record;
using trialstat::testing::test_footer;

constexpr std::string_view file_name = "events/000000000005/000000000005_worker_0.tfevents";

/// The message names the file and "byte <offset>".
void expect_names_file_and_offset(const status& s, uint64_t offset) {
  EXPECT_NE(s.message().find(file_name), std::string::npos) << s.to_string();
  EXPECT_NE(s.message().find("record at byte " + std::to_string(offset)), std::string::npos)
      << s.to_string();
}

TEST(record_reader, smdebug_footer_constant_is_masked_crc_of_ascii_magic) {
  const auto magic = bytes_of("0x12345678");
  EXPECT_EQ(mask_crc32c(crc32c(magic)), smdebug_footer_magic);
}

TEST(record_reader, valid_record_with_smdebug_footer) {
  const auto payload = bytes_of("hello, event");
  auto bytes = make_record(payload, test_footer::smdebug);
  ASSERT_EQ(bytes.size(), payload.size() + 16);
  // Bytes past the record (the next record, padding) are ignored.
  append(bytes, bytes_of("trailing garbage"));
  auto frame = parse_record(bytes, 1234, file_name);
  ASSERT_TRUE(frame) << frame.error_status().to_string();
  EXPECT_EQ(frame->offset_bytes, 1234u);
  EXPECT_EQ(frame->footer, footer_kind::smdebug_constant);
  EXPECT_EQ(frame->size_bytes(), payload.size() + 16);
  ASSERT_EQ(frame->payload.size(), payload.size());
  EXPECT_EQ(frame->payload.data(), bytes.data() + 12);
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), frame->payload.begin()));
}

TEST(record_reader, valid_record_with_payload_crc_footer) {
  const auto payload = bytes_of("tensorboard event bytes");
  const auto bytes = make_record(payload, test_footer::payload_crc);
  auto frame = parse_record(bytes, 0, file_name);
  ASSERT_TRUE(frame) << frame.error_status().to_string();
  EXPECT_EQ(frame->footer, footer_kind::payload_crc);
  EXPECT_EQ(frame->payload.size(), payload.size());
}

TEST(record_reader, zero_length_payload) {
  const auto bytes = make_record({}, test_footer::smdebug);
  ASSERT_EQ(bytes.size(), 16u);
  auto frame = parse_record(bytes, 7, file_name);
  ASSERT_TRUE(frame) << frame.error_status().to_string();
  EXPECT_EQ(frame->payload.size(), 0u);
  EXPECT_EQ(frame->size_bytes(), 16u);
  // The payload CRC of zero bytes is a valid footer too.
  auto crc_frame = parse_record(make_record({}, test_footer::payload_crc), 7, file_name);
  ASSERT_TRUE(crc_frame) << crc_frame.error_status().to_string();
  EXPECT_EQ(crc_frame->footer, footer_kind::payload_crc);
}

TEST(record_reader, truncated_header) {
  const auto bytes = make_record(bytes_of("abc"));
  for (std::size_t cut = 0; cut < 12; ++cut) {
    auto frame = parse_record(std::span(bytes).first(cut), 500, file_name);
    ASSERT_FALSE(frame) << "cut " << cut;
    EXPECT_EQ(frame.error_status().code(), error_code::truncated_record) << "cut " << cut;
    expect_names_file_and_offset(frame.error_status(), 500);
    EXPECT_NE(frame.error_status().message().find("expected 12 header bytes"), std::string::npos)
        << frame.error_status().message();
  }
}

TEST(record_reader, truncated_payload_and_footer) {
  const auto payload = bytes_of("0123456789");
  const auto bytes = make_record(payload);
  // 12..21: payload cut; 22..25: footer cut.
  for (std::size_t cut = 12; cut < bytes.size(); ++cut) {
    auto frame = parse_record(std::span(bytes).first(cut), 99, file_name);
    ASSERT_FALSE(frame) << "cut " << cut;
    const status s = frame.error_status();
    EXPECT_EQ(s.code(), error_code::truncated_record) << "cut " << cut << ": " << s.to_string();
    expect_names_file_and_offset(s, 99);
    EXPECT_NE(s.message().find("declared payload length 10"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("only " + std::to_string(cut - 12) + " available"),
              std::string::npos)
        << s.message();
  }
}

TEST(record_reader, bad_length_crc_is_data_loss) {
  auto bytes = make_record(bytes_of("payload"));
  bytes[8] ^= std::byte{0x01};
  auto frame = parse_record(bytes, 4096, file_name);
  ASSERT_FALSE(frame);
  EXPECT_EQ(frame.error_status().code(), error_code::data_loss);
  expect_names_file_and_offset(frame.error_status(), 4096);
  EXPECT_NE(frame.error_status().message().find("length CRC"), std::string::npos);

  // A flipped length byte also breaks the length CRC: data_loss, not a huge read.
  auto bytes2 = make_record(bytes_of("payload"));
  bytes2[5] ^= std::byte{0x40};
  auto frame2 = parse_record(bytes2, 0, file_name);
  ASSERT_FALSE(frame2);
  EXPECT_EQ(frame2.error_status().code(), error_code::data_loss);
}

TEST(record_reader, bad_footer_is_data_loss) {
  const auto payload = bytes_of("payload bytes");
  auto bytes = make_record(payload);
  bytes[bytes.size() - 1] ^= std::byte{0x80};
  auto frame = parse_record(bytes, 77, file_name);
  ASSERT_FALSE(frame);
  const status s = frame.error_status();
  EXPECT_EQ(s.code(), error_code::data_loss);
  expect_names_file_and_offset(s, 77);
  EXPECT_NE(s.message().find("0x062DC0B3"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("footer at byte " + std::to_string(77 + 12 + payload.size())),
            std::string::npos)
      << s.message();

  // A payload byte flipped under a payload-CRC footer: the footer no longer matches.
  auto crc_bytes = make_record(payload, test_footer::payload_crc);
  crc_bytes[14] ^= std::byte{0x01};
  auto crc_frame = parse_record(crc_bytes, 0, file_name);
  ASSERT_FALSE(crc_frame);
  EXPECT_EQ(crc_frame.error_status().code(), error_code::data_loss);
}

TEST(record_reader, declared_length_beyond_the_file) {
  auto bytes = make_header(1000);
  append(bytes, bytes_of("only a little payload"));
  auto frame = parse_record(bytes, 64, file_name);
  ASSERT_FALSE(frame);
  EXPECT_EQ(frame.error_status().code(), error_code::truncated_record);
  expect_names_file_and_offset(frame.error_status(), 64);
  EXPECT_NE(frame.error_status().message().find("declared payload length 1000"),
            std::string::npos);
}

TEST(record_reader, absurd_lengths_do_not_wrap) {
  for (const uint64_t length : {uint64_t{1} << 63, std::numeric_limits<uint64_t>::max(),
                                std::numeric_limits<uint64_t>::max() - 3,
                                std::numeric_limits<uint64_t>::max() - 15,
                                std::numeric_limits<uint64_t>::max() - 16}) {
    auto bytes = make_header(length);
    append(bytes, bytes_of("some bytes that are not a record of that length"));
    auto frame = parse_record(bytes, 8, file_name);
    ASSERT_FALSE(frame) << length;
    EXPECT_EQ(frame.error_status().code(), error_code::truncated_record) << length;
    expect_names_file_and_offset(frame.error_status(), 8);
    EXPECT_NE(frame.error_status().message().find(std::to_string(length)), std::string::npos)
        << frame.error_status().message();
  }
}

// ---- record_scanner ----------------------------------------------------------------------

struct three_records {
  std::vector<std::byte> file;
  std::vector<std::size_t> offsets;
  std::vector<std::vector<std::byte>> payloads;
};

three_records make_three(test_footer footer) {
  three_records t;
  t.payloads = {bytes_of("first record payload"), bytes_of("second, a bit longer payload"),
                bytes_of("third")};
  for (const auto& p : t.payloads) {
    t.offsets.push_back(t.file.size());
    append(t.file, make_record(p, footer));
  }
  return t;
}

void expect_payload(const result<record_frame>& frame, const std::vector<std::byte>& payload,
                    uint64_t offset) {
  ASSERT_TRUE(frame) << frame.error_status().to_string();
  EXPECT_EQ(frame->offset_bytes, offset);
  ASSERT_EQ(frame->payload.size(), payload.size());
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), frame->payload.begin()));
}

TEST(record_scanner, walks_all_records_then_end_of_stream) {
  for (const auto footer : {test_footer::smdebug, test_footer::payload_crc}) {
    const auto t = make_three(footer);
    record_scanner scanner(t.file, std::string(file_name));
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(scanner.offset_bytes(), t.offsets[i]);
      expect_payload(scanner.next(), t.payloads[i], t.offsets[i]);
    }
    EXPECT_EQ(scanner.offset_bytes(), t.file.size());
    for (int again = 0; again < 2; ++again) {
      auto end = scanner.next();
      ASSERT_FALSE(end);
      EXPECT_EQ(end.error_status().code(), error_code::end_of_stream);
    }
  }
}

TEST(record_scanner, empty_file_is_end_of_stream) {
  record_scanner scanner({}, std::string(file_name));
  auto end = scanner.next();
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error_status().code(), error_code::end_of_stream);
  EXPECT_EQ(scanner.offset_bytes(), 0u);
}

void expect_middle_lost(three_records t, std::size_t flip_at, const char* what) {
  SCOPED_TRACE(what);
  t.file[flip_at] ^= std::byte{0x20};
  record_scanner scanner(t.file, std::string(file_name));
  expect_payload(scanner.next(), t.payloads[0], t.offsets[0]);
  auto bad = scanner.next();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error_status().code(), error_code::data_loss);
  expect_names_file_and_offset(bad.error_status(), t.offsets[1]);
  EXPECT_EQ(scanner.offset_bytes(), t.offsets[2]) << bad.error_status().message();
  EXPECT_NE(bad.error_status().message().find("skipped to byte " + std::to_string(t.offsets[2])),
            std::string::npos)
      << bad.error_status().message();
  expect_payload(scanner.next(), t.payloads[2], t.offsets[2]);
  auto end = scanner.next();
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error_status().code(), error_code::end_of_stream);
}

TEST(record_scanner, corrupt_middle_record_costs_only_that_record) {
  // Payload byte flipped under a payload-CRC footer → bad footer.
  const auto crc = make_three(test_footer::payload_crc);
  expect_middle_lost(crc, crc.offsets[1] + 12 + 3, "payload corrupted, payload-CRC footer");
  // Footer byte flipped under the smdebug constant → bad footer.
  const auto smd = make_three(test_footer::smdebug);
  expect_middle_lost(smd, smd.offsets[2] - 2, "footer corrupted");
  // Length byte flipped → bad length CRC.
  expect_middle_lost(smd, smd.offsets[1] + 0, "length corrupted");
  // Length CRC byte flipped.
  expect_middle_lost(smd, smd.offsets[1] + 9, "length CRC corrupted");
}

TEST(record_scanner, corrupt_last_record_ends_cleanly) {
  auto t = make_three(test_footer::smdebug);
  t.file[t.file.size() - 1] ^= std::byte{0x01};
  record_scanner scanner(t.file, std::string(file_name));
  expect_payload(scanner.next(), t.payloads[0], t.offsets[0]);
  expect_payload(scanner.next(), t.payloads[1], t.offsets[1]);
  auto bad = scanner.next();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error_status().code(), error_code::data_loss);
  expect_names_file_and_offset(bad.error_status(), t.offsets[2]);
  EXPECT_EQ(scanner.offset_bytes(), t.file.size());
  EXPECT_EQ(scanner.next().error_status().code(), error_code::end_of_stream);
}

TEST(record_scanner, truncated_tail_keeps_cursor_and_succeeds_after_growth) {
  const auto t = make_three(test_footer::smdebug);
  // Every cut inside the third record: header cut, payload cut, footer cut.
  for (std::size_t cut = t.offsets[2] + 1; cut < t.file.size(); ++cut) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut));
    const std::vector<std::byte> partial(t.file.begin(),
                                         t.file.begin() + static_cast<std::ptrdiff_t>(cut));
    record_scanner scanner(partial, std::string(file_name));
    expect_payload(scanner.next(), t.payloads[0], t.offsets[0]);
    expect_payload(scanner.next(), t.payloads[1], t.offsets[1]);
    for (int retry = 0; retry < 2; ++retry) {
      auto cut_short = scanner.next();
      ASSERT_FALSE(cut_short);
      EXPECT_EQ(cut_short.error_status().code(), error_code::truncated_record);
      expect_names_file_and_offset(cut_short.error_status(), t.offsets[2]);
      EXPECT_EQ(scanner.offset_bytes(), t.offsets[2]);
    }
    // The file grew: the same scanner continues from its cursor.
    ASSERT_TRUE(scanner.set_file_bytes(t.file).ok());
    expect_payload(scanner.next(), t.payloads[2], t.offsets[2]);
    EXPECT_EQ(scanner.next().error_status().code(), error_code::end_of_stream);
  }
}

TEST(record_scanner, set_file_bytes_rejects_a_shorter_copy) {
  const auto t = make_three(test_footer::smdebug);
  record_scanner scanner(t.file, std::string(file_name));
  ASSERT_TRUE(scanner.next());
  ASSERT_TRUE(scanner.next());
  const status s = scanner.set_file_bytes(std::span(t.file).first(t.offsets[1]));
  EXPECT_EQ(s.code(), error_code::invalid_argument);
  EXPECT_EQ(scanner.offset_bytes(), t.offsets[2]);
  expect_payload(scanner.next(), t.payloads[2], t.offsets[2]);
}

TEST(record_scanner, corrupt_record_before_a_tail_being_written) {
  // [ok][corrupt][third cut short]: resync stops at the third record's valid header, so the
  // caller sees truncated_record there and can retry once the file grew.
  auto t = make_three(test_footer::smdebug);
  t.file[t.offsets[1] + 12 + 1] ^= std::byte{0x55};
  t.file[t.offsets[2] - 1] ^= std::byte{0x55};  // break the second record's footer
  const std::size_t cut = t.offsets[2] + 14;
  const std::vector<std::byte> partial(t.file.begin(),
                                       t.file.begin() + static_cast<std::ptrdiff_t>(cut));
  record_scanner scanner(partial, std::string(file_name));
  expect_payload(scanner.next(), t.payloads[0], t.offsets[0]);
  auto bad = scanner.next();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error_status().code(), error_code::data_loss);
  EXPECT_EQ(scanner.offset_bytes(), t.offsets[2]);
  auto cut_short = scanner.next();
  ASSERT_FALSE(cut_short);
  EXPECT_EQ(cut_short.error_status().code(), error_code::truncated_record);
  ASSERT_TRUE(scanner.set_file_bytes(t.file).ok());
  expect_payload(scanner.next(), t.payloads[2], t.offsets[2]);
}

TEST(record_scanner, random_garbage_never_crashes_or_loops) {
  std::mt19937 rng(20261122);
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE("seed 20261122, trial " + std::to_string(trial));
    std::vector<std::byte> file;
    const int n_records = static_cast<int>(rng() % 4);
    for (int r = 0; r < n_records; ++r) {
      std::vector<std::byte> payload(rng() % 40);
      for (auto& b : payload) b = static_cast<std::byte>(rng());
      append(file, make_record(payload, rng() % 2 ? test_footer::smdebug
                                                  : test_footer::payload_crc));
      const std::size_t junk = rng() % 6;
      for (std::size_t j = 0; j < junk; ++j) file.push_back(static_cast<std::byte>(rng()));
    }
    if (!file.empty() && rng() % 2) file[rng() % file.size()] ^= std::byte{0x10};
    record_scanner scanner(file, std::string(file_name));
    int steps = 0;
    uint64_t last_offset = 0;
    while (true) {
      ASSERT_LT(++steps, 1000);
      auto frame = scanner.next();
      if (frame) {
        EXPECT_GT(scanner.offset_bytes(), last_offset);
        last_offset = scanner.offset_bytes();
        continue;
      }
      const error_code code = frame.error_status().code();
      if (code == error_code::end_of_stream || code == error_code::truncated_record) break;
      ASSERT_EQ(code, error_code::data_loss) << frame.error_status().to_string();
      EXPECT_FALSE(frame.error_status().message().empty());
      EXPECT_GT(scanner.offset_bytes(), last_offset);
      last_offset = scanner.offset_bytes();
    }
  }
}

}  // namespace
}  // namespace trialstat::io

// SPDX-License-Identifier: Apache-2.0
// Robustness: random byte strings and single-byte corruptions / truncations of real records
// through parse_record, event_decoder and record_scanner. Nothing may crash; every failure is
// data_loss, truncated_record or unsupported_dtype with a message; every success is consistent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "tests/io/record_builder.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/decode/event_decoder.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/io/record_reader.hpp"

namespace trialstat::decode {
namespace {

using namespace trialstat::io;  // the framing and the file reader, used beside the decoder

using trialstat::testing::make_record;
using trialstat::testing::test_footer;

constexpr uint32_t seed = 0x5eed2026;

bool allowed_failure(const status& s) {
  return (s.code() == error_code::data_loss || s.code() == error_code::truncated_record ||
          s.code() == error_code::unsupported_dtype) &&
         !s.message().empty();
}

/// A successful decode must be self-consistent: views inside the payload or the scratch,
/// content size = elements x element size for numeric types.
void expect_consistent(const event_record& r, std::span<const std::byte> payload) {
  const auto inside = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    return n == 0 || (b >= payload.data() && b + n <= payload.data() + payload.size());
  };
  EXPECT_TRUE(inside(r.tag.data(), r.tag.size()));
  for (const auto& s : r.strings) EXPECT_TRUE(inside(s.data(), s.size()));
  if (!r.has_tensor) return;
  EXPECT_GE(r.num_elements, 0);
  if (r.type != dtype::string) {
    EXPECT_EQ(r.content.size(),
              static_cast<std::size_t>(r.num_elements) * dtype_size_bytes(r.type));
  }
}

void decode_and_check(event_decoder& decoder, std::span<const std::byte> payload,
                      const std::string& trace) {
  event_record r;
  const status s = decoder.decode(payload, r);
  if (s.ok()) {
    expect_consistent(r, payload);
  } else {
    EXPECT_TRUE(allowed_failure(s)) << trace << ": " << s.to_string();
  }
}

void frame_decode_and_check(event_decoder& decoder, std::span<const std::byte> bytes,
                            const std::string& trace) {
  auto frame = parse_record(bytes, 4242, "fuzz.tfevents");
  if (!frame) {
    const status s = frame.error_status();
    EXPECT_TRUE(allowed_failure(s)) << trace << ": " << s.to_string();
    EXPECT_NE(s.message().find("fuzz.tfevents: record at byte 4242"), std::string::npos)
        << trace << ": " << s.message();
    return;
  }
  EXPECT_LE(frame->size_bytes(), bytes.size()) << trace;
  decode_and_check(decoder, frame->payload, trace);
}

/// 2000 strings by default; $TRIALSTAT_FUZZ_ITERATIONS asks for a longer run.
int fuzz_iterations() {
  const char* env = std::getenv("TRIALSTAT_FUZZ_ITERATIONS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 2000;
}

TEST(robustness, random_byte_strings) {
  std::mt19937 rng(seed);
  event_decoder decoder;
  const int iterations = fuzz_iterations();
  for (int i = 0; i < iterations; ++i) {
    const std::string trace = "seed " + std::to_string(seed) + ", string " + std::to_string(i);
    std::vector<std::byte> bytes(rng() % 301);
    // Mix plain noise with protobuf-looking bytes (small field tags, short lengths).
    const bool structured = i % 2 == 1;
    for (auto& b : bytes) {
      b = static_cast<std::byte>(structured && rng() % 3 == 0 ? (rng() % 16) * 8 + rng() % 6
                                                              : rng() & 0xff);
    }
    frame_decode_and_check(decoder, bytes, trace);
    decode_and_check(decoder, bytes, trace + " (as payload)");
    // The same bytes correctly framed: framing passes, decoding must still be safe.
    const auto framed = make_record(bytes, i % 4 == 0 ? test_footer::payload_crc
                                                      : test_footer::smdebug);
    auto frame = parse_record(framed, 0, "fuzz.tfevents");
    ASSERT_TRUE(frame) << trace;
    decode_and_check(decoder, frame->payload, trace + " (framed)");
    record_scanner scanner(bytes, "fuzz.tfevents");
    for (int steps = 0;; ++steps) {
      ASSERT_LT(steps, 400) << trace;
      auto next = scanner.next();
      if (next) continue;
      const error_code code = next.error_status().code();
      if (code == error_code::end_of_stream || code == error_code::truncated_record) break;
      ASSERT_EQ(code, error_code::data_loss) << trace;
    }
  }
}

/// Real records: the golden dtypes trial's step 0 and 3 event files when present, else a
/// built-in copy of the FORMAT §11 record framed twice.
std::vector<std::vector<std::byte>> real_event_files() {
  std::vector<std::vector<std::byte>> files;
  if (const auto dir = trialstat::testing::shared_trials_dir()) {
    for (const char* rel : {"dtypes/events/000000000000/000000000000_worker_0.tfevents",
                            "dtypes/events/000000000003/000000000003_worker_0.tfevents"}) {
      std::vector<std::byte> bytes;
      auto size = read_file(*dir / rel, bytes);
      if (!size) continue;
      bytes.resize(*size);
      files.push_back(std::move(bytes));
    }
  }
  return files;
}

TEST(robustness, single_byte_corruptions_of_real_records) {
  auto files = real_event_files();
  if (files.empty()) GTEST_SKIP() << "golden trials absent";
  std::mt19937 rng(seed + 1);
  event_decoder decoder;
  int corruptions = 0, framing_caught = 0, decoder_caught = 0;
  for (const auto& file : files) {
    // Split into records with the scanner, then corrupt each record on its own.
    record_scanner scanner(file, "golden.tfevents");
    std::vector<std::vector<std::byte>> records;
    while (auto frame = scanner.next()) {
      records.emplace_back(frame->payload.data() - record_header_bytes,
                           frame->payload.data() + frame->payload.size() + record_footer_bytes);
    }
    ASSERT_FALSE(records.empty());
    for (std::size_t rec = 0; rec < records.size(); ++rec) {
      const auto& original = records[rec];
      // The payload re-framed with a payload-CRC footer: every payload corruption is caught.
      const auto crc_framed = make_record(
          std::span(original).subspan(record_header_bytes,
                                      original.size() - record_framing_bytes),
          test_footer::payload_crc);
      for (const auto* base : {&original, &crc_framed}) {
        for (std::size_t pos = 0; pos < base->size(); ++pos) {
          auto bytes = *base;
          const auto flip = static_cast<std::byte>(1u << (rng() % 8));
          bytes[pos] ^= flip;
          const std::string trace = "seed " + std::to_string(seed + 1) + ", record " +
                                    std::to_string(rec) + ", byte " + std::to_string(pos);
          ++corruptions;
          auto frame = parse_record(bytes, 0, "golden.tfevents");
          if (!frame) {
            EXPECT_TRUE(allowed_failure(frame.error_status())) << trace;
            ++framing_caught;
            continue;
          }
          EXPECT_FALSE(base == &crc_framed && pos >= record_header_bytes &&
                       pos < bytes.size() - record_footer_bytes)
              << trace << ": payload corruption passed a payload-CRC footer";
          event_record r;
          const status s = decoder.decode(frame->payload, r);
          if (!s.ok()) {
            EXPECT_TRUE(allowed_failure(s)) << trace << ": " << s.to_string();
            ++decoder_caught;
          } else {
            expect_consistent(r, frame->payload);
          }
        }
      }
      // Every truncation of the record.
      for (std::size_t cut = 0; cut < original.size(); ++cut) {
        auto frame = parse_record(std::span(original).first(cut), 0, "golden.tfevents");
        ASSERT_FALSE(frame) << "cut " << cut;
        EXPECT_EQ(frame.error_status().code(), error_code::truncated_record) << "cut " << cut;
      }
      // Every truncation of the payload alone (framing rebuilt around it).
      const auto payload = std::span(original).subspan(record_header_bytes,
                                                       original.size() - record_framing_bytes);
      for (std::size_t cut = 0; cut < payload.size(); ++cut) {
        event_record r;
        const status s = decoder.decode(payload.first(cut), r);
        if (!s.ok()) {
          EXPECT_TRUE(allowed_failure(s)) << "payload cut " << cut;
        }
      }
    }
  }
  std::cout << "[ robust   ] " << corruptions << " single-bit corruptions: " << framing_caught
            << " caught by framing, " << decoder_caught << " by the decoder\n";
  EXPECT_GT(framing_caught, 0);
  EXPECT_GT(decoder_caught, 0);
}

TEST(robustness, random_mutations_of_real_payloads) {
  auto files = real_event_files();
  if (files.empty()) GTEST_SKIP() << "golden trials absent";
  std::vector<std::vector<std::byte>> payloads;
  for (const auto& file : files) {
    record_scanner scanner(file, "golden.tfevents");
    while (auto frame = scanner.next()) {
      payloads.emplace_back(frame->payload.begin(), frame->payload.end());
    }
  }
  std::mt19937 rng(seed + 2);
  event_decoder decoder;
  const int iterations = fuzz_iterations() * 5;
  for (int i = 0; i < iterations; ++i) {
    auto bytes = payloads[rng() % payloads.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      const std::size_t pos = rng() % bytes.size();
      switch (rng() % 4) {
        case 0: bytes[pos] = static_cast<std::byte>(rng()); break;           // overwrite
        case 1: bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(pos)); break;  // delete
        case 2:                                                               // insert
          bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                       static_cast<std::byte>(rng()));
          break;
        default: bytes[pos] = static_cast<std::byte>(static_cast<unsigned>(bytes[pos]) + 1);
      }
    }
    decode_and_check(decoder, bytes,
                     "seed " + std::to_string(seed + 2) + ", mutation " + std::to_string(i));
  }
}

TEST(robustness, empty_file_scans_to_end_of_stream) {
  const auto dir = trialstat::testing::make_scratch_dir("robustness");
  const auto path = dir / "empty.tfevents";
  { std::ofstream touch(path); }
  std::vector<std::byte> bytes;
  auto size = read_file(path, bytes);
  ASSERT_TRUE(size);
  ASSERT_EQ(*size, 0u);
  record_scanner scanner(std::span<const std::byte>(bytes.data(), *size), path.string());
  auto next = scanner.next();
  ASSERT_FALSE(next);
  EXPECT_EQ(next.error_status().code(), error_code::end_of_stream);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trialstat::decode

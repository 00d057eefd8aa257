// SPDX-License-Identifier: Apache-2.0
// The statistics store's record packing (host/store/record_packing.hpp): every word step (the
// portable one, and SSSE3's where this CPU has it) packs byte for byte as a reference written
// from the format's description, unpacks every record back, and refuses every malformed blob
// with data_loss naming a byte offset.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "host/store/record_packing.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat {
namespace {

using bytes = std::vector<std::byte>;

void put_leb128(bytes& out, uint64_t value) {
  do {
    auto b = static_cast<uint8_t>(value & 0x7f);
    value >>= 7;
    out.push_back(std::byte{static_cast<uint8_t>(b | (value != 0 ? 0x80 : 0))});
  } while (value != 0);
}

/// The format, word by word and byte by byte: LEB128(length); per word a mask of its nonzero
/// bytes and those bytes; a run of n zero words as 0x00, LEB128(n - 1).
bytes pack_reference(const bytes& raw) {
  bytes out;
  put_leb128(out, raw.size());
  bytes padded = raw;
  padded.resize((raw.size() + 7) / 8 * 8, std::byte{0});
  const std::size_t words = padded.size() / 8;
  const auto zero_word = [&](std::size_t w) {
    for (std::size_t j = 0; j < 8; ++j) {
      if (padded[w * 8 + j] != std::byte{0}) return false;
    }
    return true;
  };
  for (std::size_t w = 0; w < words;) {
    if (zero_word(w)) {
      std::size_t run = 1;
      while (w + run < words && zero_word(w + run)) ++run;
      out.push_back(std::byte{0});
      put_leb128(out, run - 1);
      w += run;
      continue;
    }
    uint8_t mask = 0;
    for (std::size_t j = 0; j < 8; ++j) {
      if (padded[w * 8 + j] != std::byte{0}) mask = static_cast<uint8_t>(mask | (1u << j));
    }
    out.push_back(std::byte{mask});
    for (std::size_t j = 0; j < 8; ++j) {
      if (padded[w * 8 + j] != std::byte{0}) out.push_back(padded[w * 8 + j]);
    }
    ++w;
  }
  return out;
}

struct packing_path {
  const char* name;
  void (*pack)(std::span<const std::byte>, std::vector<std::byte>&);
  status (*unpack)(std::span<const std::byte>, std::vector<std::byte>&);
};

/// The paths this machine runs: the portable one always, SSSE3's where the CPU has it, and the
/// public entry points (whichever they picked).
std::vector<packing_path> paths() {
  std::vector<packing_path> out{{"portable", store::detail::pack_record_portable, store::detail::unpack_record_portable},
                                {"public", store::pack_record, store::unpack_record}};
  if (store::detail::packing_ssse3_available()) {
    out.push_back({"ssse3", store::detail::pack_record_ssse3, store::detail::unpack_record_ssse3});
  }
  return out;
}

/// Packed by `path` into a reused buffer and by a fresh one: the reference's bytes; unpacked into
/// a reused buffer (which held a longer record) and a fresh one: `raw` again.
void expect_round_trip(const packing_path& path, const bytes& raw, bytes& packed_reused, bytes& raw_reused,
                       const std::string& what) {
  const bytes reference = pack_reference(raw);
  bytes packed;
  path.pack(raw, packed);
  EXPECT_EQ(packed, reference) << path.name << ": " << what;
  path.pack(raw, packed_reused);
  EXPECT_EQ(packed_reused, reference) << path.name << ": " << what;
  bytes back;
  ASSERT_TRUE(path.unpack(reference, back).ok()) << path.name << ": " << what;
  EXPECT_EQ(back, raw) << path.name << ": " << what;
  ASSERT_TRUE(path.unpack(reference, raw_reused).ok()) << path.name << ": " << what;
  EXPECT_EQ(raw_reused, raw) << path.name << ": " << what;
}

TEST(StoreRecordPacking, EveryPathPacksAsTheFormatSaysAndBack) {
  ASSERT_GE(paths().size(), 2u);
  for (const packing_path& path : paths()) {
    std::mt19937 random(7);
    bytes packed_reused;
    bytes raw_reused;
    // Sparse records of every length up to a few words (the padded last word), then longer.
    for (int round = 0; round < 600; ++round) {
      bytes raw(static_cast<std::size_t>(round < 200 ? round % 41 : random() % 5000));
      const unsigned density = 1 + round % 4;  // one byte in 2..5 nonzero
      for (auto& b : raw) {
        b = random() % (density + 1) == 0 ? static_cast<std::byte>(1 + random() % 255) : std::byte{0};
      }
      expect_round_trip(path, raw, packed_reused, raw_reused, "round " + std::to_string(round));
    }
    // Every mask of a word: the 256 ways its bytes can be zero, each between literal words, at
    // the end (as the padded last word, every length), and after a zero run.
    for (unsigned mask = 0; mask < 256; ++mask) {
      for (std::size_t cut = 1; cut <= 8; ++cut) {
        bytes raw(8, std::byte{0xA5});
        raw.insert(raw.end(), 16, std::byte{0});
        for (std::size_t j = 0; j < 8; ++j) raw.push_back((mask >> j) & 1 ? std::byte{static_cast<uint8_t>(j + 1)} : std::byte{0});
        raw.resize(raw.size() - 8 + cut);
        expect_round_trip(path, raw, packed_reused, raw_reused, "mask " + std::to_string(mask) + " cut " + std::to_string(cut));
      }
    }
    // Zero runs around the one-byte count (128 words) and longer, between literals and at
    // either end; all-zero records.
    for (const std::size_t run : {1, 2, 127, 128, 129, 300, 20000}) {
      for (const bool literal_before : {false, true}) {
        bytes raw;
        if (literal_before) raw.push_back(std::byte{9});
        raw.insert(raw.end(), run * 8, std::byte{0});
        raw.push_back(std::byte{3});
        raw.insert(raw.end(), run * 8 + 3, std::byte{0});
        expect_round_trip(path, raw, packed_reused, raw_reused, "zero run " + std::to_string(run));
      }
    }
    expect_round_trip(path, {}, packed_reused, raw_reused, "empty");
    const bytes zeros(12000, std::byte{0});  // a log histogram's empty bins
    expect_round_trip(path, zeros, packed_reused, raw_reused, "zeros");
    bytes packed_zeros;
    path.pack(zeros, packed_zeros);
    EXPECT_LE(packed_zeros.size(), 5u) << path.name;  // length, then one run: 2 + 1 + 2 bytes
  }
}

TEST(StoreRecordPacking, MalformedBlobsAreDataLossNamingTheByte) {
  const auto blob = [](std::initializer_list<int> values) {
    bytes out;
    for (const int v : values) out.push_back(std::byte{static_cast<uint8_t>(v)});
    return out;
  };
  struct malformed {
    bytes packed;
    const char* what;
  };
  const std::vector<malformed> cases{
      {blob({}), "no valid length"},
      {blob({0x80}), "no valid length"},                                       // the length cut off
      {blob({0x80, 0x80, 0x80, 0x80, 0x80, 0x01}), "no valid length"},         // 2^35 bytes
      {blob({16}), "the blob ends before word 0 of 2"},
      {blob({16, 0x01, 7}), "the blob ends before word 1 of 2"},
      {blob({16, 0x03, 7}), "word 0 cut off"},                                 // two bytes promised
      {blob({16, 0x00, 2}), "a zero run past the record's end"},               // three words of two
      {blob({16, 0x00, 0x80}), "a zero run past the record's end"},            // its count cut off
      {blob({8, 0x01, 7, 0x01}), "bytes after the last word"},
      {blob({0, 0x00, 0x00}), "bytes after the last word"},
      {blob({3, 0x08, 7}), "a nonzero byte past the record's length"},          // byte 3 of 3
  };
  for (const packing_path& path : paths()) {
    for (const malformed& c : cases) {
      bytes raw(100, std::byte{0x55});  // a reused buffer with other bytes in it
      const status s = path.unpack(c.packed, raw);
      EXPECT_EQ(s.code(), error_code::data_loss) << path.name << ": " << c.what;
      EXPECT_NE(s.message().find(c.what), std::string::npos) << path.name << ": " << s.message();
      EXPECT_NE(s.message().find("at byte "), std::string::npos) << path.name << ": " << s.message();
    }
  }
}

}  // namespace
}  // namespace trialstat

// SPDX-License-Identifier: Apache-2.0
// The request plan of S3 range reads: which parts fetch a set of record ranges, and how the
// fetched parts land back in the reader's buffer (compared with a naive byte-by-byte reference).
#include "host/io/range_coalescing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace trialstat::io::detail {
namespace {

std::byte object_byte(uint64_t offset) { return static_cast<std::byte>((offset * 131 + 7) & 0xff); }

/// Fetch `plan`'s parts from a virtual object of `object_size` bytes (shorter parts at its end)
/// and scatter them; compare with copying each range byte by byte.
void check_round_trip(const std::vector<byte_range>& ranges, uint64_t gap, uint64_t part, uint64_t object_size) {
  const coalesced_reads plan = coalesce_ranges(ranges, gap, part);
  std::vector<std::vector<std::byte>> parts;
  std::vector<const std::byte*> data;
  std::vector<uint64_t> received;
  for (const coalesced_part& p : plan.parts) {
    ASSERT_LE(p.length_bytes, part);
    const uint64_t have = p.offset_bytes < object_size ? std::min(p.length_bytes, object_size - p.offset_bytes) : 0;
    auto& bytes = parts.emplace_back(p.length_bytes, std::byte{0xEE});
    for (uint64_t i = 0; i < have; ++i) bytes[i] = object_byte(p.offset_bytes + i);
    received.push_back(have);
  }
  for (const auto& p : parts) data.push_back(p.data());
  uint64_t total = 0;
  for (const auto& r : ranges) total += r.length_bytes;
  std::vector<std::byte> out(total, std::byte{0x55});
  std::vector<uint64_t> available(ranges.size(), 12345);
  scatter_parts(plan, data, received, out.data(), available);
  uint64_t cursor = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const byte_range& r = ranges[i];
    const uint64_t expected = r.offset_bytes < object_size ? std::min(r.length_bytes, object_size - r.offset_bytes) : 0;
    EXPECT_EQ(available[i], expected) << "range " << i;
    for (uint64_t b = 0; b < expected; ++b) {
      ASSERT_EQ(out[cursor + b], object_byte(r.offset_bytes + b)) << "range " << i << " byte " << b;
    }
    cursor += r.length_bytes;
  }
  // When the parts back to back already are the layout, the packed buffer holds every range's
  // bytes where `out` does, and scattering without a copy gives the same availability.
  if (packed_parts_are_read_layout(plan)) {
    const std::vector<uint64_t> offsets = packed_part_offsets(plan);
    std::vector<std::byte> packed;
    for (const auto& part_bytes : parts) packed.insert(packed.end(), part_bytes.begin(), part_bytes.end());
    std::vector<uint64_t> in_place(ranges.size(), 777);
    scatter_parts(plan, data, received, nullptr, in_place);
    EXPECT_EQ(in_place, available);
    cursor = 0;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      for (uint64_t b = 0; b < available[i]; ++b) {
        ASSERT_EQ(packed[cursor + b], out[cursor + b]) << "in place: range " << i << " byte " << b;
      }
      cursor += ranges[i].length_bytes;
    }
    ASSERT_EQ(offsets.size(), plan.parts.size());
  }
  // Parts are ascending and disjoint.
  for (std::size_t p = 1; p < plan.parts.size(); ++p) {
    EXPECT_LE(plan.parts[p - 1].offset_bytes + plan.parts[p - 1].length_bytes, plan.parts[p].offset_bytes);
  }
}

TEST(RangeCoalescing, MergesRangesWithinTheGap) {
  // [0,100) and [150,250): gap 50 <= 64 -> one part [0,250); [1000,1100): a part of its own.
  const std::vector<byte_range> ranges = {{0, 100}, {150, 100}, {1000, 100}};
  const coalesced_reads plan = coalesce_ranges(ranges, 64, 1 << 20);
  ASSERT_EQ(plan.parts.size(), 2u);
  EXPECT_EQ(plan.parts[0].offset_bytes, 0u);
  EXPECT_EQ(plan.parts[0].length_bytes, 250u);
  EXPECT_EQ(plan.parts[1].offset_bytes, 1000u);
  EXPECT_EQ(plan.parts[1].length_bytes, 100u);
  ASSERT_EQ(plan.slices.size(), 3u);
  EXPECT_EQ(plan.slices[1].part_offset_bytes, 150u);
  EXPECT_EQ(plan.slices[1].out_offset_bytes, 100u);
  EXPECT_EQ(plan.slices[2].out_offset_bytes, 200u);
}

TEST(RangeCoalescing, GapZeroKeepsTouchingRangesTogetherOnly) {
  const std::vector<byte_range> ranges = {{0, 10}, {10, 10}, {21, 10}};
  const coalesced_reads plan = coalesce_ranges(ranges, 0, 1 << 20);
  ASSERT_EQ(plan.parts.size(), 2u);
  EXPECT_EQ(plan.parts[0].length_bytes, 20u);
}

TEST(RangeCoalescing, SplitsLongPartsAndRangesAcrossThem) {
  // One 10,000-byte record, parts of 4096: three parts, the record in three slices.
  const std::vector<byte_range> ranges = {{100, 10000}};
  const coalesced_reads plan = coalesce_ranges(ranges, 0, 4096);
  ASSERT_EQ(plan.parts.size(), 3u);
  EXPECT_EQ(plan.parts[2].length_bytes, 10000u - 2 * 4096u);
  ASSERT_EQ(plan.slices.size(), 3u);
  EXPECT_EQ(plan.slices[1].out_offset_bytes, 4096u);
  check_round_trip(ranges, 0, 4096, 20000);
}

TEST(RangeCoalescing, UnsortedOverlappingAndEmptyRanges) {
  const std::vector<byte_range> ranges = {{500, 50}, {0, 0}, {520, 100}, {10, 20}, {500, 50}};
  check_round_trip(ranges, 16, 64, 4096);
  const coalesced_reads plan = coalesce_ranges(ranges, 16, 1 << 20);
  for (const auto& s : plan.slices) EXPECT_NE(s.range, 1u) << "an empty range gets no slice";
}

TEST(RangeCoalescing, RangesPastTheEndOfTheObjectAreShort) {
  // The object has 1000 bytes: [900,1100) has 100, [2000,2010) none.
  check_round_trip({{900, 200}, {2000, 10}, {0, 16}}, 1 << 16, 1 << 20, 1000);
  check_round_trip({{900, 200}, {2000, 10}, {0, 16}}, 0, 64, 1000);
}

TEST(RangeCoalescing, OffsetsNearTwoToThe64DoNotWrap) {
  constexpr uint64_t max = std::numeric_limits<uint64_t>::max();
  const std::vector<byte_range> ranges = {{max - 10, 100}, {0, 8}};
  const coalesced_reads plan = coalesce_ranges(ranges, 1 << 16, 1 << 20);
  ASSERT_EQ(plan.parts.size(), 2u);
  for (const auto& p : plan.parts) {
    EXPECT_GE(p.offset_bytes + p.length_bytes, p.offset_bytes) << "part end wrapped";
  }
  uint64_t sliced = 0;
  for (const auto& s : plan.slices) sliced += s.range == 0 ? s.length_bytes : 0;
  EXPECT_EQ(sliced, 10u) << "the range is cut at 2^64 - 1";
}

bool packed_in_place(const std::vector<byte_range>& ranges, uint64_t gap, uint64_t part) {
  return packed_parts_are_read_layout(coalesce_ranges(ranges, gap, part));
}

TEST(RangeCoalescing, PackedPartsAreTheReadLayoutOnlyWithoutGapsOrDisorder) {
  // Back-to-back records (what `stats` reads of an event file), split into parts: in place.
  const std::vector<byte_range> records = {{40, 1000}, {1040, 5000}, {6040, 300}};
  EXPECT_TRUE(packed_parts_are_read_layout(coalesce_ranges(records, 64, 1 << 20)));
  EXPECT_TRUE(packed_parts_are_read_layout(coalesce_ranges(records, 64, 1024)));
  EXPECT_EQ(packed_part_offsets(coalesce_ranges(records, 64, 1024)),
            (std::vector<uint64_t>{0, 1024, 2048, 3072, 4096, 5120, 6144}));
  check_round_trip(records, 64, 1024, 8000);
  // Far-apart ranges are separate parts, still back to back: in place.
  EXPECT_TRUE(packed_in_place({{0, 100}, {100000, 50}}, 64, 1 << 20));
  // A part that spans a gap between two ranges holds bytes the reader did not ask for.
  EXPECT_FALSE(packed_in_place({{0, 100}, {150, 100}}, 64, 1 << 20));
  // Out of order, or overlapping: the read's layout is not the object's order.
  EXPECT_FALSE(packed_in_place({{1000, 10}, {0, 10}}, 0, 1 << 20));
  EXPECT_FALSE(packed_in_place({{0, 100}, {50, 100}}, 64, 1 << 20));
  EXPECT_FALSE(packed_in_place({{0, 100}, {0, 100}}, 64, 1 << 20));
}

TEST(RangeCoalescing, RandomRangesRoundTrip) {
  const unsigned seed = 20261123;
  std::mt19937_64 random(seed);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<byte_range> ranges(1 + random() % 20);
    for (auto& r : ranges) r = {random() % 5000, random() % 700};
    const uint64_t gap = random() % 300;
    const uint64_t part = 1 + random() % 2000;
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " trial " << trial);
    check_round_trip(ranges, gap, part, 1000 + random() % 5000);
  }
}

}  // namespace
}  // namespace trialstat::io::detail

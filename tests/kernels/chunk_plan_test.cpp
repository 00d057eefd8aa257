// SPDX-License-Identifier: Apache-2.0
// The chunk arithmetic of the segmented CUDA launchers (kernels/common/chunk_plan.hpp), run on
// the CPU: chunk counts and their bound, chunk → segment mapping, chunk element ranges (tails,
// empty segments, 2^31+ element segments as index arithmetic), the per-launch chunk size, and
// chunk partial results merged as the CUDA merge kernel merges them, against the CPU twin of
// the whole segment for every dtype and unaligned offsets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/chunk_plan.hpp"
#include "kernels/moments/moments_cpu.hpp"
#include "kernels/moments/moments_op.hpp"
#include "tests/reference/expect_stats.hpp"
#include "tests/reference/reference_stats.hpp"
#include "tests/support/record_equality.hpp"

namespace trialstat::kernels {
namespace {

/// Walks every chunk of `segments` as the persistent grid does and checks that the chunks of
/// each segment tile [0, n) in order, and none belongs to an empty segment.
void expect_chunks_tile(const std::vector<stats::segment>& segments, int64_t chunk_elements) {
  std::vector<int64_t> starts;
  host_chunk_starts(segments, chunk_elements, starts);
  const auto n = static_cast<int64_t>(segments.size());
  int64_t total_elements = 0;
  for (const auto& s : segments) total_elements += s.num_elements;
  ASSERT_LE(starts[segments.size()], max_chunks(total_elements, n, chunk_elements));
  std::vector<int64_t> next(segments.size(), 0);
  for (int64_t chunk = 0; chunk < starts[segments.size()]; ++chunk) {
    const int64_t s = find_segment(starts.data(), n, chunk);
    ASSERT_GE(s, 0);
    ASSERT_LT(s, n);
    ASSERT_LE(starts[static_cast<std::size_t>(s)], chunk);
    ASSERT_LT(chunk, starts[static_cast<std::size_t>(s) + 1]);
    const int64_t elements = segments[static_cast<std::size_t>(s)].num_elements;
    ASSERT_GT(elements, 0) << "an empty segment got a chunk";
    const element_range r = chunk_range(chunk, starts[static_cast<std::size_t>(s)], elements, chunk_elements);
    ASSERT_EQ(r.begin, next[static_cast<std::size_t>(s)]);
    ASSERT_LT(r.begin, r.end);
    ASSERT_LE(r.end - r.begin, chunk_elements);
    ASSERT_LE(r.end, elements);
    next[static_cast<std::size_t>(s)] = r.end;
  }
  for (std::size_t s = 0; s < segments.size(); ++s) EXPECT_EQ(next[s], segments[s].num_elements);
}

TEST(chunk_plan, ChunkCountsAreExactWithoutOverflow) {
  EXPECT_EQ(chunks_of(0, 2048), 0);
  EXPECT_EQ(chunks_of(-5, 2048), 0);
  EXPECT_EQ(chunks_of(1, 2048), 1);
  EXPECT_EQ(chunks_of(2047, 2048), 1);
  EXPECT_EQ(chunks_of(2048, 2048), 1);
  EXPECT_EQ(chunks_of(2049, 2048), 2);
  constexpr int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(chunks_of(big, 65536), big / 65536 + 1);
  EXPECT_EQ(chunks_of(int64_t{1} << 31, 65536), int64_t{1} << 15);
  EXPECT_EQ(chunks_of((int64_t{1} << 31) + 1, 65536), (int64_t{1} << 15) + 1);
}

TEST(chunk_plan, RandomBatchesTileWithTailsAndEmptySegments) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<stats::segment> segments;
    const int count = static_cast<int>(rng() % 20);
    for (int i = 0; i < count; ++i) {
      const int64_t n = rng() % 4 == 0 ? 0 : static_cast<int64_t>(rng() % 20000);
      segments.push_back({rng() % 1000, n, dtype::float32});
    }
    for (int64_t chunk : {int64_t{7}, int64_t{2048}, int64_t{4096}, int64_t{65536}}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " chunk " + std::to_string(chunk));
      expect_chunks_tile(segments, chunk);
    }
  }
}

TEST(chunk_plan, SegmentsOfTwoToThe31ElementsAndMore) {
  // Index arithmetic only (no data): element counts around and far past 2^31 and 2^32.
  const std::vector<int64_t> sizes = {0,
                                      (int64_t{1} << 31) - 1,
                                      int64_t{1} << 31,
                                      (int64_t{1} << 31) + 1,
                                      5,
                                      (int64_t{1} << 33) + 12345,
                                      0,
                                      (int64_t{1} << 44) + 3};
  std::vector<stats::segment> segments;
  for (int64_t n : sizes) segments.push_back({0, n, dtype::uint8});
  for (int64_t chunk : {int64_t{2048}, int64_t{65536}}) {
    std::vector<int64_t> starts;
    host_chunk_starts(segments, chunk, starts);
    int64_t total_elements = 0;
    for (int64_t n : sizes) total_elements += n;
    EXPECT_LE(starts.back(), max_chunks(total_elements, static_cast<int64_t>(sizes.size()), chunk));
    if (chunk == 2048) {
      EXPECT_GT(starts.back(), int64_t{INT32_MAX});  // chunk numbers past int32
    }
    const auto n = static_cast<int64_t>(segments.size());
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      if (sizes[s] == 0) continue;
      const int64_t first = starts[s];
      const int64_t last = starts[s + 1] - 1;
      EXPECT_EQ(find_segment(starts.data(), n, first), static_cast<int64_t>(s));
      EXPECT_EQ(find_segment(starts.data(), n, last), static_cast<int64_t>(s));
      EXPECT_EQ(find_segment(starts.data(), n, first + (last - first) / 2), static_cast<int64_t>(s));
      const element_range head = chunk_range(first, first, sizes[s], chunk);
      EXPECT_EQ(head.begin, 0);
      EXPECT_EQ(head.end, std::min(chunk, sizes[s]));
      const element_range tail = chunk_range(last, first, sizes[s], chunk);
      EXPECT_EQ(tail.end, sizes[s]);
      EXPECT_EQ(tail.begin, (last - first) * chunk);
      EXPECT_GT(tail.end - tail.begin, 0);
      EXPECT_LE(tail.end - tail.begin, chunk);
    }
  }
}

TEST(chunk_plan, ChunkSizeFillsTheResidentBlocks) {
  constexpr int64_t tile = 2048;
  // An H100: 132 SMs × 8 blocks.
  const int64_t blocks = 132 * 8;
  EXPECT_EQ(choose_chunk_elements(0, blocks, tile), tile);
  EXPECT_EQ(choose_chunk_elements(4 << 20, blocks, tile), tile);  // 16 MiB of float32
  EXPECT_EQ(choose_chunk_elements(int64_t{1} << 32, blocks, tile), max_chunk_elements);
  int64_t previous = 0;
  for (int64_t total = 1; total < (int64_t{1} << 40); total = total * 3 + 1) {
    for (int64_t resident : {int64_t{1}, int64_t{64}, blocks, int64_t{100000}}) {
      const int64_t c = choose_chunk_elements(total, resident, tile);
      EXPECT_GE(c, tile);
      EXPECT_LE(c, max_chunk_elements);
      EXPECT_EQ(c % tile, 0);
      EXPECT_EQ(c & (c - 1), 0) << c << " is a power of two";
      EXPECT_EQ(max_chunk_elements % c, 0);
      // Enough chunks for every resident block twice, unless the chunk is already the tile.
      if (c > tile) {
        EXPECT_GE(chunks_of(total, c), resident);
      }
      if (resident == blocks) {
        EXPECT_GE(c, previous);  // never smaller for a larger batch
        previous = c;
      }
    }
  }
  // A granule that does not divide the largest chunk falls back to it.
  EXPECT_EQ(choose_chunk_elements(1 << 20, blocks, 3000), max_chunk_elements);
}

TEST(chunk_plan, ChunkPartialsMergedEqualTheCpuTwinForEveryDtype) {
  // Each chunk's record computed by the CPU twin, merged in chunk order with merge_moments
  // (what the CUDA merge kernel does with the chunk kernel's partials), equals the twin's
  // record of the whole segment: counts and extremes exactly, sums at the reference tolerance.
  uint64_t seed = 77;
  for (dtype type : reference::real_dtypes()) {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{2047}, int64_t{2048}, int64_t{2049},
                      int64_t{9000}}) {
      for (uint64_t lead : {uint64_t{0}, uint64_t{1}, uint64_t{3}}) {
        const std::string context = std::string(dtype_name(type)) + " n " + std::to_string(n) +
                                    " offset " + std::to_string(lead);
        SCOPED_TRACE(context);
        const auto data = reference::make_tensor_bytes(type, n, reference::data_mode::special, seed++);
        std::vector<std::byte> buffer(lead, std::byte{0x7f});
        buffer.insert(buffer.end(), data.begin(), data.end());
        const stats::segment whole{lead, n, type};
        stats::moments expected;
        ASSERT_TRUE(compute_moments_cpu(buffer.data(), {&whole, 1}, {&expected, 1}).ok());
        const int64_t chunk = 2048;
        std::vector<int64_t> starts;
        host_chunk_starts({&whole, 1}, chunk, starts);
        moments_state acc = moments_identity();
        for (int64_t c = 0; c < starts[1]; ++c) {
          const element_range r = chunk_range(c, starts[0], n, chunk);
          const stats::segment part{lead + static_cast<uint64_t>(r.begin) * dtype_size_bytes(type),
                                    r.end - r.begin, type};
          stats::moments m;
          ASSERT_TRUE(compute_moments_cpu(buffer.data(), {&part, 1}, {&m, 1}).ok());
          acc = merge_moments(acc, load_moments(m));
        }
        stats::moments merged;
        store_moments(acc, &merged);
        testing::expect_same_moment_counts(merged, expected);
        if (expected.has_finite()) {
          EXPECT_EQ(std::signbit(merged.min), std::signbit(expected.min));
          EXPECT_EQ(merged.min, expected.min);
          EXPECT_EQ(std::signbit(merged.max), std::signbit(expected.max));
          EXPECT_EQ(merged.max, expected.max);
          EXPECT_EQ(merged.max_abs, expected.max_abs);
          const auto values = reference::element_values(buffer.data() + lead, type, n);
          reference::expect_moments_match(merged, reference::compute_moments_ref(values), context);
        }
      }
    }
  }
}

TEST(chunk_plan, PoisonIsStickyThroughMerges) {
  moments_state good = moments_identity();
  good.count = 10;
  const moments_state poison = moments_poison();
  EXPECT_TRUE(is_poisoned(merge_moments(good, poison)));
  EXPECT_TRUE(is_poisoned(merge_moments(poison, good)));
  // Many merged poisoned chunks stay −1, never −k.
  moments_state acc = moments_identity();
  for (int k = 0; k < 5; ++k) acc = merge_moments(acc, poison);
  EXPECT_EQ(acc.count, poison_count);
  stats::moments record;
  store_moments(merge_moments(acc, good), &record);
  EXPECT_TRUE(is_poisoned(record));
  EXPECT_EQ(merge_counts(merge_counts(-1, -1), 7), -1);
  EXPECT_EQ(merge_counts(3, 4), 7);
  const int64_t cells[3] = {0, 5, -1};
  EXPECT_TRUE(counts_poisoned(cells, 3));
  EXPECT_FALSE(counts_poisoned(cells, 2));
}

}  // namespace
}  // namespace trialstat::kernels

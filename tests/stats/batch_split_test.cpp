// SPDX-License-Identifier: Apache-2.0
// How the CUDA executor walks a batch with bounded buffers, checked on the CPU: splitting into
// pieces, packing into groups, axis-0 rectangles, and split-and-merge of every statistic —
// pieces computed by the CPU twins and merged with the executor's merge code must equal the
// whole-tensor results (counts and extremes exactly, sums within the documented tolerance).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "host/stats/batch_split.hpp"
#include "tests/reference/expect_stats.hpp"
#include "tests/reference/reference_stats.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"

namespace trialstat::stats::detail {
namespace {

using reference::data_mode;

TEST(batch_split, PiecesCoverSegmentsInOrder) {
  const split_limits limits{4096, 1000, 0};
  const uint64_t piece_bytes = max_piece_bytes(limits);
  EXPECT_EQ(piece_bytes, 4080u);
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<stats::segment> segments;
    uint64_t offset = rng() % 7;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      const auto& dtypes = reference::real_dtypes();
      const dtype t = dtypes[rng() % dtypes.size()];
      const int64_t elements = static_cast<int64_t>(rng() % 5) == 0 ? 0 : static_cast<int64_t>(rng() % 3000);
      segments.push_back({offset, elements, t});
      offset += static_cast<uint64_t>(elements) * dtype_size_bytes(t) + rng() % 50;
    }
    if (trial % 5 == 0) std::reverse(segments.begin(), segments.end());  // unsorted input
    std::vector<batch_piece> pieces;
    ASSERT_TRUE(split_segments(segments, limits, pieces).ok());
    // Sorted by offset; each segment covered exactly, in order, by whole elements.
    for (std::size_t i = 1; i < pieces.size(); ++i) {
      ASSERT_LE(pieces[i - 1].offset_bytes, pieces[i].offset_bytes);
    }
    std::vector<int64_t> next(segments.size(), 0);
    std::vector<uint32_t> seen(segments.size(), 0);
    for (const batch_piece& p : pieces) {
      const stats::segment& s = segments[p.segment];
      const uint64_t size = dtype_size_bytes(s.type);
      EXPECT_EQ(p.element_begin, next[p.segment]);
      EXPECT_EQ(p.piece_index, seen[p.segment]);
      EXPECT_EQ(p.offset_bytes, s.offset_bytes + static_cast<uint64_t>(p.element_begin) * size);
      EXPECT_EQ(p.size_bytes, static_cast<uint64_t>(p.element_count) * size);
      EXPECT_LE(p.size_bytes, piece_bytes);
      if (!p.whole() && p.piece_index + 1 < p.piece_count) {
        EXPECT_EQ(p.size_bytes % 16, 0u);
      }
      next[p.segment] += p.element_count;
      seen[p.segment] += 1;
    }
    for (std::size_t s = 0; s < segments.size(); ++s) {
      EXPECT_EQ(next[s], segments[s].num_elements);
      const bool needs_split = static_cast<uint64_t>(segments[s].num_elements) *
                                   dtype_size_bytes(segments[s].type) > piece_bytes;
      EXPECT_EQ(seen[s] > 1, needs_split);
    }
  }
}

TEST(batch_split, GroupsRespectEveryLimit) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<stats::segment> segments;
    uint64_t offset = rng() % 64;
    const int n = 1 + static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) {
      const int64_t elements = static_cast<int64_t>(rng() % (i % 17 == 0 ? 5000 : 60));
      segments.push_back({offset, elements, dtype::float32});
      offset += static_cast<uint64_t>(elements) * 4 + rng() % 40;
    }
    const split_limits limits{1024 + rng() % 8192, 1 + static_cast<uint32_t>(rng() % 40),
                              trial % 2 == 0 ? 0 : 600 + rng() % 2000};
    std::vector<batch_piece> pieces;
    ASSERT_TRUE(split_segments(segments, limits, pieces).ok());
    std::vector<uint64_t> results(pieces.size());
    for (auto& r : results) r = 100 + rng() % 500;
    const uintptr_t base = 4096 + rng() % 16;
    std::vector<piece_group> groups;
    group_pieces(pieces, results, base, limits, groups);
    uint32_t expected_first = 0;
    for (const piece_group& g : groups) {
      ASSERT_EQ(g.first, expected_first);
      ASSERT_GE(g.count, 1u);
      expected_first += g.count;
      EXPECT_LE(g.count, limits.max_pieces);
      EXPECT_LE(g.span_bytes(), limits.max_span_bytes);
      uint64_t result_sum = 0;
      for (uint32_t i = g.first; i < g.first + g.count; ++i) {
        EXPECT_GE(pieces[i].offset_bytes, g.host_begin);
        EXPECT_LE(pieces[i].offset_bytes + pieces[i].size_bytes, g.host_end);
        result_sum += results[i];
      }
      if (limits.max_result_bytes != 0 && g.count > 1) {
        EXPECT_LE(result_sum, limits.max_result_bytes);
      }
      // The group starts 16-aligned in memory whenever it can.
      if (g.host_begin >= 16) {
        EXPECT_EQ((base + g.host_begin) % 16, 0u);
      }
    }
    EXPECT_EQ(expected_first, pieces.size());
  }
}

TEST(batch_split, TinyLimitsAreRejected) {
  std::vector<batch_piece> pieces;
  const stats::segment seg{0, 10, dtype::float32};
  EXPECT_EQ(split_segments({&seg, 1}, split_limits{16, 10, 0}, pieces).code(), error_code::invalid_argument);
  EXPECT_EQ(split_segments({&seg, 1}, split_limits{4096, 0, 0}, pieces).code(), error_code::invalid_argument);
  const stats::segment bad{0, -1, dtype::float32};
  EXPECT_EQ(split_segments({&bad, 1}, split_limits{}, pieces).code(), error_code::invalid_argument);
}

TEST(batch_split, Axis0RegionsTileTheRangeContiguously) {
  for (int64_t nodes = 1; nodes <= 7; ++nodes) {
    const int64_t total = nodes * 5;
    for (int64_t begin = 0; begin <= total; ++begin) {
      for (int64_t count = 0; begin + count <= total; ++count) {
        axis0_region regions[3];
        const int n = axis0_regions(nodes, begin, count, regions);
        ASSERT_LE(n, 3);
        int64_t cursor = begin;
        for (int r = 0; r < n; ++r) {
          const axis0_region& g = regions[r];
          ASSERT_EQ(g.element_begin(nodes), cursor) << nodes << " " << begin << " " << count;
          ASSERT_GE(g.num_rows, 1);
          ASSERT_GE(g.num_nodes, 1);
          ASSERT_LE(g.node_begin + g.num_nodes, nodes);
          if (g.num_rows > 1) {
            ASSERT_TRUE(g.node_begin == 0 && g.num_nodes == nodes);  // whole rows
          }
          cursor += g.num_rows * g.num_nodes;
        }
        ASSERT_EQ(cursor, begin + count);
      }
    }
  }
}

/// A tensor split by the executor's rules, each statistic computed per piece with the CPU
/// twins and merged as the executor merges: equal to the whole tensor's.
struct split_case {
  dtype type;
  int64_t rows;
  int64_t nodes;
  data_mode mode;
  uint64_t span_bytes;
};

void check_split_case(const split_case& c, uint64_t seed) {
  const int64_t n = c.rows * c.nodes;
  const std::string context = std::string(dtype_name(c.type)) + " [" + std::to_string(c.rows) +
                              "," + std::to_string(c.nodes) + "] " + reference::to_string(c.mode) +
                              " span " + std::to_string(c.span_bytes) + " seed " + std::to_string(seed);
  SCOPED_TRACE(context);
  const uint64_t lead = 3;  // an unaligned start, as inside an event file
  auto cur_bytes = reference::make_tensor_bytes(c.type, n, c.mode, seed, 0.5, 3.0);
  auto prev_bytes = reference::make_tensor_bytes(c.type, n, c.mode, seed + 1, 0.5, 3.0);
  std::vector<std::byte> buffer(lead, std::byte{0x5a});
  buffer.insert(buffer.end(), cur_bytes.begin(), cur_bytes.end());
  const stats::segment whole{lead, n, c.type};
  const std::vector<int64_t> shape{c.rows, c.nodes};

  // Whole-tensor results (CPU twins).
  stats::moments whole_m;
  ASSERT_TRUE(stats::compute_moments(buffer.data(), {&whole, 1}, {&whole_m, 1}).ok());
  stats::histogram whole_h;
  ASSERT_TRUE(stats::compute_histograms(buffer.data(), {&whole, 1}, {&whole_m, 1}, 64, {&whole_h, 1}).ok());
  const stats::axis0_predicate positive{};
  const stats::axis0_predicate band{stats::axis0_predicate::kind::open_interval, -1.0, 2.0};
  const tensor_view cur_view{buffer.data() + lead, c.type, shape, n};
  const tensor_view prev_view{prev_bytes.data(), c.type, shape, n};
  auto whole_pos = stats::count_along_axis0(cur_view, positive);
  auto whole_band = stats::count_along_axis0(cur_view, band);
  ASSERT_TRUE(whole_pos && whole_band);
  const stats::allclose_params params{1e-3, 1e-6, true};
  auto whole_pair = stats::compute_pairwise(prev_view, cur_view, params);
  ASSERT_TRUE(whole_pair);

  // Pieces, as the executor cuts them.
  std::vector<batch_piece> pieces;
  ASSERT_TRUE(split_segments({&whole, 1}, split_limits{c.span_bytes, 16, 0}, pieces).ok());
  ASSERT_GT(pieces.size(), 1u) << "the case must split";
  // Pass 1: moments (merged in piece order), axis-0 counts by rectangles, pairwise.
  stats::moments merged;
  std::vector<int64_t> pos(static_cast<std::size_t>(c.nodes), 0);
  std::vector<int64_t> in_band(static_cast<std::size_t>(c.nodes), 0);
  stats::pairwise pair_acc;
  const int64_t esize = static_cast<int64_t>(dtype_size_bytes(c.type));
  for (const batch_piece& p : pieces) {
    const stats::segment piece_seg{p.offset_bytes, p.element_count, c.type};
    stats::moments m;
    ASSERT_TRUE(stats::compute_moments(buffer.data(), {&piece_seg, 1}, {&m, 1}).ok());
    merged = stats::merge(merged, m);
    axis0_region regions[3];
    const int count = axis0_regions(c.nodes, p.element_begin, p.element_count, regions);
    for (int r = 0; r < count; ++r) {
      const std::vector<int64_t> region_shape{regions[r].num_rows, regions[r].num_nodes};
      const tensor_view region{buffer.data() + lead + regions[r].element_begin(c.nodes) * esize,
                               c.type, region_shape, regions[r].num_rows * regions[r].num_nodes};
      auto a = stats::count_along_axis0(region, positive);
      auto b = stats::count_along_axis0(region, band);
      ASSERT_TRUE(a && b);
      add_counts(std::span<int64_t>(pos).subspan(static_cast<std::size_t>(regions[r].node_begin)), a->per_node);
      add_counts(std::span<int64_t>(in_band).subspan(static_cast<std::size_t>(regions[r].node_begin)), b->per_node);
    }
    const std::vector<int64_t> flat{p.element_count};
    const tensor_view prev_piece{prev_bytes.data() + p.element_begin * esize, c.type, flat, p.element_count};
    const tensor_view cur_piece{buffer.data() + p.offset_bytes, c.type, flat, p.element_count};
    auto part = stats::compute_pairwise(prev_piece, cur_piece, params);
    ASSERT_TRUE(part);
    pair_acc = merge_pairwise(pair_acc, *part);
  }
  // Pass 2: histogram counts of each piece over the merged [min, max], added.
  std::vector<int64_t> hist(64, 0);
  bool any_hist = false;
  for (const batch_piece& p : pieces) {
    const stats::segment piece_seg{p.offset_bytes, p.element_count, c.type};
    stats::histogram h;
    ASSERT_TRUE(stats::compute_histograms(buffer.data(), {&piece_seg, 1}, {&merged, 1}, 64, {&h, 1}).ok());
    if (h.bins == 0) continue;
    any_hist = true;
    EXPECT_EQ(h.lo, whole_h.lo);
    EXPECT_EQ(h.hi, whole_h.hi);
    add_counts(hist, h.counts);
  }

  // Moments: against the long-double reference at the documented tolerance; counts exact.
  const auto values = reference::element_values(buffer.data() + lead, c.type, n);
  reference::expect_moments_match(merged, reference::compute_moments_ref(values), context);
  EXPECT_EQ(merged.count, whole_m.count);
  EXPECT_EQ(merged.min, whole_m.min);
  EXPECT_EQ(merged.max, whole_m.max);
  // Histogram: exactly the whole tensor's.
  ASSERT_EQ(any_hist, whole_h.bins > 0);
  if (whole_h.bins > 0) {
    EXPECT_EQ(hist, whole_h.counts);
  }
  EXPECT_EQ(pos, whole_pos->per_node);
  EXPECT_EQ(in_band, whole_band->per_node);
  EXPECT_EQ(pair_acc.count, whole_pair->count);
  EXPECT_EQ(pair_acc.allclose_violations, whole_pair->allclose_violations);
  EXPECT_EQ(pair_acc.diff_max_abs, whole_pair->diff_max_abs);
  const auto prev_values = reference::element_values(prev_bytes.data(), c.type, n);
  const auto ref = reference::compute_pairwise_ref(prev_values, values, params.rtol, params.atol,
                                                   params.equal_nan);
  reference::expect_pairwise_match(pair_acc, ref, context);
}

TEST(batch_split, SplitAndMergeEqualsWholeTensor) {
  const std::vector<split_case> cases = {
      {dtype::float32, 300, 257, data_mode::normal, 4096},    // rows span pieces
      {dtype::float32, 7, 5000, data_mode::special, 4096},    // a row spans pieces
      {dtype::float16, 100, 333, data_mode::special, 2048},
      {dtype::bfloat16, 64, 1000, data_mode::bits, 8192},
      {dtype::float64, 33, 777, data_mode::special, 4096},
      {dtype::int32, 50, 501, data_mode::normal, 1024},
      {dtype::uint8, 1000, 97, data_mode::bits, 4096},
      {dtype::boolean, 300, 301, data_mode::bits, 4096},
      {dtype::int64, 1, 9000, data_mode::normal, 4096},       // rank-2, one row
  };
  uint64_t seed = 1000;
  for (const split_case& c : cases) check_split_case(c, seed++);
}

TEST(batch_split, PairwiseMergeIsExactForCountsAndMaxima) {
  stats::pairwise a;
  a.count = 3;
  a.allclose_violations = 1;
  a.diff_max_abs = 2.5;
  a.diff_sum_squares = 1.0;
  a.previous_sum_squares = 4.0;
  stats::pairwise b;
  b.count = 5;
  b.allclose_violations = 2;
  b.diff_max_abs = 1.5;
  b.diff_sum_squares = 0.5;
  b.previous_sum_squares = 1.0;
  const stats::pairwise r = merge_pairwise(a, b);
  EXPECT_EQ(r.count, 8);
  EXPECT_EQ(r.allclose_violations, 3);
  EXPECT_EQ(r.diff_max_abs, 2.5);
  EXPECT_EQ(r.diff_sum_squares, 1.5);
  EXPECT_EQ(r.previous_sum_squares, 5.0);
}

TEST(batch_split, PoisonedPartsStayPoisonedThroughMerges) {
  // A piece whose kernel result came back poisoned (count −1) must not merge into a plausible
  // record: merged pairwise records and added counts stay −1, never −k or k − 1.
  stats::pairwise good;
  good.count = 100;
  good.allclose_violations = 2;
  stats::pairwise poison;
  poison.count = -1;
  poison.allclose_violations = -1;
  EXPECT_EQ(merge_pairwise(good, poison).count, -1);
  EXPECT_EQ(merge_pairwise(poison, good).count, -1);
  EXPECT_EQ(merge_pairwise(merge_pairwise(poison, poison), good).count, -1);
  std::vector<int64_t> acc = {5, 0, 7};
  add_counts(acc, std::vector<int64_t>{-1, -1, -1});
  add_counts(acc, std::vector<int64_t>{-1, -1, -1});
  add_counts(acc, std::vector<int64_t>{3, 3, 3});
  EXPECT_EQ(acc, (std::vector<int64_t>{-1, -1, -1}));
  // Moments (the public merge the executor applies to split pieces).
  stats::moments m;
  m.count = 10;
  stats::moments bad;
  bad.count = -1;
  EXPECT_EQ(stats::merge(m, bad).count, -1);
  EXPECT_EQ(stats::merge(stats::merge(bad, bad), m).count, -1);
}

TEST(batch_split, DeviceAndManagedSourcesAreRejected) {
  bool direct = true;
  ASSERT_TRUE(plan_batch_source(source_memory::pageable, direct).ok());
  EXPECT_FALSE(direct);
  ASSERT_TRUE(plan_batch_source(source_memory::host_pinned, direct).ok());
  EXPECT_TRUE(direct);
  for (source_memory kind : {source_memory::device, source_memory::managed}) {
    const status s = plan_batch_source(kind, direct);
    EXPECT_EQ(s.code(), error_code::invalid_argument);
    EXPECT_NE(s.message().find("host memory"), std::string::npos) << s.message();
    EXPECT_FALSE(direct);
  }
}

TEST(batch_split, SegmentsOfTwoToThe31ElementsSplitExactly) {
  // Index arithmetic only (no bytes): 2^31 + 7 float32 and 2^32 + 1 uint8 elements at
  // unaligned offsets, cut into 32 MiB pieces and packed.
  const std::vector<stats::segment> segments = {
      {3, (int64_t{1} << 31) + 7, dtype::float32},
      {3 + ((uint64_t{1} << 31) + 7) * 4 + 5, (int64_t{1} << 32) + 1, dtype::uint8},
  };
  const split_limits limits{uint64_t{32} << 20, 16384, 0};
  std::vector<batch_piece> pieces;
  ASSERT_TRUE(split_segments(segments, limits, pieces).ok());
  std::vector<int64_t> next(segments.size(), 0);
  for (const batch_piece& p : pieces) {
    const stats::segment& s = segments[p.segment];
    const uint64_t size = dtype_size_bytes(s.type);
    ASSERT_EQ(p.element_begin, next[p.segment]);
    ASSERT_EQ(p.offset_bytes, s.offset_bytes + static_cast<uint64_t>(p.element_begin) * size);
    ASSERT_LE(p.size_bytes, max_piece_bytes(limits));
    if (p.piece_index + 1 < p.piece_count) {
      ASSERT_EQ(p.size_bytes % piece_alignment_bytes, 0u);
    }
    next[p.segment] += p.element_count;
  }
  EXPECT_EQ(next[0], segments[0].num_elements);
  EXPECT_EQ(next[1], segments[1].num_elements);
  std::vector<piece_group> groups;
  group_pieces(pieces, {}, 0x1000, limits, groups);
  uint32_t covered = 0;
  for (const piece_group& g : groups) {
    EXPECT_EQ(g.first, covered);
    EXPECT_LE(g.span_bytes(), limits.max_span_bytes);
    covered += g.count;
  }
  EXPECT_EQ(covered, pieces.size());
}

}  // namespace
}  // namespace trialstat::stats::detail

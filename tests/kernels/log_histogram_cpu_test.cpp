// SPDX-License-Identifier: Apache-2.0
// The table-driven log-scale histogram (kernels/log_histogram/log_histogram_op.hpp) against
// numpy's rule in float64 (tests/reference: upper_bound over smdebug's edges, computed at run
// time): the tables themselves, the scalar rank functions the CUDA kernel calls (the device's
// table is this table: gpu_log_histogram.DeviceTablesAreTheHostTables), and the CPU twin on
// every ISA it dispatches to, for every dtype — values on every edge and 1–2 ulps (of the
// dtype) either side, ±0, subnormals, ±Inf, NaN (several payloads, both signs), values below
// the first and above the last edge, every float16/bfloat16/int8/int16 bit pattern, a stride
// over all float32 bit patterns, and random bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/log_histogram/log_histogram_cpu.hpp"
#include "kernels/log_histogram/log_histogram_labels_cpu.hpp"
#include "kernels/log_histogram/log_histogram_op.hpp"
#include "kernels/log_histogram/log_histogram_top_bits32.hpp"
#include "tests/kernels/for_each_isa.hpp"
#include "tests/reference/reference_stats.hpp"
#include "trialstat/detail/float_convert.hpp"

namespace trialstat {
namespace {

using kernels::log_histogram_num_cells;

constexpr kernels::log_histogram_tables tables = kernels::make_log_histogram_tables();
constexpr kernels::log_histogram_lookup lookup{tables.rank32, tables.first_rank,
                                               tables.next_lower};
constexpr kernels::log_histogram_top_table32 top32 = kernels::make_log_histogram_top_table32(tables);

constexpr kernels::log_histogram_label_table32 labels32 = kernels::make_log_histogram_label_table32(top32);

/// log_histogram_rank32 of float32 bits.
int rank32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return kernels::log_histogram_rank32(lookup, f);
}

/// log_histogram_rank32 as the top table spells −Inf (log_histogram_top_bits32.hpp).
int top_rank32(uint32_t bits) {
  const int r = rank32(bits);
  return r == kernels::log_rank_neg_inf ? kernels::log_rank_neg_inf_alias : r;
}

const std::vector<double>& edges() {
  static const std::vector<double> e = reference::log_histogram_edges_by_loop();
  return e;
}

/// numpy's cell of one float64 value (the public cell layout, log_histogram_op.hpp).
int reference_cell(double x) {
  const auto r = reference::log_histogram_counts({x}, edges());
  if (r.nan) return kernels::log_cell_nan;
  if (r.pos_inf) return kernels::log_cell_pos_inf;
  if (r.neg_inf) return kernels::log_cell_neg_inf;
  if (r.below) return kernels::log_cell_below;
  if (r.above) return kernels::log_cell_above;
  for (std::size_t i = 0; i < r.counts.size(); ++i) {
    if (r.counts[i] != 0) return static_cast<int>(i);
  }
  return -1;
}

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

/// Every value of interest as float64: each edge, 2 ulps either side in float64 and in
/// float32, specials, both zeros, subnormals, values past both ends, NaNs of several payloads.
std::vector<double> interesting_doubles() {
  std::vector<double> v;
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (double e : edges()) {
    double up = e, down = e;
    float up32 = static_cast<float>(e), down32 = static_cast<float>(e);
    v.push_back(e);
    v.push_back(static_cast<double>(up32));
    for (int k = 0; k < 2; ++k) {
      up = std::nextafter(up, inf);
      down = std::nextafter(down, -inf);
      up32 = std::nextafter(up32, std::numeric_limits<float>::infinity());
      down32 = std::nextafter(down32, -std::numeric_limits<float>::infinity());
      v.insert(v.end(), {up, down, static_cast<double>(up32), static_cast<double>(down32)});
    }
  }
  const double specials[] = {0.0, -0.0, 4.9e-324, -4.9e-324, DBL_MIN, -DBL_MIN, 1e-300, -1e-300,
                             1.4e-45, -1.4e-45, 1.17549435e-38, -1.17549435e-38, 9.09e-13,
                             -9.09e-13, 0x1p-40, -0x1p-40, 0x1p67, -0x1p67, 1e20, -1e20, 1e21,
                             -1e21, 3.4e38, -3.4e38, DBL_MAX, -DBL_MAX, inf, -inf, 1.0, -1.0};
  v.insert(v.end(), std::begin(specials), std::end(specials));
  for (uint64_t bits : {0x7ff8000000000000ULL, 0xfff8000000000000ULL, 0x7ff0000000000001ULL,
                        0xfff0000000000001ULL, 0x7fffffffffffffffULL}) {
    double d;
    std::memcpy(&d, &bits, 8);
    v.push_back(d);
  }
  return v;
}

TEST(LogHistogramTables, BoundsAreTheEdges) {
  const auto& e = edges();
  ASSERT_EQ(e.size(), static_cast<std::size_t>(kernels::log_histogram_num_edges));
  EXPECT_EQ(tables.next_lower[kernels::log_rank_neg_inf], -DBL_MAX);
  for (int i = 0; i < kernels::log_histogram_num_edges - 1; ++i) {
    ASSERT_EQ(tables.next_lower[kernels::log_rank_below + i], e[static_cast<std::size_t>(i)]) << i;
  }
  // The last bin is closed: "above" starts one ulp past the last edge.
  EXPECT_EQ(tables.next_lower[kernels::log_rank_above - 1], std::nextafter(e.back(), INFINITY));
  EXPECT_EQ(tables.next_lower[kernels::log_rank_above], INFINITY);
  for (int i = 0; i < kernels::log_index_size; ++i) {
    ASSERT_LT(tables.first_rank[i], kernels::log_rank_pos_inf) << i;
  }
}

TEST(LogHistogramOp, ScalarRanksMatchNumpy) {
  // log_histogram_rank64/rank32 are what the CUDA kernel runs (host+device, one definition).
  for (double x : interesting_doubles()) {
    ASSERT_EQ(kernels::log_histogram_cell(lookup, x), reference_cell(x)) << std::hexfloat << x;
    const auto f = static_cast<float>(x);
    ASSERT_EQ(kernels::log_cell_of_rank(kernels::log_histogram_rank32(lookup, f)),
              reference_cell(static_cast<double>(f)))
        << std::hexfloat << f;
  }
  // A stride over every float32 bit pattern (all exponents, signs, NaN payloads).
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 65521) {
    const float f = bits_to_float(static_cast<uint32_t>(b));
    ASSERT_EQ(kernels::log_cell_of_rank(kernels::log_histogram_rank32(lookup, f)),
              reference_cell(static_cast<double>(f)))
        << std::hex << b;
  }
}

TEST(LogHistogramOp, Float32KeysAgreeWithFloat64Bounds) {
  // rank32 (thresholds among float32 keys) against rank64 (float64 bounds, checked against
  // numpy above) on every float32 within 64 ulps of every edge and of every interval's ends,
  // and a dense stride over all bit patterns.
  const auto same = [](float f) {
    return kernels::log_histogram_rank32(lookup, f) ==
           kernels::log_histogram_rank64(lookup, static_cast<double>(f));
  };
  for (double e : edges()) {
    for (const float c : {static_cast<float>(e), -static_cast<float>(e)}) {
      uint32_t b;
      std::memcpy(&b, &c, 4);
      for (int d = -64; d <= 64; ++d) {
        const float f = bits_to_float(b + static_cast<uint32_t>(d));
        ASSERT_TRUE(same(f)) << std::hexfloat << f;
      }
    }
  }
  for (uint32_t hi = 0; hi < (1u << 13); ++hi) {  // each interval's first and last keys
    for (const uint32_t low : {0u, 1u, (1u << 19) - 2, (1u << 19) - 1}) {
      const float f = bits_to_float((hi << 19) | low);
      ASSERT_TRUE(same(f)) << std::hexfloat << f;
    }
  }
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 997) {
    const float f = bits_to_float(static_cast<uint32_t>(b));
    ASSERT_TRUE(same(f)) << std::hex << b;
  }
}

TEST(LogHistogramTopTable, EveryEntryIsRank32) {
  // Every entry is first + (key ≥ threshold): one step at most along its 2^19 keys, and so is
  // rank32 on the same interval (make_log_histogram_tables proves it) — so agreeing at both
  // ends and on both sides of the threshold is agreeing on every key. The special entries
  // (exponent 0 and 255: zeros, subnormals, ±Inf, NaN payloads) are checked on every key.
  constexpr uint32_t keys = 1u << kernels::log_low_bits32;
  for (uint32_t top = 0; top < static_cast<uint32_t>(kernels::log_top_size32); ++top) {
    const bool negative = (top >> 12) != 0;
    const uint32_t exponent = (top >> 4) & 0xffu;
    const uint32_t threshold = top32.entry[top] >> kernels::log_rank32_bits;
    ASSERT_LE(threshold, keys) << top;
    // bits of the value with order key k (log_key32: flipped for negative values).
    const auto bits_of_key = [&](uint32_t k) {
      return (top << kernels::log_low_bits32) | (negative ? (keys - 1 - k) : k);
    };
    if (exponent == 0 || exponent == 0xffu) {
      for (uint32_t k = 0; k < keys; ++k) {
        ASSERT_EQ(kernels::log_histogram_top_rank32(top32, bits_of_key(k)), top_rank32(bits_of_key(k)))
            << std::hex << bits_of_key(k);
      }
      continue;
    }
    for (const uint32_t k : {0u, 1u, threshold - 2, threshold - 1, threshold, threshold + 1,
                             keys - 2, keys - 1}) {
      if (k >= keys) continue;  // threshold 0 or 2^19: the unsigned wrap-arounds are skipped
      ASSERT_EQ(kernels::log_histogram_top_rank32(top32, bits_of_key(k)), top_rank32(bits_of_key(k)))
          << std::hex << bits_of_key(k);
    }
  }
}

TEST(LogHistogramLabels, LabelsAndRanksCorrespond) {
  // Every rank has a label that counts it; the two zeros' rank and NaN have two.
  for (int r = 0; r < kernels::log_histogram_num_ranks; ++r) {
    const int label = kernels::log_label_of_rank(r);
    ASSERT_GE(label, 0);
    ASSERT_LT(label, kernels::log_histogram_num_labels);
    EXPECT_EQ(kernels::log_rank_of_label(label), r) << r;
    EXPECT_EQ(kernels::log_cell_of_label(label), kernels::log_cell_of_rank(r)) << r;
  }
  EXPECT_EQ(kernels::log_label_of_rank(kernels::log_rank_nan), kernels::log_label_nan);
  EXPECT_EQ(kernels::log_rank_of_label(kernels::log_label_nan_negative), kernels::log_rank_nan);
  EXPECT_EQ(kernels::log_rank_of_label(0), kernels::log_label_zero_rank);    // +0.0
  EXPECT_EQ(kernels::log_rank_of_label(777), kernels::log_label_zero_rank);  // −0.0
  EXPECT_EQ(kernels::log_cell_of_label(777), kernels::log_histogram_positive_edges);  // [0, 1e-12)
}

TEST(LogHistogramLabels, EveryEntryCountsRank32) {
  // Each label entry is L + (low ≥ t): one step at most along its 2^19 low bits, as rank32 on
  // the same interval — so agreeing at both ends and on both sides of the step is agreeing on
  // every value. The exponent-0 and exponent-255 entries (zeros, subnormals, ±Inf, NaN
  // payloads of both signs) are checked on every value.
  constexpr uint32_t keys = 1u << kernels::log_low_bits32;
  for (uint32_t top = 0; top < static_cast<uint32_t>(kernels::log_top_size32); ++top) {
    const uint32_t exponent = (top >> 4) & 0xffu;
    const uint32_t step = kernels::log_label_step_of_entry(labels32, top);
    ASSERT_LE(step, keys) << top;
    const auto check = [&](uint32_t low) {
      const uint32_t bits = (top << kernels::log_low_bits32) | low;
      const int label = kernels::log_histogram_label32(labels32, bits);
      ASSERT_GE(label, 0);
      ASSERT_LT(label, kernels::log_histogram_num_labels);
      ASSERT_EQ(kernels::log_rank_of_label(label), rank32(bits)) << std::hex << bits;
    };
    if (exponent == 0 || exponent == 0xffu) {
      for (uint32_t low = 0; low < keys; ++low) check(low);
      continue;
    }
    for (const uint32_t low : {0u, 1u, step - 2, step - 1, step, step + 1, keys - 2, keys - 1}) {
      if (low < keys) check(low);  // step 0 or 2^19: the unsigned wrap-arounds are skipped
    }
  }
}

TEST(LogHistogramCpu, Float32LanesAreTheTopTableOnEveryIsa) {
  // The lane path (log_histogram_ranks32_cpu: the label table's lanes, labels mapped back to
  // ranks) against rank32, on a dense
  // stride over every bit pattern, every edge ±64 ulps, and specials; lengths off the
  // 16-lane grid.
  std::vector<uint32_t> bits;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) bits.push_back(static_cast<uint32_t>(b));
  for (double e : edges()) {
    for (const float c : {static_cast<float>(e), -static_cast<float>(e)}) {
      uint32_t b;
      std::memcpy(&b, &c, 4);
      for (int d = -64; d <= 64; ++d) bits.push_back(b + static_cast<uint32_t>(d));
    }
  }
  for (uint32_t b : {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x7f800000u,
                     0xff800000u, 0x7f800001u, 0xff800001u, 0x7fc00000u, 0xffc00000u,
                     0x7fffffffu, 0xffffffffu, 0x7f7fffffu, 0xff7fffffu}) {
    bits.push_back(b);
  }
  bits.push_back(0x3f800000u);  // 1.0: an odd length
  test_isa::for_each_isa([&] {
    for (const std::size_t n : {bits.size(), bits.size() - 1, std::size_t{15}, std::size_t{1}}) {
      std::vector<int32_t> ranks(n, -1);
      kernels::log_histogram_ranks32_cpu(bits.data() + (bits.size() - n), static_cast<int64_t>(n), ranks.data());
      for (std::size_t i = 0; i < n; ++i) {
        const uint32_t b = bits[bits.size() - n + i];
        ASSERT_EQ(ranks[i], rank32(b)) << std::hex << b;
      }
    }
  });
}

/// The CPU twin's cells of one segment, compared with the reference of `values` (the
/// elements as numpy sees them, float64).
void expect_twin_matches(const std::vector<std::byte>& bytes, dtype type, int64_t n,
                         const std::vector<double>& values, const std::string& what) {
  // Several segments: the whole tensor at an unaligned offset, and slices that end on every
  // residue of the 16-lane padding and the sparse/dense flush boundary.
  std::vector<std::byte> buffer(3, std::byte{0});
  buffer.insert(buffer.end(), bytes.begin(), bytes.end());
  const std::size_t size = dtype_size_bytes(type);
  std::vector<stats::segment> segments = {{3, n, type}};
  for (int64_t m : {int64_t{1}, int64_t{15}, int64_t{17}, int64_t{511}, int64_t{512},
                    int64_t{513}, int64_t{1025}}) {
    if (m < n) segments.push_back({3 + static_cast<uint64_t>(n - m) * size, m, type});
  }
  std::vector<int64_t> cells(segments.size() * log_histogram_num_cells, 0);
  ASSERT_TRUE(kernels::compute_log_histograms_cpu(buffer.data(), segments, cells).ok());
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const auto first = static_cast<std::ptrdiff_t>(values.size()) - segments[s].num_elements;
    const std::vector<double> slice(values.begin() + first, values.end());
    const auto r = reference::log_histogram_counts(slice, edges());
    const int64_t* row = cells.data() + s * log_histogram_num_cells;
    SCOPED_TRACE(what + " n=" + std::to_string(segments[s].num_elements));
    for (int i = 0; i < kernels::log_histogram_num_bins; ++i) {
      ASSERT_EQ(row[i], r.counts[static_cast<std::size_t>(i)]) << "bin " << i;
    }
    EXPECT_EQ(row[kernels::log_cell_nan], r.nan);
    EXPECT_EQ(row[kernels::log_cell_pos_inf], r.pos_inf);
    EXPECT_EQ(row[kernels::log_cell_neg_inf], r.neg_inf);
    EXPECT_EQ(row[kernels::log_cell_below], r.below);
    EXPECT_EQ(row[kernels::log_cell_above], r.above);
    // The per-tensor entry (the bins and the extra cells apart) gives the same cells.
    std::vector<int64_t> bins(kernels::log_histogram_num_bins, 0);
    std::vector<int64_t> extra(log_histogram_num_cells - kernels::log_histogram_num_bins, 0);
    kernels::segment_log_histogram_cpu(buffer.data(), segments[s], bins.data(), extra.data());
    ASSERT_TRUE(std::equal(bins.begin(), bins.end(), row));
    ASSERT_TRUE(std::equal(extra.begin(), extra.end(), row + kernels::log_histogram_num_bins));
  }
}

template <class T>
std::vector<std::byte> as_bytes(const std::vector<T>& v) {
  std::vector<std::byte> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(LogHistogramCpu, Float64EdgesAndSpecialsOnEveryIsa) {
  std::vector<double> v = interesting_doubles();
  std::mt19937_64 rng(2024);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, 8);
    v.push_back(d);
  }
  test_isa::for_each_isa([&] {
    expect_twin_matches(as_bytes(v), dtype::float64, static_cast<int64_t>(v.size()), v, "float64");
  });
}

TEST(LogHistogramCpu, Float32EdgesSpecialsAndBitsOnEveryIsa) {
  std::vector<float> f;
  for (double x : interesting_doubles()) f.push_back(static_cast<float>(x));
  for (uint32_t b : {0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu, 0x7fc00000u, 0xffc00000u,
                     0x7f800001u, 0xff800001u, 0x7fffffffu, 0x2b8cbccbu /* ≈ 1e-12 */}) {
    f.push_back(bits_to_float(b));
  }
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 40009) f.push_back(bits_to_float(static_cast<uint32_t>(b)));
  std::vector<double> values(f.begin(), f.end());
  test_isa::for_each_isa([&] {
    expect_twin_matches(as_bytes(f), dtype::float32, static_cast<int64_t>(f.size()), values, "float32");
  });
}

TEST(LogHistogramCpu, EverySixteenBitPatternOnEveryIsa) {
  std::vector<uint16_t> all(65536);
  for (uint32_t b = 0; b < 65536; ++b) all[b] = static_cast<uint16_t>(b);
  const auto bytes = as_bytes(all);
  for (const dtype t : {dtype::float16, dtype::bfloat16, dtype::int16, dtype::uint16}) {
    const auto values = reference::element_values(bytes.data(), t, 65536);
    test_isa::for_each_isa([&] {
      expect_twin_matches(bytes, t, 65536, values, std::string(dtype_name(t)));
    });
  }
  std::vector<uint8_t> bytes8(256);
  for (int b = 0; b < 256; ++b) bytes8[static_cast<std::size_t>(b)] = static_cast<uint8_t>(b);
  for (const dtype t : {dtype::int8, dtype::uint8, dtype::boolean}) {
    const auto b8 = as_bytes(bytes8);
    const auto values = reference::element_values(b8.data(), t, 256);
    test_isa::for_each_isa([&] { expect_twin_matches(b8, t, 256, values, std::string(dtype_name(t))); });
  }
}

TEST(LogHistogramCpu, WideIntegersAroundEdgesOnEveryIsa) {
  // Integers near the edges ≥ 1 (floor, ceil, ±1), the extremes (int64 → the nearest double).
  std::vector<int64_t> i64 = {0, 1, -1, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1};
  std::vector<uint64_t> u64 = {0, 1, UINT64_MAX, UINT64_MAX - 1, uint64_t{1} << 63};
  std::vector<int32_t> i32 = {0, 1, -1, INT32_MAX, INT32_MIN};
  std::vector<uint32_t> u32 = {0, 1, UINT32_MAX};
  for (double e : edges()) {
    if (std::fabs(e) < 1.0 || std::fabs(e) > 9e18) continue;
    for (double c : {std::floor(e), std::ceil(e)}) {
      for (int d = -1; d <= 1; ++d) {
        const auto x = static_cast<int64_t>(c) + d;
        i64.push_back(x);
        if (x >= 0) u64.push_back(static_cast<uint64_t>(x));
        if (x >= INT32_MIN && x <= INT32_MAX) i32.push_back(static_cast<int32_t>(x));
        if (x >= 0 && x <= UINT32_MAX) u32.push_back(static_cast<uint32_t>(x));
      }
    }
  }
  test_isa::for_each_isa([&] {
    const auto run = [&](const auto& v, dtype t) {
      const auto bytes = as_bytes(v);
      const auto n = static_cast<int64_t>(v.size());
      expect_twin_matches(bytes, t, n, reference::element_values(bytes.data(), t, n),
                          std::string(dtype_name(t)));
    };
    run(i64, dtype::int64);
    run(u64, dtype::uint64);
    run(i32, dtype::int32);
    run(u32, dtype::uint32);
  });
}

TEST(LogHistogramCpu, ChunksOfOneSegmentAddUp) {
  // 200,003 float32 values: four 64 Ki chunks (one short), counted on several threads.
  std::mt19937_64 rng(99);
  std::vector<float> f(200003);
  for (auto& x : f) x = bits_to_float(static_cast<uint32_t>(rng()));
  const std::vector<double> values(f.begin(), f.end());
  test_isa::for_each_isa([&] {
    expect_twin_matches(as_bytes(f), dtype::float32, static_cast<int64_t>(f.size()), values, "chunks");
  });
}

TEST(LogHistogramCpu, SpecialValuesInShortAndLongSegmentsOnEveryIsa) {
  // ±0, ±Inf (−Inf is counted at its own rank on the CPU), NaNs of both signs, subnormals and
  // the extremes, in a short segment (sparse flush) and a long one (every counter flushed).
  std::vector<float> f;
  for (uint32_t b : {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x7f800000u,
                     0xff800000u, 0xff800000u, 0x7f800001u, 0xff800001u, 0x7fc00000u,
                     0xffc00000u, 0x7fffffffu, 0xffffffffu, 0x7f7fffffu, 0xff7fffffu,
                     0x3f800000u, 0xbf800000u, 0x2b8cbccbu, 0xab8cbccbu}) {
    f.push_back(bits_to_float(b));
  }
  std::vector<float> long_f;
  for (int i = 0; i < 300; ++i) long_f.insert(long_f.end(), f.begin(), f.end());
  test_isa::for_each_isa([&] {
    for (const auto* v : {&f, &long_f}) {
      const std::vector<double> values(v->begin(), v->end());
      expect_twin_matches(as_bytes(*v), dtype::float32, static_cast<int64_t>(v->size()), values, "specials");
      std::vector<uint16_t> half, bf;
      for (float x : *v) {
        uint32_t b;
        std::memcpy(&b, &x, 4);
        bf.push_back(static_cast<uint16_t>(b >> 16));
        half.push_back(detail::float_to_half_bits(x));
      }
      for (const auto& [t, h] : {std::pair{dtype::float16, &half}, std::pair{dtype::bfloat16, &bf}}) {
        const auto bytes = as_bytes(*h);
        const auto n = static_cast<int64_t>(h->size());
        expect_twin_matches(bytes, t, n, reference::element_values(bytes.data(), t, n), std::string(dtype_name(t)));
      }
    }
  });
}

}  // namespace
}  // namespace trialstat

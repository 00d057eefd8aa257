// SPDX-License-Identifier: Apache-2.0
// The per-ISA copies of the CPU twins (kernels/common/cpu_regions.hpp): every level this machine
// runs gives bit-identical moments and pairwise records and identical histograms to the
// baseline (SSE2) copy; the histogram's multiplied guess (bin_mode::fast) and its skipped
// corrections give histogram_bin's bin (histogram_op.hpp) for values on, and ulps next to,
// every edge; the pairwise pass can copy `current` over `previous` as it goes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/cpu_simd.hpp"
#include "tests/support/record_equality.hpp"
#include "tests/kernels/for_each_isa.hpp"
#include "kernels/histogram/histogram_cpu.hpp"
#include "kernels/histogram/histogram_op.hpp"
#include "kernels/moments/moments_cpu.hpp"
#include "kernels/pairwise/pairwise_cpu.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

using kernels::cpu_isa;

using test_isa::for_each_isa;

using testing::expect_identical_moments;
using testing::same_bits;

TEST(CpuLanes, DetectedLevelIsReported) {
  const cpu_isa isa = kernels::detected_cpu_isa();
  std::printf("CPU twins: detected %s\n", kernels::cpu_isa_name(isa));
  kernels::set_cpu_isa_limit(0);
  EXPECT_EQ(kernels::active_cpu_isa(), cpu_isa::baseline);
  kernels::set_cpu_isa_limit(-1);
  EXPECT_EQ(kernels::active_cpu_isa(), isa);
}

TEST(CpuLanes, MomentsBitIdenticalOnEveryIsa) {
  for (dtype type : reference::real_dtypes()) {
    for (auto mode : {reference::data_mode::normal, reference::data_mode::special}) {
      // Sizes around the lane width, a block and a chunk; unaligned offsets; one batch.
      const std::vector<int64_t> sizes = {1, 7, 8, 9, 1023, 1024, 1025, 5000, 65536 + 13};
      std::vector<std::byte> buffer;
      std::vector<stats::segment> segs;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const uint64_t seed = 1000 + i;
        const auto bytes = reference::make_tensor_bytes(type, sizes[i], mode, seed, i % 3 == 0 ? 1e6 : 0.5, 2.0);
        buffer.resize(buffer.size() + 1);  // unaligned start
        segs.push_back({buffer.size(), sizes[i], type});
        buffer.insert(buffer.end(), bytes.begin(), bytes.end());
      }
      std::vector<stats::moments> baseline(segs.size());
      kernels::set_cpu_isa_limit(0);
      ASSERT_TRUE(kernels::compute_moments_cpu(buffer.data(), segs, baseline).ok());
      for_each_isa([&](cpu_isa) {
        std::vector<stats::moments> got(segs.size());
        ASSERT_TRUE(kernels::compute_moments_cpu(buffer.data(), segs, got).ok());
        for (std::size_t i = 0; i < segs.size(); ++i) {
          expect_identical_moments(got[i], baseline[i],
                           std::string(dtype_name(type)) + " " + reference::to_string(mode) +
                               " n=" + std::to_string(sizes[i]) + " seed=" + std::to_string(1000 + i));
        }
      });
    }
  }
}

/// Values that stress the bin computation of [lo, hi] with `bins` bins: every edge exactly, up
/// to 3 ulps either side of it, midpoints, lo and hi, and random values.
std::vector<double> edge_values(double lo, double hi, int bins, std::mt19937_64& rng) {
  const auto p = kernels::make_histogram_params(lo, hi, bins);
  std::vector<double> v = {lo, hi};
  for (int i = 0; i <= bins; ++i) {
    const double e = kernels::histogram_edge(p, i);
    double up = e, down = e;
    v.push_back(e);
    for (int k = 0; k < 3; ++k) {
      up = std::nextafter(up, std::numeric_limits<double>::infinity());
      down = std::nextafter(down, -std::numeric_limits<double>::infinity());
      v.push_back(up);
      v.push_back(down);
    }
    if (i < bins) v.push_back(e + 0.5 * p.step);
  }
  std::uniform_real_distribution<double> u(lo, hi);
  for (int i = 0; i < 2000; ++i) v.push_back(u(rng));
  // Keep the range [lo, hi]: values outside it would move the tensor's min/max.
  for (auto& x : v) x = std::fmin(std::fmax(x, lo), hi);
  return v;
}

/// Histogram of float64 `v` through moments + the CPU twin vs histogram_bin per element.
void expect_histogram_matches_op(const std::vector<double>& v, int bins, dtype type,
                                 const std::string& what) {
  SCOPED_TRACE(what);
  const auto bytes = reference::encode_values(type, v);
  // The encoded values (float32 / float16 / bfloat16 round them) are what the op must see.
  const std::vector<double> stored =
      reference::element_values(bytes.data(), type, static_cast<int64_t>(v.size()));
  const std::vector<stats::segment> segs = {{0, static_cast<int64_t>(v.size()), type}};
  std::vector<stats::moments> m(1);
  ASSERT_TRUE(kernels::compute_moments_cpu(bytes.data(), segs, m).ok());
  const auto p = kernels::make_histogram_params(m[0].min, m[0].max, bins);
  std::vector<int64_t> want(static_cast<std::size_t>(bins), 0);
  for (double x : stored) {
    if (kernels::histogram_keeps(p, x)) ++want[static_cast<std::size_t>(kernels::histogram_bin(p, x))];
  }
  for_each_isa([&](cpu_isa) {
    std::vector<stats::histogram> h(1);
    ASSERT_TRUE(kernels::compute_histograms_cpu(bytes.data(), segs, m, bins, h).ok());
    ASSERT_EQ(h[0].counts.size(), want.size());
    for (int b = 0; b < bins; ++b) EXPECT_EQ(h[0].counts[static_cast<std::size_t>(b)], want[static_cast<std::size_t>(b)]) << "bin " << b;
  });
}

TEST(CpuLanes, HistogramMatchesOpAtEveryEdge) {
  std::mt19937_64 rng(7);
  struct range_case {
    double lo, hi;
  };
  // Wide, offset, tiny, negative, huge; and narrow float64 ranges on both sides of the fast
  // guess's threshold (bin width 2^-30 of max(|lo|, |hi|)).
  const std::vector<range_case> ranges = {
      {-1.0, 1.0},         {0.0, 1.0},          {1000.0, 1000.5},       {-3e-20, 7e-21},
      {-1e300, 1e300},     {5.0, 5.0 + 0x1p-20}, {5.0, 5.0 + 0x1p-24},  {5.0, 5.0 + 0x1p-33},
      {1e9, 1e9 + 1e-3},   {-7.25, -7.0},       {0.1, 0.3},
      // Constant tensors (min == max: widened range, bin_mode::constant).
      {0.0, 0.0},          {2.7651832103729248, 2.7651832103729248}, {-1e-300, -1e-300}};
  for (int bins : {1, 2, 3, 7, 64, 1000}) {
    for (const auto& r : ranges) {
      const auto v = edge_values(r.lo, r.hi, bins, rng);
      char what[160];
      std::snprintf(what, sizeof what, "float64 [%a, %a] bins=%d seed=7", r.lo, r.hi, bins);
      expect_histogram_matches_op(v, bins, dtype::float64, what);
      if (std::fabs(r.lo) < 1e30) {
        std::snprintf(what, sizeof what, "float32 [%a, %a] bins=%d seed=7", r.lo, r.hi, bins);
        expect_histogram_matches_op(v, bins, dtype::float32, what);
        // float16 / bfloat16 take the float32 guesses too (bin_mode::fast32).
        std::snprintf(what, sizeof what, "bfloat16 [%a, %a] bins=%d seed=7", r.lo, r.hi, bins);
        expect_histogram_matches_op(v, bins, dtype::bfloat16, what);
        if (std::fabs(r.lo) < 6e4 && std::fabs(r.hi) < 6e4) {
          std::snprintf(what, sizeof what, "float16 [%a, %a] bins=%d seed=7", r.lo, r.hi, bins);
          expect_histogram_matches_op(v, bins, dtype::float16, what);
        }
      }
    }
  }
}

TEST(CpuLanes, HistogramMatchesOpOnRandomTensors) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int t = 0; t < 40; ++t) {
    const double scale = std::ldexp(1.0, static_cast<int>(rng() % 40) - 20);
    const double offset = (rng() % 3 == 0) ? 1e4 * scale : 0.0;
    std::vector<double> v(3000 + rng() % 3000);
    for (auto& x : v) x = offset + scale * normal(rng);
    if (t % 5 == 0) v[rng() % v.size()] = std::numeric_limits<double>::quiet_NaN();
    if (t % 7 == 0) v[rng() % v.size()] = -std::numeric_limits<double>::infinity();
    for (dtype type : {dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16}) {
      // float16 overflows beyond 65504 (a tensor of ±Inf has no histogram).
      if (type == dtype::float16 && std::fabs(offset) + 8.0 * scale > 6e4) continue;
      expect_histogram_matches_op(v, 64, type,
                                  std::string(dtype_name(type)) + " tensor " + std::to_string(t) +
                                      " seed=11");
    }
  }
}

TEST(CpuLanes, HistogramPairCountingOnEveryIsa) {
  // Chunks of ≥ 16384 elements with ≤ 64 bins count pairs of elements (histogram_lanes_cpu.hpp,
  // count_pairs_into_tables): lengths around that threshold, odd lengths (a padded last pair),
  // two chunks, bins on both sides of 64, with NaN/±Inf (the spill bin, dropped at the flush)
  // and runs of one value.
  std::mt19937_64 rng(23);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const int64_t n : {int64_t{16383}, int64_t{16384}, int64_t{16385}, int64_t{65537}, int64_t{150001}}) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = 3.0 + 0.5 * normal(rng);
    for (int k = 0; k < 50; ++k) {
      v[rng() % v.size()] = std::numeric_limits<double>::quiet_NaN();
      v[rng() % v.size()] = std::numeric_limits<double>::infinity();
      v[rng() % v.size()] = -std::numeric_limits<double>::infinity();
    }
    for (std::size_t i = 100; i < 3000; ++i) v[i] = 3.25;  // a run of one bin
    for (const int bins : {1, 2, 63, 64, 65}) {
      for (dtype type : {dtype::float32, dtype::float64, dtype::bfloat16, dtype::int16}) {
        expect_histogram_matches_op(v, bins, type,
                                    std::string(dtype_name(type)) + " n=" + std::to_string(n) +
                                        " bins=" + std::to_string(bins) + " seed=23");
      }
    }
  }
}

TEST(CpuLanes, HalfPrecisionEveryBitPatternOnEveryIsa) {
  // Every float16 / bfloat16 pattern (NaN of both signs and every payload, ±Inf, subnormals,
  // ±0) as one tensor, and the finite ones alone, from an odd byte offset: moments bit-identical
  // to the baseline, histogram counts equal to histogram_bin per element (the vector widening
  // of load_half / load_half_x16 against float_convert.hpp's scalar one).
  for (const dtype type : {dtype::float16, dtype::bfloat16}) {
    for (const bool finite_only : {false, true}) {
      std::vector<uint16_t> patterns;
      for (uint32_t b = 0; b < 65536; ++b) {
        const auto h = static_cast<uint16_t>(b);
        const std::byte* raw = reinterpret_cast<const std::byte*>(&h);
        if (finite_only && !std::isfinite(reference::element_value(raw, type, 0))) continue;
        patterns.push_back(h);
      }
      const auto n = static_cast<int64_t>(patterns.size());
      std::vector<std::byte> buffer(1 + patterns.size() * 2);
      std::memcpy(buffer.data() + 1, patterns.data(), patterns.size() * 2);
      const std::vector<stats::segment> segs = {{1, n, type}};
      const std::string what = std::string(dtype_name(type)) + (finite_only ? " finite" : " all") +
                               " patterns";
      SCOPED_TRACE(what);
      std::vector<stats::moments> base(1);
      kernels::set_cpu_isa_limit(0);
      ASSERT_TRUE(kernels::compute_moments_cpu(buffer.data(), segs, base).ok());
      kernels::set_cpu_isa_limit(-1);
      const auto values = reference::element_values(buffer.data() + 1, type, n);
      for (const int bins : {1, 7, 64, 1000}) {
        const auto p = kernels::make_histogram_params(base[0].min, base[0].max, bins);
        std::vector<int64_t> want(static_cast<std::size_t>(bins), 0);
        for (double x : values) {
          if (kernels::histogram_keeps(p, x)) ++want[static_cast<std::size_t>(kernels::histogram_bin(p, x))];
        }
        for_each_isa([&](cpu_isa) {
          std::vector<stats::moments> m(1);
          ASSERT_TRUE(kernels::compute_moments_cpu(buffer.data(), segs, m).ok());
          expect_identical_moments(m[0], base[0], what);
          std::vector<stats::histogram> h(1);
          ASSERT_TRUE(kernels::compute_histograms_cpu(buffer.data(), segs, m, bins, h).ok());
          EXPECT_EQ(h[0].counts, want) << "bins=" << bins;
        });
      }
    }
  }
}

TEST(CpuLanes, ConstantModeStillBinsValuesTheMomentsDoNotDescribe) {
  // Moments claiming min == max == 1 for data that is not constant: every value still gets
  // histogram_bin's bin of the widened range [0.5, 1.5].
  const std::vector<double> v = {1.0, 1.0, 0.75, 1.0, 1.25, 1.5, 0.5, 1.0, 1.1, 1.0, 2.0, 0.0};
  const auto bytes = reference::encode_values(dtype::float64, v);
  const std::vector<stats::segment> segs = {{0, static_cast<int64_t>(v.size()), dtype::float64}};
  stats::moments m;
  m.count = static_cast<int64_t>(v.size());
  m.min = m.max = 1.0;
  const auto p = kernels::make_histogram_params(1.0, 1.0, 8);
  std::vector<int64_t> want(8, 0);
  for (double x : v) {
    if (kernels::histogram_keeps(p, x)) ++want[static_cast<std::size_t>(kernels::histogram_bin(p, x))];
  }
  for_each_isa([&](cpu_isa) {
    std::vector<stats::histogram> h(1);
    ASSERT_TRUE(kernels::compute_histograms_cpu(bytes.data(), segs, {&m, 1}, 8, h).ok());
    EXPECT_EQ(h[0].counts, want);
  });
}

TEST(CpuLanes, PairwiseBitIdenticalOnEveryIsaAndOverwriteCopies) {
  for (dtype type : {dtype::float32, dtype::float64, dtype::float16, dtype::int32}) {
    for (int64_t n : {int64_t{5}, int64_t{1024}, int64_t{3000}, int64_t{65536 * 2 + 77}}) {
      const auto a = reference::make_tensor_bytes(type, n, reference::data_mode::special, 21);
      auto b = reference::make_tensor_bytes(type, n, reference::data_mode::special, 22);
      // Make most pairs close: b = a except every third element.
      const int size = static_cast<int>(dtype_size_bytes(type));
      for (int64_t i = 0; i < n; i += 3) std::memcpy(b.data() + i * size, a.data() + i * size, size);
      const std::vector<int64_t> shape = {n};
      const tensor_view va{a.data(), type, shape, n, memory_kind::host};
      const tensor_view vb{b.data(), type, shape, n, memory_kind::host};
      const stats::allclose_params params{1e-3, 1e-6, true};
      kernels::set_cpu_isa_limit(0);
      const auto base = kernels::compute_pairwise_cpu(va, vb, params);
      ASSERT_TRUE(base.has_value());
      for_each_isa([&](cpu_isa) {
        const std::string what = std::string(dtype_name(type)) + " n=" + std::to_string(n) + " seeds 21/22";
        SCOPED_TRACE(what);
        const auto got = kernels::compute_pairwise_cpu(va, vb, params);
        ASSERT_TRUE(got.has_value());
        EXPECT_EQ(got->count, base->count);
        EXPECT_EQ(got->allclose_violations, base->allclose_violations);
        EXPECT_EQ(got->nan_mismatches, base->nan_mismatches);
        EXPECT_TRUE(same_bits(got->diff_sum_squares, base->diff_sum_squares));
        EXPECT_TRUE(same_bits(got->diff_max_abs, base->diff_max_abs));
        EXPECT_TRUE(same_bits(got->previous_sum_squares, base->previous_sum_squares));
        // The overwriting pass gives the same record and leaves previous == current.
        std::vector<std::byte> history = a;
        const tensor_view vh{history.data(), type, shape, n, memory_kind::host};
        const auto fused = kernels::compute_pairwise_cpu(vh, vb, params, history.data());
        ASSERT_TRUE(fused.has_value());
        EXPECT_EQ(fused->allclose_violations, base->allclose_violations);
        EXPECT_EQ(fused->nan_mismatches, base->nan_mismatches);
        EXPECT_TRUE(same_bits(fused->diff_sum_squares, base->diff_sum_squares));
        EXPECT_TRUE(same_bits(fused->previous_sum_squares, base->previous_sum_squares));
        EXPECT_EQ(history, b);
      });
    }
  }
}

TEST(CpuLanes, PairwiseOverwriteRejectsMixedDtypes) {
  std::vector<std::byte> a(16), b(32);
  const std::vector<int64_t> shape = {4};
  const tensor_view va{a.data(), dtype::float32, shape, 4, memory_kind::host};
  const tensor_view vb{b.data(), dtype::float64, shape, 4, memory_kind::host};
  const auto r = kernels::compute_pairwise_cpu(va, vb, stats::allclose_params{}, a.data());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error_status().code(), error_code::invalid_argument);
}

}  // namespace
}  // namespace trialstat

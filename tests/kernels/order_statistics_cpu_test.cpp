// SPDX-License-Identifier: Apache-2.0
// CPU twin of the order statistics (percentiles, top-k sums) vs the naive references.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/cpu_simd.hpp"
#include "kernels/order_statistics/order_statistics_cpu.hpp"
#include "tests/reference/expect_stats.hpp"
#include "tests/reference/reference_rule_stats.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

using reference::data_mode;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// A float64 view over `values` (shape [n]).
struct f64_tensor {
  std::vector<double> values;
  std::vector<int64_t> shape;
  tensor_view view() {
    shape = {static_cast<int64_t>(values.size())};
    return tensor_view{reinterpret_cast<const std::byte*>(values.data()), dtype::float64, shape,
                       static_cast<int64_t>(values.size()), memory_kind::host};
  }
};

std::vector<double> percentiles(std::vector<double> x, std::vector<double> q) {
  f64_tensor t{std::move(x), {}};
  auto r = kernels::compute_percentiles_cpu(t.view(), q);
  EXPECT_TRUE(r.has_value()) << r.error_status().to_string();
  return r.has_value() ? *r : std::vector<double>{};
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

TEST(PercentilesCpu, HandCheckedCases) {
  // [1, 2, 3, 4], q = 5: virtual index 3·0.05 = 0.15 → 1 + (2 − 1)·0.15 = 1.15.
  // q = 50: 1.5 → gamma 0.5 uses b − d·(1 − g) = 3 − 1·0.5 = 2.5. q = 100: the last value, 4.
  const auto r = percentiles({4, 1, 3, 2}, {5, 50, 100, 0});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0], 1.0 + 1.0 * (3.0 * 0.05));
  EXPECT_EQ(r[1], 2.5);
  EXPECT_EQ(r[2], 4.0);
  EXPECT_EQ(r[3], 1.0);
  // One value: every percentile is that value.
  EXPECT_EQ(percentiles({7.5}, {0, 5, 95, 100}), (std::vector<double>{7.5, 7.5, 7.5, 7.5}));
  // numpy's arithmetic with infinities (numpy issues #12282, #21091): [1, 2, inf] q=50 has
  // virtual index 1.0, neighbours 2 and inf, g = 0 → 2 + (inf − 2)·0 = NaN.
  const auto with_inf = percentiles({1, 2, inf}, {0, 25, 50, 100});
  EXPECT_EQ(with_inf[0], 1.0);
  EXPECT_EQ(with_inf[1], 1.5);
  EXPECT_TRUE(std::isnan(with_inf[2]));  // (inf − 2)·0 = NaN, as numpy ≥ 1.22 gives
  EXPECT_TRUE(std::isnan(with_inf[3]));  // last value inf: inf − inf = NaN
  // Any NaN → NaN everywhere; empty → NaN.
  for (const double v : percentiles({1, nan, 3}, {5, 95})) EXPECT_TRUE(std::isnan(v));
  for (const double v : percentiles({}, {5, 95})) EXPECT_TRUE(std::isnan(v));
  // No q: no result.
  EXPECT_TRUE(percentiles({1, 2}, {}).empty());
}

TEST(PercentilesCpu, RejectsOutOfRangeQ) {
  f64_tensor t{{1, 2, 3}, {}};
  for (const double q : {-0.5, 100.5, nan}) {
    const std::vector<double> qs{50, q};
    const auto r = kernels::compute_percentiles_cpu(t.view(), qs);
    ASSERT_FALSE(r.has_value()) << q;
    EXPECT_EQ(r.error_status().code(), error_code::invalid_argument);
  }
}

TEST(PercentilesCpu, MatchesNumpyReferenceForEveryDtype) {
  const std::vector<double> qs = {0, 5, 12.5, 33.3, 50, 66.6, 95, 99.9, 100};
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {1, 2, 3, 10, 1000, 70001}) {
      for (const data_mode mode : {data_mode::normal, data_mode::special, data_mode::bits}) {
        const uint64_t seed = 1000 + static_cast<uint64_t>(n) * 7 + static_cast<uint64_t>(mode);
        const auto bytes = reference::make_tensor_bytes(t, n, mode, seed, 0.5, 40.0);
        std::vector<std::byte> buffer(3);  // odd offset: unaligned data
        buffer.insert(buffer.end(), bytes.begin(), bytes.end());
        const std::vector<int64_t> shape{n};
        const tensor_view v{buffer.data() + 3, t, shape, n, memory_kind::host};
        auto values = reference::element_values(bytes.data(), t, n);
        // Without NaN too (special data usually holds one): replace NaN by a finite value.
        for (const bool drop_nan : {false, true}) {
          std::vector<std::byte> clean;
          tensor_view view = v;
          if (drop_nan) {
            for (auto& x : values) {
              if (std::isnan(x)) x = -3.25;
            }
            clean = reference::encode_values(dtype::float64, values);
            view = tensor_view{clean.data(), dtype::float64, shape, n, memory_kind::host};
          }
          SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n) + " " +
                       reference::to_string(mode) + " seed=" + std::to_string(seed) +
                       (drop_nan ? " (NaN replaced)" : ""));
          const auto r = kernels::compute_percentiles_cpu(view, qs);
          ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
          ASSERT_EQ(r->size(), qs.size());
          for (std::size_t i = 0; i < qs.size(); ++i) {
            const double expected = reference::percentile_numpy(values, qs[i]);
            EXPECT_TRUE(same((*r)[i], expected))
                << "q=" << qs[i] << " got " << (*r)[i] << " expected " << expected;
          }
        }
      }
    }
  }
}

// ---- The radix selection (order_statistics_cpu.cpp) against a full sort, bit for bit ----------
//
// The CPU twin selects on order-preserving keys of the element's own width; −0.0 sorts below
// +0.0 there. The reference converts every element to float64, sorts the copy with that total
// order (std::sort) and applies numpy's arithmetic literally (percentile_numpy_sorted), so the
// results must have the same bits — the sign of a zero result included.

/// Bytes per element of the dtypes of this test.
int element_bytes(dtype t) {
  switch (t) {
    case dtype::float64: case dtype::int64: case dtype::uint64: return 8;
    case dtype::float32: case dtype::int32: case dtype::uint32: return 4;
    case dtype::float16: case dtype::bfloat16: case dtype::int16: case dtype::uint16: return 2;
    default: return 1;
  }
}

bool is_float_dtype(dtype t) {
  return t == dtype::float16 || t == dtype::bfloat16 || t == dtype::float32 ||
         t == dtype::float64;
}

/// Raw little-endian element patterns (low `bytes` bytes of each word) as a tensor buffer.
std::vector<std::byte> pack_patterns(const std::vector<uint64_t>& words, int bytes) {
  std::vector<std::byte> out(words.size() * static_cast<std::size_t>(bytes));
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::memcpy(out.data() + i * static_cast<std::size_t>(bytes), &words[i],
                static_cast<std::size_t>(bytes));
  }
  return out;
}

/// Bit patterns whose order keys (float: sign flipped / all bits flipped; signed: sign flipped)
/// lie within ±3 of a multiple of 2^t for random t — the edges of the selection's buckets at
/// every level. Float NaN patterns are replaced by ±Inf.
std::vector<uint64_t> boundary_patterns(dtype t, int64_t n, std::mt19937_64& rng) {
  const int bits = 8 * element_bytes(t);
  const uint64_t all = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  uint64_t inf_bits = 0;
  if (t == dtype::float64) inf_bits = 0x7FF0000000000000ull;
  if (t == dtype::float32) inf_bits = 0x7F800000u;
  if (t == dtype::float16) inf_bits = 0x7C00u;
  if (t == dtype::bfloat16) inf_bits = 0x7F80u;
  std::vector<uint64_t> out;
  // A few dozen bucket edges, each used many times (duplicates straddling edges).
  std::vector<uint64_t> centres;
  for (int c = 0; c < 24; ++c) {
    const int level = static_cast<int>(rng() % static_cast<uint64_t>(bits));
    uint64_t key = rng() & all;
    key &= ~((uint64_t{1} << level) - 1);  // a multiple of 2^level
    centres.push_back(key);
  }
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t key = (centres[rng() % centres.size()] + (rng() % 7) - 3) & all;
    uint64_t pattern = key;
    if (is_float_dtype(t)) {
      pattern = (key & sign) != 0 ? key ^ sign : ~key & all;
      if ((pattern & ~sign) > inf_bits) pattern = (pattern & sign) | inf_bits;
    } else if (t == dtype::int8 || t == dtype::int16 || t == dtype::int32 || t == dtype::int64) {
      pattern = key ^ sign;
    } else if (t == dtype::boolean) {
      pattern = key & 0xFF;  // any byte: nonzero is true
    }
    out.push_back(pattern);
  }
  return out;
}

/// The data sets of the exactness test as float64 wishes (encoded to the dtype, which rounds and
/// saturates) or, for "boundaries", as raw patterns.
struct case_data {
  std::string name;
  std::vector<std::byte> bytes;
};

std::vector<case_data> selection_cases(dtype t, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.05);
  std::vector<case_data> cases;
  const auto add = [&](std::string name, const std::vector<double>& v) {
    cases.push_back({std::move(name), reference::encode_values(t, v)});
  };
  const double big = t == dtype::float16 ? 60000.0 : t == dtype::bfloat16 ? 3e38 : 1e300;
  const double tiny = t == dtype::float16    ? 6e-8
                      : t == dtype::bfloat16 ? 1e-40
                      : t == dtype::float32  ? 1.4e-45
                                             : 5e-324;
  const double scale = is_float_dtype(t) ? 1.0 : 100.0;  // integers: spread over many values
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = normal(rng) * scale;
  add("normal", v);
  {
    const double pool[] = {-2.5, -1.0, -0.0, 0.0, 1.0, 3.0};
    for (auto& x : v) x = pool[rng() % 6];
    add("duplicates", v);
  }
  add("all equal", std::vector<double>(static_cast<std::size_t>(n), 0.75));
  {
    for (auto& x : v) x = (rng() & 1) != 0 ? -0.0 : 0.0;
    v.front() = -1.0;  // not all zero; ranks still land among the zeros
    v.back() = 1.0;
    add("signed zeros", v);
  }
  if (is_float_dtype(t)) {
    const double pool[] = {inf, -inf, tiny, -tiny, 3 * tiny, big, -big, -0.0, 0.0, 0.5};
    for (auto& x : v) x = (rng() % 3 == 0) ? pool[rng() % 10] : normal(rng);
    add("inf, subnormal, extremes", v);
    for (auto& x : v) x = (rng() & 1) != 0 ? tiny * static_cast<double>(rng() % 9) : -tiny;
    add("subnormals", v);
  }
  {
    // Structure that aliases with the sampled path's stride of 7 elements and with sorted runs:
    // the sample misleads and the exact path has to take over.
    for (int64_t i = 0; i < n; ++i) {
      v[static_cast<std::size_t>(i)] = i % 7 == 0 ? 50.0 + normal(rng) : normal(rng) * scale;
    }
    add("period 7", v);
    std::sort(v.begin(), v.end());
    add("sorted", v);
    std::reverse(v.begin(), v.end());
    add("reversed", v);
  }
  cases.push_back({"boundaries", pack_patterns(boundary_patterns(t, n, rng), element_bytes(t))});
  cases.push_back(
      {"bits", reference::make_tensor_bytes(t, n, data_mode::bits, seed + 1, 0.0, 1.0)});
  return cases;
}

/// float64 values sorted with −0.0 below +0.0.
std::vector<double> sorted_total_order(std::vector<double> v) {
  std::sort(v.begin(), v.end(), [](double a, double b) {
    return a < b || (a == b && std::signbit(a) && !std::signbit(b));
  });
  return v;
}

bool same_bits(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// q lists: many, with repeated and adjacent ranks, 0 and 100, and q that land just either side
// of an element (more windows than the sampled path takes: the exact path); the rules' own
// lists (the sampled path on float32/int32/uint32 from 2^14 elements, AVX-512).
const std::vector<double> selection_qs = {5,   95,    50, 50,          0,  100, 49.99999999,
                                          50.00000001, 33.3, 66.6, 1e-9, 99.999999, 12.5, 25,
                                          75,  5.0000001};
const std::vector<std::vector<double>> selection_q_lists = {
    selection_qs, {5, 50, 95}, {0, 100}, {50}, {5, 95, 5.0000001, 94.9999999}};

/// Percentiles of every case on every ISA this machine runs, against the sorted reference.
void expect_selection_exact(dtype t, int64_t n, uint64_t seed,
                            const std::vector<std::vector<double>>& q_lists = selection_q_lists) {
  for (const case_data& c : selection_cases(t, n, seed)) {
    const auto values = reference::element_values(c.bytes.data(), t, n);
    const auto sorted = sorted_total_order(values);
    // Unaligned data (odd offset) as the decoder may hand it over.
    std::vector<std::byte> buffer(1);
    buffer.insert(buffer.end(), c.bytes.begin(), c.bytes.end());
    const std::vector<int64_t> shape{n};
    const tensor_view view{buffer.data() + 1, t, shape, n, memory_kind::host};
    for (const auto& qs : q_lists) {
      std::vector<double> expected;
      for (const double q : qs) expected.push_back(reference::percentile_numpy_sorted(sorted, q));
      for (int isa = 0; isa <= static_cast<int>(kernels::detected_cpu_isa()); ++isa) {
        kernels::set_cpu_isa_limit(isa);
        SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n) + " " + c.name +
                     " seed=" + std::to_string(seed) + " " + std::to_string(qs.size()) +
                     " q isa=" + kernels::cpu_isa_name(static_cast<kernels::cpu_isa>(isa)));
        const auto r = kernels::compute_percentiles_cpu(view, qs);
        ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
        ASSERT_EQ(r->size(), qs.size());
        for (std::size_t i = 0; i < qs.size(); ++i) {
          EXPECT_TRUE(same_bits((*r)[i], expected[i]))
              << "q=" << qs[i] << " got " << (*r)[i] << " expected " << expected[i];
        }
      }
      kernels::set_cpu_isa_limit(-1);
    }
  }
}

TEST(PercentilesCpuSelection, BitIdenticalToSortedReferenceForEveryDtype) {
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {1, 2, 3, 4, 7, 64, 513, 2049, 16383, 16384, 40000, 70001}) {
      expect_selection_exact(t, n, 9000 + static_cast<uint64_t>(n));
    }
  }
}

TEST(PercentilesCpuSelection, BitIdenticalOnOneMillionElements) {
  // float32: the sampled path (AVX-512) and the exact one; float16: 16-bit keys; int64: 64-bit.
  for (const dtype t : {dtype::float32, dtype::float16, dtype::int64}) {
    expect_selection_exact(t, 1000000, 4242, {selection_qs, {5, 50, 95}});
  }
}

TEST(PercentilesCpuSelection, NanAnywhereGivesNan) {
  // A NaN at the front, in the middle, at the back, of either sign, among values that would
  // otherwise select normally (and among ±Inf, whose buckets NaN shares).
  for (const dtype t : {dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16}) {
    for (const int64_t n : {1, 2, 3, 100, 16384, 70001}) {
      for (const int64_t where : {int64_t{0}, n / 2, n - 1}) {
        for (const double nan_value : {nan, -nan}) {
          for (const bool with_inf : {false, true}) {
            std::vector<double> v(static_cast<std::size_t>(n));
            for (int64_t i = 0; i < n; ++i) {
              v[static_cast<std::size_t>(i)] = 0.25 + 0.001 * static_cast<double>(i % 97);
            }
            if (with_inf && n > 2) v[static_cast<std::size_t>((where + 1) % n)] = inf;
            v[static_cast<std::size_t>(where)] = nan_value;
            const auto bytes = reference::encode_values(t, v);
            const std::vector<int64_t> shape{n};
            const tensor_view view{bytes.data(), t, shape, n, memory_kind::host};
            for (int isa = 0; isa <= static_cast<int>(kernels::detected_cpu_isa()); ++isa) {
              kernels::set_cpu_isa_limit(isa);
              SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n) +
                           " NaN at " + std::to_string(where) + " isa=" + std::to_string(isa));
              const auto r = kernels::compute_percentiles_cpu(view, selection_qs);
              ASSERT_TRUE(r.has_value());
              for (const double x : *r) EXPECT_TRUE(std::isnan(x));
            }
            kernels::set_cpu_isa_limit(-1);
          }
        }
      }
    }
  }
}

TEST(PercentilesCpuSelection, BoolBytesOtherThanOneAreTrue) {
  // DT_BOOL: any nonzero byte is 1.0. Bytes 0 0 2 255 1 → sorted values 0 0 1 1 1:
  // q = 50 → index 2 → 1.0; q = 25 → index 1 → 0.0; q = 45 → 1.8 → 0 + 1·0.8... (lerp(0, 1, 0.8)).
  const std::vector<std::byte> bytes = {std::byte{0}, std::byte{2}, std::byte{255}, std::byte{0},
                                        std::byte{1}};
  const std::vector<int64_t> shape{5};
  const tensor_view view{bytes.data(), dtype::boolean, shape, 5, memory_kind::host};
  const std::vector<double> qs = {50, 25, 45, 100, 0};
  const auto r = kernels::compute_percentiles_cpu(view, qs);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)[0], 1.0);
  EXPECT_EQ((*r)[1], 0.0);
  EXPECT_EQ((*r)[2], reference::percentile_numpy({0, 0, 1, 1, 1}, 45));
  EXPECT_EQ((*r)[3], 1.0);
  EXPECT_EQ((*r)[4], 0.0);
}

TEST(TopKSumCpu, HandCheckedCases) {
  f64_tensor t{{0.1, 0.5, 0.2, 0.15, 0.05}, {}};
  auto r = kernels::compute_top_k_sum_cpu(t.view(), 3);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->k, 3);
  EXPECT_DOUBLE_EQ(r->top_sum, 0.85);
  EXPECT_DOUBLE_EQ(r->total_sum, 1.0);
  EXPECT_EQ(r->max, 0.5);
  // k > n: everything; k = 0: nothing.
  r = kernels::compute_top_k_sum_cpu(t.view(), 99);
  EXPECT_EQ(r->k, 5);
  EXPECT_DOUBLE_EQ(r->top_sum, 1.0);
  r = kernels::compute_top_k_sum_cpu(t.view(), 0);
  EXPECT_EQ(r->k, 0);
  EXPECT_EQ(r->top_sum, 0.0);
  // Empty: zero sums, NaN max. NaN anywhere: NaN sums and max.
  f64_tensor empty{{}, {}};
  r = kernels::compute_top_k_sum_cpu(empty.view(), 2);
  EXPECT_EQ(r->k, 0);
  EXPECT_EQ(r->total_sum, 0.0);
  EXPECT_TRUE(std::isnan(r->max));
  f64_tensor with_nan{{1, nan, 2}, {}};
  r = kernels::compute_top_k_sum_cpu(with_nan.view(), 1);
  EXPECT_TRUE(std::isnan(r->top_sum) && std::isnan(r->total_sum) && std::isnan(r->max));
  // Negative k is rejected.
  EXPECT_EQ(kernels::compute_top_k_sum_cpu(t.view(), -1).error_status().code(),
            error_code::invalid_argument);
}

TEST(TopKSumCpu, MatchesReferenceForEveryDtype) {
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {1, 5, 1000, 200003}) {
      for (const data_mode mode : {data_mode::normal, data_mode::special}) {
        const uint64_t seed = 77 + static_cast<uint64_t>(n) + static_cast<uint64_t>(mode) * 13;
        const auto bytes = reference::make_tensor_bytes(t, n, mode, seed, 2.0, 10.0);
        const std::vector<int64_t> shape{n};
        const tensor_view v{bytes.data(), t, shape, n, memory_kind::host};
        const auto values = reference::element_values(bytes.data(), t, n);
        for (const int64_t k : {int64_t{0}, int64_t{1}, int64_t{3}, n / 2, n + 1}) {
          SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n) + " k=" +
                       std::to_string(k) + " " + reference::to_string(mode) +
                       " seed=" + std::to_string(seed));
          const auto r = kernels::compute_top_k_sum_cpu(v, k);
          ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
          const auto ref = reference::top_k_sum_ref(values, k);
          EXPECT_EQ(r->k, ref.k);
          EXPECT_TRUE(same(r->max, ref.max));
          EXPECT_TRUE(reference::near_scaled("top_sum", r->top_sum, ref.top_sum, ref.top_abs));
          EXPECT_TRUE(
              reference::near_scaled("total_sum", r->total_sum, ref.total_sum, ref.total_abs));
        }
      }
    }
  }
}

}  // namespace
}  // namespace trialstat

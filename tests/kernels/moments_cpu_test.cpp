// SPDX-License-Identifier: Apache-2.0
// CPU twin of the moments statistic vs the long-double reference, typed over every real dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "kernels/common/cpu_simd.hpp"
#include "kernels/moments/moments_cpu.hpp"
#include "kernels/moments/moments_op.hpp"
#include "tests/reference/expect_stats.hpp"
#include "tests/support/record_equality.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

using reference::data_mode;

stats::moments poisoned_moments() {
  stats::moments m;
  m.count = m.nan_count = m.pos_inf_count = m.neg_inf_count = -7;
  m.zero_count = m.positive_count = m.negative_count = -7;
  m.min = m.max = m.sum = m.sum_abs = m.sum_squares = m.max_abs = m.mean = m.m2 =
      std::numeric_limits<double>::quiet_NaN();
  return m;
}

/// Integer dtypes get a scale that spreads values over their range.
double scale_for(dtype t) {
  switch (t) {
    case dtype::int8: return 40.0;
    case dtype::uint8: return 80.0;
    case dtype::int16: case dtype::uint16: return 9000.0;
    case dtype::int32: case dtype::uint32: return 4e8;
    case dtype::int64: case dtype::uint64: return 3e17;
    default: return 1.0;
  }
}
double offset_for(dtype t) {
  switch (t) {
    case dtype::uint8: return 120.0;
    case dtype::uint16: return 30000.0;
    case dtype::uint32: return 2e9;
    case dtype::uint64: return 9e18;
    case dtype::boolean: return 0.3;
    default: return 0.25;
  }
}

std::string describe(dtype t, int64_t n, data_mode mode, uint64_t seed) {
  return std::string("dtype=") + std::string(dtype_name(t)) + " n=" + std::to_string(n) +
         " mode=" + reference::to_string(mode) + " seed=" + std::to_string(seed);
}

template <class Tag>
class MomentsCpuTyped : public ::testing::Test {};

template <dtype D>
using dt = std::integral_constant<dtype, D>;
using all_dtypes =
    ::testing::Types<dt<dtype::float16>, dt<dtype::bfloat16>, dt<dtype::float32>,
                     dt<dtype::float64>, dt<dtype::int8>, dt<dtype::uint8>, dt<dtype::int16>,
                     dt<dtype::uint16>, dt<dtype::int32>, dt<dtype::int64>, dt<dtype::uint32>,
                     dt<dtype::uint64>, dt<dtype::boolean>>;
TYPED_TEST_SUITE(MomentsCpuTyped, all_dtypes);

TYPED_TEST(MomentsCpuTyped, MatchesReferenceAcrossSizesAndModes) {
  constexpr dtype t = TypeParam::value;
  const int64_t sizes[] = {0, 1, 7, 1023, 1024, 1025, 65535, 65536, 65537, 100003};
  for (const data_mode mode : {data_mode::normal, data_mode::special, data_mode::bits}) {
    for (const int64_t n : sizes) {
      const uint64_t seed = 1000u + static_cast<uint64_t>(n) * 7u + static_cast<uint64_t>(mode);
      const auto bytes =
          reference::make_tensor_bytes(t, n, mode, seed, offset_for(t), scale_for(t));
      const stats::segment seg{0, n, t};
      stats::moments out = poisoned_moments();
      ASSERT_TRUE(kernels::compute_moments_cpu(bytes.data(), {&seg, 1}, {&out, 1}).ok());
      const auto ref = reference::compute_moments_ref(reference::element_values(bytes.data(), t, n));
      reference::expect_moments_match(out, ref, describe(t, n, mode, seed));
      if (::testing::Test::HasFailure()) return;  // one failing case is enough output
    }
  }
}

TYPED_TEST(MomentsCpuTyped, ManyUnalignedSegmentsInOneBatch) {
  constexpr dtype t = TypeParam::value;
  // Segments at odd byte offsets, of sizes 0..300 and a few large ones, in one buffer.
  std::mt19937_64 rng(42);
  std::vector<std::byte> buffer;
  std::vector<stats::segment> segments;
  std::vector<std::vector<double>> values;
  for (int i = 0; i < 300; ++i) {
    int64_t n = static_cast<int64_t>(rng() % 300);
    if (i % 97 == 5) n = 70000 + i;
    buffer.resize(buffer.size() + 1 + rng() % 3);  // odd gaps: misalign every dtype
    const auto bytes = reference::make_tensor_bytes(t, n, data_mode::special, 7000u + i,
                                                    offset_for(t), scale_for(t));
    segments.push_back({buffer.size(), n, t});
    buffer.insert(buffer.end(), bytes.begin(), bytes.end());
    values.push_back(reference::element_values(bytes.data(), t, n));
  }
  std::vector<stats::moments> out(segments.size(), poisoned_moments());
  ASSERT_TRUE(kernels::compute_moments_cpu(buffer.data(), segments, out).ok());
  for (std::size_t i = 0; i < segments.size(); ++i) {
    reference::expect_moments_match(out[i], reference::compute_moments_ref(values[i]),
                                    "segment " + std::to_string(i) + " offset " +
                                        std::to_string(segments[i].offset_bytes) + " " +
                                        describe(t, segments[i].num_elements, data_mode::special,
                                                 7000u + i));
    if (::testing::Test::HasFailure()) return;
  }
}

std::vector<std::byte> f64_bytes(const std::vector<double>& v) {
  return reference::encode_values(dtype::float64, v);
}

stats::moments run_f64(const std::vector<double>& v) {
  const auto bytes = f64_bytes(v);
  const stats::segment seg{0, static_cast<int64_t>(v.size()), dtype::float64};
  stats::moments out = poisoned_moments();
  EXPECT_TRUE(kernels::compute_moments_cpu(bytes.data(), {&seg, 1}, {&out, 1}).ok());
  return out;
}

TEST(MomentsCpu, HandCheckedSmallCase) {
  // x = [1, -2, 0, -0.0, NaN, +Inf, -Inf, 4]
  // finite: 1, -2, 0, -0, 4 → n 5, sum 3, Σ|x| 7, Σx² 21, mean 0.6, m2 = 21 − 5·0.36 = 19.2
  const double inf = std::numeric_limits<double>::infinity();
  const stats::moments m =
      run_f64({1.0, -2.0, 0.0, -0.0, std::numeric_limits<double>::quiet_NaN(), inf, -inf, 4.0});
  EXPECT_EQ(m.count, 8);
  EXPECT_EQ(m.nan_count, 1);
  EXPECT_EQ(m.pos_inf_count, 1);
  EXPECT_EQ(m.neg_inf_count, 1);
  EXPECT_EQ(m.zero_count, 2);
  EXPECT_EQ(m.positive_count, 2);
  EXPECT_EQ(m.negative_count, 1);
  EXPECT_EQ(m.min, -2.0);
  EXPECT_EQ(m.max, 4.0);
  EXPECT_EQ(m.sum, 3.0);
  EXPECT_EQ(m.sum_abs, 7.0);
  EXPECT_EQ(m.sum_squares, 21.0);
  EXPECT_EQ(m.max_abs, 4.0);
  EXPECT_DOUBLE_EQ(m.mean, 0.6);
  EXPECT_NEAR(m.m2, 19.2, 1e-13);
  EXPECT_NEAR(m.variance(), 3.84, 1e-14);
}

TEST(MomentsCpu, EmptyAllNanAndSingleElement) {
  const stats::moments empty = run_f64({});
  EXPECT_EQ(empty.count, 0);
  EXPECT_EQ(empty.min, std::numeric_limits<double>::infinity());
  EXPECT_EQ(empty.max, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(empty.mean, 0.0);
  EXPECT_EQ(empty.m2, 0.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const stats::moments all_nan = run_f64(std::vector<double>(3000, nan));
  EXPECT_EQ(all_nan.count, 3000);
  EXPECT_EQ(all_nan.nan_count, 3000);
  EXPECT_FALSE(all_nan.has_finite());
  EXPECT_EQ(all_nan.sum, 0.0);
  const stats::moments one = run_f64({-3.5});
  EXPECT_EQ(one.min, -3.5);
  EXPECT_EQ(one.max, -3.5);
  EXPECT_EQ(one.mean, -3.5);
  EXPECT_EQ(one.m2, 0.0);
  EXPECT_EQ(one.max_abs, 3.5);
}

TEST(MomentsCpu, ConstantTensorHasZeroVarianceAndLargeOffsetIsStable) {
  const stats::moments c = run_f64(std::vector<double>(100003, 0.1));
  EXPECT_EQ(c.min, 0.1);
  EXPECT_EQ(c.max, 0.1);
  EXPECT_NEAR(c.mean, 0.1, 1e-15);
  EXPECT_LE(c.variance(), 1e-30);
  // 1e9 + small noise: the naive Σx² − n·mean² formula loses everything; the two-pass blocks
  // and Chan merges must not.
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 1e-3);
  std::vector<double> v(200000);
  for (auto& x : v) x = 1e9 + noise(rng);
  const stats::moments m = run_f64(v);
  const auto ref = reference::compute_moments_ref(v);
  reference::expect_moments_match(m, ref, "offset 1e9, sd 1e-3, seed 3");
  // Relative to the variance itself (much stricter than the documented scale): numpy reaches
  // ~1e-9 here; so must we.
  EXPECT_NEAR(m.variance() / static_cast<double>(ref.m2 / ref.finite_count), 1.0, 1e-9);
}

TEST(MomentsCpu, OverflowPropagatesLikeNumpy) {
  // numpy: sum([1e308, 1e308]) = inf, mean inf; var: x − mean = −inf → inf.
  const stats::moments m = run_f64({1e308, 1e308});
  EXPECT_EQ(m.sum, std::numeric_limits<double>::infinity());
  EXPECT_EQ(m.sum_squares, std::numeric_limits<double>::infinity());
  EXPECT_EQ(m.min, 1e308);
  EXPECT_EQ(m.max_abs, 1e308);
  EXPECT_EQ(m.positive_count, 2);
}

TEST(MomentsCpu, MergeOfPartsEqualsWhole) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(5.0, 2.0);
  std::vector<double> v(50000);
  for (auto& x : v) x = normal(rng);
  v[17] = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> left(v.begin(), v.begin() + 12345);
  const std::vector<double> right(v.begin() + 12345, v.end());
  const auto a = kernels::load_moments(run_f64(left));
  const auto b = kernels::load_moments(run_f64(right));
  stats::moments merged;
  kernels::store_moments(kernels::merge_moments(a, b), &merged);
  reference::expect_moments_match(merged, reference::compute_moments_ref(v),
                                  "merge of [0,12345) and [12345,50000), seed 11");
}

TEST(MomentsCpu, IntegerConversionRoundsToNearest) {
  // 2^53 + 1 is not a double: numpy's float64(int64) rounds to nearest even → 2^53.
  const std::vector<int64_t> ints = {(int64_t{1} << 53) + 1, -((int64_t{1} << 53) + 3),
                                     INT64_MAX, INT64_MIN};
  std::vector<std::byte> bytes(ints.size() * 8);
  std::memcpy(bytes.data(), ints.data(), bytes.size());
  const stats::segment seg{0, 4, dtype::int64};
  stats::moments m = poisoned_moments();
  ASSERT_TRUE(kernels::compute_moments_cpu(bytes.data(), {&seg, 1}, {&m, 1}).ok());
  EXPECT_EQ(m.max, 9223372036854775808.0);  // INT64_MAX rounds up to 2^63
  EXPECT_EQ(m.min, -9223372036854775808.0);
  const uint64_t big = UINT64_MAX;
  std::vector<std::byte> ub(8);
  std::memcpy(ub.data(), &big, 8);
  const stats::segment useg{0, 1, dtype::uint64};
  ASSERT_TRUE(kernels::compute_moments_cpu(ub.data(), {&useg, 1}, {&m, 1}).ok());
  EXPECT_EQ(m.max, 18446744073709551616.0);
}

TEST(MomentsCpu, DeterministicAcrossThreadCounts) {
#if defined(_OPENMP)
  const auto bytes = reference::make_tensor_bytes(dtype::float32, 1000003, data_mode::special, 5,
                                                  0.5, 3.0);
  std::vector<stats::segment> segs = {{0, 1000003, dtype::float32},
                                      {4, 1000, dtype::float32},
                                      {401, 300000, dtype::float32}};
  std::vector<stats::moments> one(3), two(3);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  ASSERT_TRUE(kernels::compute_moments_cpu(bytes.data(), segs, one).ok());
  omp_set_num_threads(2);
  ASSERT_TRUE(kernels::compute_moments_cpu(bytes.data(), segs, two).ok());
  omp_set_num_threads(saved);
  for (std::size_t i = 0; i < segs.size(); ++i) {
    EXPECT_EQ(std::memcmp(&one[i], &two[i], sizeof(stats::moments)), 0) << "segment " << i;
  }
#else
  GTEST_SKIP() << "built without OpenMP";
#endif
}

TEST(MomentsCpu, RejectsBadArguments) {
  const stats::segment bad_type{0, 4, dtype::complex64};
  std::vector<std::byte> bytes(64);
  stats::moments m;
  status s = kernels::compute_moments_cpu(bytes.data(), {&bad_type, 1}, {&m, 1});
  EXPECT_EQ(s.code(), error_code::unsupported_dtype);
  EXPECT_NE(s.message().find("segment 0"), std::string::npos) << s.message();
  const stats::segment str{0, 1, dtype::string};
  EXPECT_EQ(kernels::compute_moments_cpu(bytes.data(), {&str, 1}, {&m, 1}).code(),
            error_code::unsupported_dtype);
  const stats::segment ok{0, 4, dtype::float32};
  EXPECT_EQ(kernels::compute_moments_cpu(bytes.data(), {&ok, 1}, {}).code(),
            error_code::invalid_argument);
  EXPECT_EQ(kernels::compute_moments_cpu(nullptr, {&ok, 1}, {&m, 1}).code(),
            error_code::invalid_argument);
  const stats::segment negative{0, -1, dtype::float32};
  EXPECT_EQ(kernels::compute_moments_cpu(bytes.data(), {&negative, 1}, {&m, 1}).code(),
            error_code::invalid_argument);
}

// float32 blocks take their extremes and zero/positive counts in 16 float32 lanes; float64
// blocks keep 8 float64 lanes. The same values as float32 and as float64 must therefore give
// bit-identical records (every double field by its bits), on every ISA: signed zeros alone and
// mixed (−0.0 below +0.0), ±Inf and NaN in the 16-lane part or the 8-lane remainder, sizes
// around multiples of 8 and 16, and a constant block.
TEST(MomentsCpu, Float32RecordsEqualFloat64RecordsOfTheSameValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::mt19937_64 rng(42);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<std::vector<float>> cases = {{-0.0f}, {0.0f, -0.0f}, std::vector<float>(37, -0.0f),
                                           std::vector<float>(16, 2.5f)};
  std::vector<float> zeros(48, 0.0f);
  zeros[5] = -0.0f;
  zeros[40] = -0.0f;
  cases.push_back(zeros);
  // A lane that meets +0.0 before −0.0 (minimum), and −0.0 before +0.0 (maximum).
  std::vector<float> late_negative_zero(48, 0.0f);
  late_negative_zero[37] = -0.0f;
  cases.push_back(late_negative_zero);
  std::vector<float> late_positive_zero(48, -0.0f);
  late_positive_zero[40] = 0.0f;
  cases.push_back(late_positive_zero);
  for (const int64_t n : {int64_t{15}, int64_t{16}, int64_t{17}, int64_t{24}, int64_t{1023},
                          int64_t{1024}, int64_t{1031}, int64_t{3000}}) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v) x = normal(rng);
    cases.push_back(v);
    for (const float special : {inf, -inf, nan, 0.0f, -0.0f}) {
      for (const int64_t at : {int64_t{0}, n - 1, n / 2}) {  // 16-lane part and remainder
        std::vector<float> w = v;
        w[static_cast<std::size_t>(at)] = special;
        cases.push_back(w);
      }
    }
  }
  for (const int isa : {0, 1, 2}) {
    kernels::set_cpu_isa_limit(isa);
    for (const auto& v : cases) {
      std::vector<double> d(v.begin(), v.end());
      std::vector<std::byte> f32(v.size() * 4);
      if (!v.empty()) std::memcpy(f32.data(), v.data(), f32.size());
      const stats::segment seg{0, static_cast<int64_t>(v.size()), dtype::float32};
      stats::moments a = poisoned_moments();
      ASSERT_TRUE(kernels::compute_moments_cpu(f32.data(), {&seg, 1}, {&a, 1}).ok());
      const stats::moments b = run_f64(d);
      testing::expect_identical_moments(
          a, b, "isa " + std::to_string(isa) + ", " + std::to_string(v.size()) + " elements");
    }
  }
  kernels::set_cpu_isa_limit(-1);
}

}  // namespace
}  // namespace trialstat

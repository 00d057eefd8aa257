// SPDX-License-Identifier: Apache-2.0
// CPU twin of the histogram vs the numpy-literal reference (tests/reference), typed over every
// real dtype, plus hand-checked edge cases (values on edges, widened and degenerate ranges).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/histogram/histogram_cpu.hpp"
#include "kernels/histogram/histogram_op.hpp"
#include "kernels/moments/moments_cpu.hpp"
#include "tests/kernels/for_each_isa.hpp"
#include "tests/reference/expect_stats.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

using reference::data_mode;

stats::histogram poisoned_histogram() {
  stats::histogram h;
  h.bins = -3;
  h.lo = h.hi = std::numeric_limits<double>::quiet_NaN();
  h.degenerate = true;
  h.counts.assign(5, -9);
  return h;
}

/// Moments then histograms of the given segments through the CPU twins.
std::vector<stats::histogram> run(const std::vector<std::byte>& buffer,
                                  const std::vector<stats::segment>& segments, int bins) {
  std::vector<stats::moments> m(segments.size());
  EXPECT_TRUE(kernels::compute_moments_cpu(buffer.data(), segments, m).ok());
  std::vector<stats::histogram> h(segments.size(), poisoned_histogram());
  const status s = kernels::compute_histograms_cpu(buffer.data(), segments, m, bins, h);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return h;
}

stats::histogram run_f64(const std::vector<double>& v, int bins = 64) {
  const auto bytes = reference::encode_values(dtype::float64, v);
  return run(bytes, {{0, static_cast<int64_t>(v.size()), dtype::float64}}, bins)[0];
}

template <dtype D>
using dt = std::integral_constant<dtype, D>;
using all_dtypes =
    ::testing::Types<dt<dtype::float16>, dt<dtype::bfloat16>, dt<dtype::float32>,
                     dt<dtype::float64>, dt<dtype::int8>, dt<dtype::uint8>, dt<dtype::int16>,
                     dt<dtype::uint16>, dt<dtype::int32>, dt<dtype::int64>, dt<dtype::uint32>,
                     dt<dtype::uint64>, dt<dtype::boolean>>;
template <class Tag>
class HistogramCpuTyped : public ::testing::Test {};
TYPED_TEST_SUITE(HistogramCpuTyped, all_dtypes);

TYPED_TEST(HistogramCpuTyped, MatchesNumpyReference) {
  constexpr dtype t = TypeParam::value;
  const int64_t sizes[] = {0, 1, 7, 1023, 1024, 1025, 65537, 100003};
  for (const int bins : {64, 1, 7, 1000}) {
    for (const data_mode mode : {data_mode::normal, data_mode::special, data_mode::bits}) {
      for (const int64_t n : sizes) {
        const uint64_t seed = 500u + static_cast<uint64_t>(n) + 13u * static_cast<uint64_t>(bins);
        const auto bytes = reference::make_tensor_bytes(t, n, mode, seed, 0.25, 100.0);
        // Place the tensor at an odd offset inside a bigger buffer.
        // (Sized first: GCC 12's -Warray-bounds misreads an insert after 3 bytes.)
        std::vector<std::byte> buffer(3 + bytes.size());
        std::copy(bytes.begin(), bytes.end(), buffer.begin() + 3);
        const auto h = run(buffer, {{3, n, t}}, bins)[0];
        const auto values = reference::element_values(bytes.data(), t, n);
        reference::expect_histogram_match(
            h, reference::compute_histogram_numpy(values, bins),
            std::string("dtype=") + std::string(dtype_name(t)) + " n=" + std::to_string(n) +
                " bins=" + std::to_string(bins) + " mode=" + reference::to_string(mode) +
                " seed=" + std::to_string(seed));
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

/// The small-chunk paths of chunk_histogram (histogram_cpu.cpp: ≤ 64 elements add one by one
/// into the int64 counts, ≤ 256 count into one sub-histogram, more into four) around their
/// thresholds, also as the last chunk of a larger tensor (counts already non-zero), through both
/// the batch entry and the per-tensor one the blocked executor uses.
template <dtype t>
void small_chunk_paths_match() {
  const int64_t sizes[] = {2, 15, 16, 17, 63, 64, 65, 255, 256, 257, 65536 + 16, 65536 + 200};
  for (const int bins : {64, 7, 1000}) {
    for (const data_mode mode : {data_mode::normal, data_mode::special}) {
      for (const int64_t n : sizes) {
        const uint64_t seed = 900u + static_cast<uint64_t>(n) + 17u * static_cast<uint64_t>(bins);
        const auto bytes = reference::make_tensor_bytes(t, n, mode, seed, 0.25, 100.0);
        const std::string where = std::string("dtype=") + std::string(dtype_name(t)) +
                                  " n=" + std::to_string(n) + " bins=" + std::to_string(bins) +
                                  " mode=" + reference::to_string(mode) + " seed=" + std::to_string(seed);
        const auto want = reference::compute_histogram_numpy(reference::element_values(bytes.data(), t, n), bins);
        const stats::segment seg{0, n, t};
        reference::expect_histogram_match(run(bytes, {seg}, bins)[0], want, where + " (batch)");
        const stats::moments m = kernels::segment_moments_cpu(bytes.data(), seg);
        stats::histogram h = poisoned_histogram();
        ASSERT_TRUE(kernels::segment_histogram_cpu(bytes.data(), seg, m, bins, h).ok()) << where;
        reference::expect_histogram_match(h, want, where + " (per tensor)");
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TYPED_TEST(HistogramCpuTyped, SmallChunkPathsMatchNumpyReference) {
  test_isa::for_each_isa([] { small_chunk_paths_match<TypeParam::value>(); });
}

TEST(HistogramReference, NumpyRuleEqualsTextbookOnOrdinaryData) {
  // Sanity check of the reference itself: with ordinary ranges numpy's guess is within one bin,
  // so its corrected index is the edge-containment bin.
  std::mt19937_64 rng(99);
  std::normal_distribution<double> normal(3.0, 7.0);
  std::vector<double> v(20000);
  for (auto& x : v) x = normal(rng);
  const auto numpy = reference::compute_histogram_numpy(v, 64);
  const auto textbook = reference::compute_histogram_textbook(v, 64);
  EXPECT_EQ(numpy.counts, textbook.counts);
}

TEST(HistogramCpu, ValuesExactlyOnEdges) {
  // Data = the 65 linspace edges of [−1.7, 2.3] themselves, plus each edge's neighbours.
  // Edge i (< 64) opens bin i; the last edge (= max) closes bin 63.
  const auto ref_edges = reference::compute_histogram_numpy({-1.7, 2.3}, 64).edges;
  ASSERT_EQ(ref_edges.size(), 65u);
  const auto edges_only = run_f64(ref_edges);
  ASSERT_EQ(edges_only.bins, 64);
  for (int i = 0; i < 63; ++i) EXPECT_EQ(edges_only.counts[static_cast<std::size_t>(i)], 1) << i;
  EXPECT_EQ(edges_only.counts[63], 2);
  std::vector<double> v = ref_edges;
  for (std::size_t i = 1; i + 1 < ref_edges.size(); ++i) {
    v.push_back(std::nextafter(ref_edges[i], -INFINITY));
    v.push_back(std::nextafter(ref_edges[i], INFINITY));
  }
  reference::expect_histogram_match(run_f64(v), reference::compute_histogram_numpy(v, 64),
                                    "edges and neighbours of linspace(-1.7, 2.3, 65)");
  // Verified against numpy 2.4.6: same counts as the textbook definition.
  EXPECT_EQ(run_f64(v).counts, reference::compute_histogram_textbook(v, 64).counts);
}

TEST(HistogramCpu, ScalarAndConstantTensorsWiden) {
  // numpy.histogram([3.0], 64, range=(3, 3)) → range [2.5, 3.5], the value in bin 32.
  const auto scalar = run_f64({3.0});
  EXPECT_EQ(scalar.bins, 64);
  EXPECT_EQ(scalar.lo, 2.5);
  EXPECT_EQ(scalar.hi, 3.5);
  EXPECT_FALSE(scalar.degenerate);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(scalar.counts[static_cast<std::size_t>(i)], i == 32 ? 1 : 0);
  const auto constant = run_f64(std::vector<double>(5000, -0.25));
  EXPECT_EQ(constant.counts[32], 5000);
  const auto three_bins = run_f64({7.0}, 3);  // bins/2 = 1
  EXPECT_EQ(three_bins.counts, (std::vector<int64_t>{0, 1, 0}));
}

TEST(HistogramCpu, DegenerateWhenWideningIsLostToRounding) {
  // 1e17 ± 0.5 == 1e17: every value in bin 32, lo == hi == min, degenerate.
  const double inf = std::numeric_limits<double>::infinity();
  const auto h = run_f64({1e17, std::numeric_limits<double>::quiet_NaN(), 1e17, inf});
  EXPECT_EQ(h.bins, 64);
  EXPECT_TRUE(h.degenerate);
  EXPECT_EQ(h.lo, 1e17);
  EXPECT_EQ(h.hi, 1e17);
  EXPECT_EQ(h.counts[32], 2);
  int64_t total = 0;
  for (const auto c : h.counts) total += c;
  EXPECT_EQ(total, 2);
}

TEST(HistogramCpu, NoFiniteValuesGivesNoBins) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& v : {std::vector<double>{}, std::vector<double>{nan, nan},
                        std::vector<double>{inf, -inf, nan}}) {
    const auto h = run_f64(v);
    EXPECT_EQ(h.bins, 0);
    EXPECT_TRUE(h.counts.empty());
    EXPECT_FALSE(h.degenerate);
  }
}

TEST(HistogramCpu, InfinitiesAndNanAreNotBinned) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto h = run_f64({0.0, 1.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(), 0.5});
  EXPECT_EQ(h.lo, 0.0);
  EXPECT_EQ(h.hi, 1.0);
  EXPECT_EQ(h.counts[0], 1);
  EXPECT_EQ(h.counts[32], 1);
  EXPECT_EQ(h.counts[63], 1);
}

TEST(HistogramCpu, CoarseEdgesFollowNumpysBinningRule) {
  // [1e16, 1e16 + 4] with 64 bins: consecutive edges coincide (ulp(1e16) = 2). numpy ≥ 2 raises
  // "Too many bins for data range" here; trialstat bins by numpy's rule (guess + one correction).
  std::vector<double> v = {1e16, 1e16 + 2, 1e16 + 4, 1e16 + 2};
  reference::expect_histogram_match(run_f64(v), reference::compute_histogram_numpy(v, 64),
                                    "[1e16, 1e16+4]");
  // Denormal range: step underflows to 0 (linspace's other branch).
  std::vector<double> d = {0.0, 4.9406564584124654e-324, 4.9406564584124654e-324};
  reference::expect_histogram_match(run_f64(d), reference::compute_histogram_numpy(d, 64),
                                    "[0, 5e-324]");
}

TEST(HistogramCpu, ManySegmentsAndLargeTensorsInOneBatch) {
  std::mt19937_64 rng(8);
  std::vector<std::byte> buffer;
  std::vector<stats::segment> segments;
  std::vector<std::vector<double>> values;
  const auto& types = reference::real_dtypes();
  for (int i = 0; i < 400; ++i) {
    const dtype t = types[static_cast<std::size_t>(i) % types.size()];
    int64_t n = static_cast<int64_t>(rng() % 200);
    if (i % 101 == 3) n = 150000;
    buffer.resize(buffer.size() + 1 + rng() % 5);
    const auto bytes = reference::make_tensor_bytes(t, n, data_mode::special, 900u + i, 1.0, 50.0);
    segments.push_back({buffer.size(), n, t});
    buffer.insert(buffer.end(), bytes.begin(), bytes.end());
    values.push_back(reference::element_values(bytes.data(), t, n));
  }
  const auto h = run(buffer, segments, 64);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    reference::expect_histogram_match(h[i], reference::compute_histogram_numpy(values[i], 64),
                                      "segment " + std::to_string(i) + " seed " +
                                          std::to_string(900u + i));
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(HistogramCpu, RejectsBadArguments) {
  const std::vector<std::byte> bytes(16);
  const stats::segment seg{0, 2, dtype::float64};
  stats::moments m;
  stats::histogram h;
  EXPECT_EQ(kernels::compute_histograms_cpu(bytes.data(), {&seg, 1}, {&m, 1}, 0, {&h, 1}).code(),
            error_code::invalid_argument);
  EXPECT_EQ(kernels::compute_histograms_cpu(bytes.data(), {&seg, 1}, {}, 64, {&h, 1}).code(),
            error_code::invalid_argument);
  const stats::segment cplx{0, 1, dtype::complex128};
  EXPECT_EQ(kernels::compute_histograms_cpu(bytes.data(), {&cplx, 1}, {&m, 1}, 64, {&h, 1}).code(),
            error_code::unsupported_dtype);
}

}  // namespace
}  // namespace trialstat

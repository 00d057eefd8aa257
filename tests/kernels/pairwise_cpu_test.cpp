// SPDX-License-Identifier: Apache-2.0
// CPU twin of the pairwise statistics vs the long-double reference with numpy 1.x's isclose.
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

#include "kernels/pairwise/pairwise_cpu.hpp"
#include "tests/reference/expect_stats.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

using reference::data_mode;

tensor_view view(const std::vector<std::byte>& bytes, dtype t, int64_t n) {
  tensor_view v;
  v.data = bytes.data();
  v.type = t;
  v.num_elements = n;
  return v;
}

/// b = a perturbed: most elements within tolerance, some far, some equal, some specials.
std::vector<double> perturb(const std::vector<double>& a, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> b = a;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (auto& x : b) {
    switch (rng() % 8) {
      case 0: break;                                   // equal
      case 1: x = x * (1 + 1e-7); break;               // close
      case 2: x = x + 1e-9; break;                     // close (atol)
      case 3: x = x * 1.001 + 0.01; break;             // not close
      case 4: x = (rng() % 2) ? nan : x; break;        // NaN vs value or NaN vs NaN
      case 5: x = (rng() % 3 == 0) ? inf : x; break;   // Inf
      case 6: x = -x; break;
      default: x = x + 1e-5 * std::fabs(x); break;     // near the rtol boundary
    }
  }
  return b;
}

template <dtype D>
using dt = std::integral_constant<dtype, D>;
using all_dtypes =
    ::testing::Types<dt<dtype::float16>, dt<dtype::bfloat16>, dt<dtype::float32>,
                     dt<dtype::float64>, dt<dtype::int8>, dt<dtype::uint8>, dt<dtype::int16>,
                     dt<dtype::uint16>, dt<dtype::int32>, dt<dtype::int64>, dt<dtype::uint32>,
                     dt<dtype::uint64>, dt<dtype::boolean>>;
template <class Tag>
class PairwiseCpuTyped : public ::testing::Test {};
TYPED_TEST_SUITE(PairwiseCpuTyped, all_dtypes);

TYPED_TEST(PairwiseCpuTyped, MatchesReference) {
  constexpr dtype t = TypeParam::value;
  for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1025}, int64_t{65537},
                          int64_t{100003}}) {
    for (const bool equal_nan : {false, true}) {
      const uint64_t seed = 77u + static_cast<uint64_t>(n);
      const auto a_bytes = reference::make_tensor_bytes(t, n, data_mode::special, seed, 0.5, 30.0);
      const auto a = reference::element_values(a_bytes.data(), t, n);
      // current: the perturbed values, encoded as float64 when t cannot hold them (so that the
      // pair is mixed-dtype), else as t.
      const auto b = perturb(a, seed + 1);
      const dtype tb = (t == dtype::float64 || t == dtype::float32) ? t : dtype::float64;
      const auto b_bytes = reference::encode_values(tb, b);
      const auto b_values = reference::element_values(b_bytes.data(), tb, n);
      const stats::allclose_params params{1e-5, 1e-8, equal_nan};
      const auto r = kernels::compute_pairwise_cpu(view(a_bytes, t, n), view(b_bytes, tb, n), params);
      ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
      reference::expect_pairwise_match(
          *r, reference::compute_pairwise_ref(a, b_values, 1e-5, 1e-8, equal_nan),
          std::string("dtype=") + std::string(dtype_name(t)) + " n=" + std::to_string(n) +
              " equal_nan=" + (equal_nan ? "1" : "0") + " seed=" + std::to_string(seed));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(PairwiseCpu, HandCheckedIsClose) {
  // a (previous) vs b (current), rtol 1e-5, atol 1e-8:
  //   1 vs 1+1e-6        close (|d| = 1e-6 ≤ 1e-8 + 1e-5·1)
  //   1 vs 1.001         not close
  //   inf vs inf         close;  inf vs -inf  not close;  1 vs inf  not close
  //   nan vs nan         not close (equal_nan false)
  //   0 vs 1e-9          close (atol)
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> a = {1, 1, inf, inf, 1, nan, 0};
  const std::vector<double> b = {1 + 1e-6, 1.001, inf, -inf, inf, nan, 1e-9};
  const auto ab = reference::encode_values(dtype::float64, a);
  const auto bb = reference::encode_values(dtype::float64, b);
  auto r = kernels::compute_pairwise_cpu(view(ab, dtype::float64, 7), view(bb, dtype::float64, 7),
                                         {});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->count, 7);
  EXPECT_EQ(r->allclose_violations, 4);
  EXPECT_EQ(r->nan_mismatches, 0);                     // the NaN faces a NaN
  EXPECT_TRUE(std::isnan(r->diff_sum_squares));       // inf − inf and nan propagate
  EXPECT_TRUE(std::isnan(r->previous_sum_squares));   // a has NaN
  EXPECT_EQ(r->diff_max_abs, inf);                     // |−inf − inf| = inf; NaN diffs skipped
  r = kernels::compute_pairwise_cpu(view(ab, dtype::float64, 7), view(bb, dtype::float64, 7),
                                    {1e-5, 1e-8, true});
  EXPECT_EQ(r->allclose_violations, 3);
}

TEST(PairwiseCpu, ExactReplicaSemantics) {
  // ReplicaConsistency's defaults: rtol = atol = 0, equal_nan. a (a worker) vs b (reference):
  //   -0 vs +0 equal; NaN vs NaN equal; NaN vs 1, 2 vs NaN, NaN vs inf differ (3 NaN
  //   mismatches); inf vs inf equal; 1 vs nextafter(1) differs by one ulp (2^-52).
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double up = std::nextafter(1.0, 2.0);
  const std::vector<double> a = {-0.0, nan, nan, 2, nan, inf, 1, 5};
  const std::vector<double> b = {0.0, nan, 1, nan, inf, inf, up, 5};
  const auto ab = reference::encode_values(dtype::float64, a);
  const auto bb = reference::encode_values(dtype::float64, b);
  const auto r = kernels::compute_pairwise_cpu(view(ab, dtype::float64, 8),
                                               view(bb, dtype::float64, 8), {0.0, 0.0, true});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->count, 8);
  EXPECT_EQ(r->allclose_violations, 4);
  EXPECT_EQ(r->nan_mismatches, 3);
  EXPECT_EQ(r->diff_max_abs, std::ldexp(1.0, -52));
  // rtol scales by |b| (the reference): |1 − 1.5| = 0.5 ≤ 0.5·|1| but not ≤ 0.25·|1|.
  const auto x = reference::encode_values(dtype::float32, {1.5f});
  const auto y = reference::encode_values(dtype::float32, {1.0f});
  EXPECT_EQ(kernels::compute_pairwise_cpu(view(x, dtype::float32, 1), view(y, dtype::float32, 1),
                                          {0.5, 0.0, true})->allclose_violations, 0);
  EXPECT_EQ(kernels::compute_pairwise_cpu(view(x, dtype::float32, 1), view(y, dtype::float32, 1),
                                          {0.25, 0.0, true})->allclose_violations, 1);
}

TEST(PairwiseCpu, WeightUpdateRatioInputs) {
  // ‖b − a‖ and ‖a‖ for a = [3, 4], b = [3, 5]: diff² = 1, a² = 25.
  const auto ab = reference::encode_values(dtype::float32, {3, 4});
  const auto bb = reference::encode_values(dtype::float32, {3, 5});
  const auto r = kernels::compute_pairwise_cpu(view(ab, dtype::float32, 2),
                                               view(bb, dtype::float32, 2), {});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->diff_l2(), 1.0);
  EXPECT_EQ(r->previous_l2(), 5.0);
  EXPECT_EQ(r->diff_max_abs, 1.0);
  EXPECT_FALSE(r->all_close());
}

TEST(PairwiseCpu, DeterministicAcrossThreadCounts) {
#if defined(_OPENMP)
  const int64_t n = 700001;
  const auto a = reference::make_tensor_bytes(dtype::float32, n, data_mode::normal, 1, 0, 1);
  const auto b = reference::make_tensor_bytes(dtype::float32, n, data_mode::normal, 2, 0, 1);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = kernels::compute_pairwise_cpu(view(a, dtype::float32, n), view(b, dtype::float32, n), {});
  omp_set_num_threads(2);
  const auto two = kernels::compute_pairwise_cpu(view(a, dtype::float32, n), view(b, dtype::float32, n), {});
  omp_set_num_threads(saved);
  ASSERT_TRUE(one.has_value() && two.has_value());
  EXPECT_EQ(std::memcmp(&*one, &*two, sizeof(stats::pairwise)), 0);
#else
  GTEST_SKIP() << "built without OpenMP";
#endif
}

TEST(PairwiseCpu, RejectsMismatchedCountsAndBadTypes) {
  const std::vector<std::byte> bytes(64);
  auto r = kernels::compute_pairwise_cpu(view(bytes, dtype::float32, 4), view(bytes, dtype::float32, 5), {});
  EXPECT_EQ(r.error_status().code(), error_code::invalid_argument);
  r = kernels::compute_pairwise_cpu(view(bytes, dtype::string, 1), view(bytes, dtype::float32, 1), {});
  EXPECT_EQ(r.error_status().code(), error_code::unsupported_dtype);
}

}  // namespace
}  // namespace trialstat

// SPDX-License-Identifier: Apache-2.0
// detail::write_shortest_double against fmt::format("{}", v), the text the JSON rows had before
// it (and must keep byte for byte): every layout boundary (the exponents −5/−4 and 15/16, the
// 8- and 16-digit significand blocks), signed zero, subnormals, the extremes, float32 values
// widened (what the statistics of float32 tensors are), and random bit patterns.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "host/report/shortest_double.hpp"

namespace trialstat::report {
namespace {

std::string shortest(double v) {
  char buffer[detail::shortest_double_max_chars + detail::shortest_double_slack_bytes];
  std::memset(buffer, '#', sizeof buffer);
  const char* end = detail::write_shortest_double(v, buffer);
  EXPECT_LE(end - buffer, detail::shortest_double_max_chars) << fmt::format("{}", v);
  return std::string(static_cast<const char*>(buffer), end);
}

void expect_as_fmt(double v) {
  ASSERT_EQ(shortest(v), fmt::format("{}", v)) << "bits 0x" << std::hex << std::bit_cast<uint64_t>(v);
}

TEST(ShortestDouble, HandPickedTexts) {
  EXPECT_EQ(shortest(0.0), "0");
  EXPECT_EQ(shortest(-0.0), "-0");
  EXPECT_EQ(shortest(3.0), "3");
  EXPECT_EQ(shortest(-1200.0), "-1200");
  EXPECT_EQ(shortest(0.001), "0.001");
  EXPECT_EQ(shortest(0.0001), "0.0001");
  EXPECT_EQ(shortest(0.00001), "1e-05");
  EXPECT_EQ(shortest(1.5e-5), "1.5e-05");
  EXPECT_EQ(shortest(123.25), "123.25");
  EXPECT_EQ(shortest(1e15), "1000000000000000");
  EXPECT_EQ(shortest(1e16), "1e+16");
  EXPECT_EQ(shortest(1.25e16), "1.25e+16");
  EXPECT_EQ(shortest(0.1), "0.1");
  EXPECT_EQ(shortest(DBL_MAX), "1.7976931348623157e+308");
  EXPECT_EQ(shortest(-DBL_MIN), "-2.2250738585072014e-308");
  EXPECT_EQ(shortest(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(shortest(0.24970728158950806), "0.24970728158950806");
}

TEST(ShortestDouble, LayoutBoundariesMatchFmt) {
  // Every power of ten and its neighbours, scaled by significands of 1 to 17 digits.
  const double significands[] = {1.0, 9.0, 1.5, 9.999, 1.2345678, 9.8765432, 1.23456789,
                                 1.2345678901234567, 9.999999999999998, 4.940656458412465,
                                 2.2250738585072014, 1.7976931348623157};
  for (int e = -325; e <= 308; ++e) {
    for (const double s : significands) {
      const double v = std::strtod(fmt::format("{}e{}", s, e).c_str(), nullptr);  // may underflow to 0
      if (!std::isfinite(v)) continue;
      for (const double x : {v, std::nextafter(v, 0.0), std::nextafter(v, HUGE_VAL), -v}) {
        if (std::isfinite(x)) expect_as_fmt(x);
      }
    }
  }
}

TEST(ShortestDouble, IntegersAndDigitBlocksMatchFmt) {
  for (uint64_t p = 1; p <= 100000000000000000ULL; p *= 10) {
    for (const uint64_t k : {p - 1, p, p + 1, 2 * p + 3, 7 * p / 3}) {
      expect_as_fmt(static_cast<double>(k));
      expect_as_fmt(static_cast<double>(k) / 1e8);
      expect_as_fmt(static_cast<double>(k) * 1e-17);
    }
  }
}

TEST(ShortestDouble, RandomValuesMatchFmt) {
  const unsigned seed = 20261126;
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> scale(-12, 20);
  for (int i = 0; i < 200000; ++i) {
    double bits_value = std::bit_cast<double>(rng());
    if (std::isfinite(bits_value)) expect_as_fmt(bits_value);
    const double statistic = unit(rng) * std::pow(10.0, scale(rng));  // the scales rows hold
    expect_as_fmt(statistic);
    expect_as_fmt(static_cast<double>(static_cast<float>(statistic)));  // a float32 min/max
  }
}

}  // namespace
}  // namespace trialstat::report

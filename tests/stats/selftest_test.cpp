// SPDX-License-Identifier: Apache-2.0
// stats::run_selftest (`trialstat selftest`): on the CPU every statistic is checked over every
// dtype at each SIMD level against the baseline and passes; the comparison catches a one-ulp
// change of an exact float and a count off by one (the perturbation hook); CUDA is refused
// without a device, and with one (suite gpu_selftest) CUDA equals the CPU twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kernels/common/cpu_simd.hpp"
#include "tests/support/gpu.hpp"
#include "trialstat/dtype.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/selftest.hpp"

namespace trialstat {
namespace {

const std::vector<std::string> all_statistics = {
    "moments",  "histogram", "log_histogram", "pairwise",  "axis0_counts", "percentiles",
    "count_equal", "channel_sums", "bincount", "confusion", "top_k_sum", "executor"};
const std::set<std::string> batch_only = {"moments", "histogram", "log_histogram", "executor"};
const std::vector<std::string> dtype_names = {"float32", "float64", "float16", "bfloat16", "int8",
                                              "uint8",   "int16",   "uint16",  "int32",    "uint32",
                                              "int64",   "uint64",  "bool"};

/// The comparisons of the CPU levels: "avx2 vs baseline", ... (or the baseline run twice).
std::vector<std::string> cpu_backends() {
  std::vector<std::string> out;
  const int detected = static_cast<int>(kernels::detected_cpu_isa());
  for (int level = 1; level <= detected; ++level) {
    out.push_back(std::string(kernels::cpu_isa_name(static_cast<kernels::cpu_isa>(level))) + " vs baseline");
  }
  if (out.empty()) out.push_back("baseline vs baseline");
  return out;
}

const stats::selftest_check* find(const stats::selftest_report& r, const std::string& statistic,
                                  const std::string& data, const std::string& backends) {
  for (const auto& c : r.checks) {
    if (c.statistic == statistic && c.data_case == data && c.backends == backends) return &c;
  }
  return nullptr;
}

TEST(Selftest, CpuLevelsCoverEveryStatisticAndDtypeAndPass) {
  const kernels::cpu_isa before = kernels::active_cpu_isa();  // TRIALSTAT_CPU_ISA may cap it
  const auto report = stats::run_selftest({});
  ASSERT_TRUE(report.has_value()) << report.error_status().to_string();
  for (const auto& c : report->checks) {
    EXPECT_TRUE(c.passed) << c.statistic << " " << c.data_case << " " << c.backends << ": " << c.mismatch;
    EXPECT_EQ(c.max_count_difference, 0) << c.statistic << " " << c.data_case;
    // CPU levels are bit-identical (kernels/common/cpu_simd.hpp).
    EXPECT_EQ(c.max_relative_difference, 0.0) << c.statistic << " " << c.data_case;
  }
  EXPECT_TRUE(report->passed());
  const auto backends = cpu_backends();
  // 12 statistics × 13 dtypes, plus the 4 batch statistics over "tiny", per compared level.
  EXPECT_EQ(report->checks.size(), backends.size() * (12 * 13 + 4));
  for (const auto& b : backends) {
    for (const auto& s : all_statistics) {
      for (const auto& d : dtype_names) EXPECT_NE(find(*report, s, d, b), nullptr) << s << " " << d << " " << b;
      EXPECT_EQ(find(*report, s, "tiny", b) != nullptr, batch_only.count(s) == 1) << s << " tiny " << b;
    }
  }
  // Elements per dtype batch: specials 1001 + bin_edges 196 (0..64 with their neighbours: 2 + 64·3,
  // NaN, +Inf) + log_edges 42 (13 edges: 12·3 + 2 for the zero edge, padded to 7·6) + bits 4095
  // + normal 70007 + one_element 1 = 75342 for the float dtypes (for integers the tiny edges
  // round to 0, whose lower neighbour is skipped, so their batches are a few elements shorter).
  const std::string& first = backends.front();
  EXPECT_EQ(find(*report, "moments", "float16", first)->num_elements, 75342);
  EXPECT_EQ(find(*report, "pairwise", "float64", first)->num_elements, 2 * 75342);
  EXPECT_EQ(find(*report, "executor", "bfloat16", first)->num_elements, 2 * 75342);
  EXPECT_GT(find(*report, "moments", "tiny", first)->num_elements, 600 * 4);  // 600 tensors of 0..16
  ASSERT_FALSE(report->notes.empty());
  EXPECT_NE(report->notes.front().find("cpu: "), std::string::npos) << report->notes.front();
  // The selftest's level cap is removed afterwards: the level is what it was (the detected one,
  // or the one $TRIALSTAT_CPU_ISA caps it to).
  EXPECT_EQ(kernels::active_cpu_isa(), before);
}

/// Each named statistic's first applicable check fails, and no other check.
void expect_caught(stats::selftest_perturbation kind, const std::set<std::string>& expected,
                   bool count_difference) {
  stats::selftest_options options;
  options.perturbation = kind;
  options.perturb_statistics = all_statistics;
  const auto report = stats::run_selftest(options);
  ASSERT_TRUE(report.has_value()) << report.error_status().to_string();
  EXPECT_FALSE(report->passed());
  std::map<std::string, int> failed;
  for (const auto& c : report->checks) {
    if (c.passed) continue;
    ++failed[c.statistic];
    SCOPED_TRACE(c.statistic + ": " + c.mismatch);
    // The first batch (float32) at the first level compared carries the change.
    EXPECT_EQ(c.data_case, "float32");
    EXPECT_EQ(c.backends, cpu_backends().front());
    EXPECT_NE(c.mismatch.find("float32 "), std::string::npos);
    if (count_difference) {
      EXPECT_EQ(c.max_count_difference, 1);
    } else {
      EXPECT_EQ(c.max_count_difference, 0);
      // One ulp of a double: relative 2^-53 .. 2^-52 (a value's own scale).
      EXPECT_GT(c.max_relative_difference, 0.0);
      EXPECT_LE(c.max_relative_difference, 2.3e-16);
    }
  }
  std::set<std::string> failed_names;
  for (const auto& [name, n] : failed) {
    EXPECT_EQ(n, 1) << name;
    failed_names.insert(name);
  }
  EXPECT_EQ(failed_names, expected);
}

TEST(Selftest, CatchesOneUlpOnEveryExactFloat) {
  expect_caught(stats::selftest_perturbation::float_ulp,
                {"moments", "histogram", "pairwise", "percentiles", "top_k_sum", "executor"}, false);
}

TEST(Selftest, CatchesACountOffByOne) {
  std::set<std::string> expected(all_statistics.begin(), all_statistics.end());
  expected.erase("percentiles");  // no count
  expect_caught(stats::selftest_perturbation::count_off_by_one, expected, true);
}

TEST(Selftest, RefusesCudaWithoutADeviceAndAnEmptyRun) {
  stats::selftest_options none;
  none.compare_cpu_isa = false;
  EXPECT_EQ(stats::run_selftest(none).error_status().code(), error_code::invalid_argument);
  if (stats::cuda_device_available()) GTEST_SKIP() << "a CUDA device is visible";
  stats::selftest_options cuda;
  cuda.compare_cuda = true;
  const auto refused = stats::run_selftest(cuda);
  EXPECT_EQ(refused.error_status().code(), error_code::invalid_argument);
  EXPECT_NE(refused.error_status().message().find("CUDA"), std::string::npos);
}

TEST(Selftest, LargeCaseRunsOrSaysWhyNot) {
  // Only the decision is checked here (the 2^31-element case takes seconds and 6 GiB): with
  // too little memory a note names what was found; otherwise the "large" checks pass.
  if (!std::getenv("TRIALSTAT_SELFTEST_LARGE")) GTEST_SKIP() << "set TRIALSTAT_SELFTEST_LARGE=1 to run";
  stats::selftest_options options;
  options.large = true;
  const auto report = stats::run_selftest(options);
  ASSERT_TRUE(report.has_value());
  const bool ran = find(*report, "moments", "large", cpu_backends().front()) != nullptr;
  bool noted = false;
  for (const auto& n : report->notes) noted |= n.rfind("large: skipped", 0) == 0;
  EXPECT_NE(ran, noted);
  if (ran) {
    EXPECT_EQ(find(*report, "moments", "large", cpu_backends().front())->num_elements,
              stats::selftest_large_elements);
  }
  EXPECT_TRUE(report->passed());
}

TEST(gpu_selftest, CudaEqualsTheCpuTwin) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  stats::selftest_options options;
  options.compare_cuda = true;
  const auto report = stats::run_selftest(options);
  ASSERT_TRUE(report.has_value()) << report.error_status().to_string();
  int cuda_checks = 0;
  for (const auto& c : report->checks) {
    cuda_checks += c.backends == "cuda vs cpu" ? 1 : 0;
    EXPECT_TRUE(c.passed) << c.statistic << " " << c.data_case << " " << c.backends << ": " << c.mismatch;
  }
  EXPECT_EQ(cuda_checks, 12 * 13 + 4);
}

}  // namespace
}  // namespace trialstat

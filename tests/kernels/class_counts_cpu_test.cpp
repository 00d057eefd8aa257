// SPDX-License-Identifier: Apache-2.0
// CPU twins of the class counts (bincount, label × prediction pairs) vs the naive references.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/class_counts/class_counts_cpu.hpp"
#include "tests/reference/reference_rule_stats.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

using reference::data_mode;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

TEST(BincountCpu, HandCheckedCases) {
  // Classes of 3 → [0, 1, 2] + other. trunc: 1.9 → 1, −0.5 → 0 (numpy astype(int)), 2.99 → 2;
  // other: 3, −1.5, NaN, +Inf.
  const std::vector<double> x = {0, 1, 1.9, -0.5, 2.99, 3, -1.5, nan, inf, 2};
  const std::vector<int64_t> shape{static_cast<int64_t>(x.size())};
  const tensor_view v{reinterpret_cast<const std::byte*>(x.data()), dtype::float64, shape,
                      static_cast<int64_t>(x.size()), memory_kind::host};
  const auto r = kernels::compute_bincount_cpu(v, 3);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->num_classes, 3);
  EXPECT_EQ(r->counts, (std::vector<int64_t>{2, 2, 2, 4}));
}

TEST(BincountCpu, MatchesReferenceForEveryDtype) {
  for (const dtype t : reference::real_dtypes()) {
    for (const int64_t n : {0, 1, 100, 70000, 300001}) {
      for (const int64_t k : {1, 2, 10, 1000}) {
        const uint64_t seed = 5 + static_cast<uint64_t>(n) * 3 + static_cast<uint64_t>(k);
        const auto bytes = reference::make_tensor_bytes(t, n, data_mode::special, seed,
                                                        static_cast<double>(k) / 2, static_cast<double>(k));
        std::vector<std::byte> buffer(1);
        buffer.insert(buffer.end(), bytes.begin(), bytes.end());
        const std::vector<int64_t> shape{n};
        const tensor_view v{buffer.data() + 1, t, shape, n, memory_kind::host};
        SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n) + " k=" +
                     std::to_string(k) + " seed=" + std::to_string(seed));
        const auto r = kernels::compute_bincount_cpu(v, k);
        ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
        EXPECT_EQ(r->counts,
                  reference::bincount_ref(reference::element_values(bytes.data(), t, n), k));
      }
    }
  }
}

TEST(ConfusionCpu, IdentityAndOneMistake) {
  // 10 labels 0..4 twice; predictions equal except one 3 predicted as 1.
  std::vector<int32_t> labels, predictions;
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 5; ++c) {
      labels.push_back(c);
      predictions.push_back(c);
    }
  }
  predictions[8] = 1;
  const std::vector<int64_t> shape{10};
  const tensor_view l{reinterpret_cast<const std::byte*>(labels.data()), dtype::int32, shape, 10,
                      memory_kind::host};
  const tensor_view p{reinterpret_cast<const std::byte*>(predictions.data()), dtype::int32, shape,
                      10, memory_kind::host};
  const auto r = kernels::compute_confusion_cpu(l, p, 10, 1, 5, stats::prediction_kind::class_values);
  ASSERT_TRUE(r.has_value());
  for (int64_t a = 0; a <= 5; ++a) {
    for (int64_t b = 0; b <= 5; ++b) {
      int64_t expected = (a == b && a < 5) ? 2 : 0;
      if (a == 3 && b == 3) expected = 1;
      if (a == 3 && b == 1) expected = 1;
      EXPECT_EQ(r->at(a, b), expected) << a << "," << b;
    }
  }
}

TEST(ConfusionCpu, ArgmaxRows) {
  // Rows of 3 scores: argmax 2, 0 (tie → first), 1 (NaN → its index), 0 (NaN first).
  const std::vector<float> scores = {0.1f, 0.2f, 0.7f, 0.5f, 0.5f, 0.0f,
                                     0.9f, static_cast<float>(nan), 0.1f,
                                     static_cast<float>(nan), 1.0f, 2.0f};
  const std::vector<int64_t> labels = {2, 1, 1, 0};
  const std::vector<int64_t> score_shape{4, 3};
  const std::vector<int64_t> label_shape{4};
  const tensor_view s{reinterpret_cast<const std::byte*>(scores.data()), dtype::float32,
                      score_shape, 12, memory_kind::host};
  const tensor_view l{reinterpret_cast<const std::byte*>(labels.data()), dtype::int64,
                      label_shape, 4, memory_kind::host};
  const auto r = kernels::compute_confusion_cpu(l, s, 4, 3, 3, stats::prediction_kind::argmax_last_axis);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->at(2, 2), 1);
  EXPECT_EQ(r->at(1, 0), 1);
  EXPECT_EQ(r->at(1, 1), 1);
  EXPECT_EQ(r->at(0, 0), 1);
  int64_t total = 0;
  for (const auto c : r->counts) total += c;
  EXPECT_EQ(total, 4);
}

TEST(ConfusionCpu, MatchesReferenceForMixedDtypes) {
  const dtype label_types[] = {dtype::int64, dtype::int32, dtype::float32, dtype::uint8};
  const dtype prediction_types[] = {dtype::int64, dtype::float16, dtype::float64, dtype::int8};
  for (const dtype lt : label_types) {
    for (const dtype pt : prediction_types) {
      for (const int64_t n : {0, 1, 999, 200001}) {
        for (const int64_t width : {0, 1, 4}) {  // 0: class values
          const int64_t k = 6;
          const uint64_t seed = 900 + static_cast<uint64_t>(n) + static_cast<uint64_t>(width);
          const auto label_bytes = reference::make_tensor_bytes(lt, n, data_mode::special, seed, 3, 3);
          const int64_t pn = width > 0 ? n * width : n;
          const auto prediction_bytes =
              reference::make_tensor_bytes(pt, pn, data_mode::special, seed + 1, 3, 3);
          const std::vector<int64_t> lshape{n};
          const std::vector<int64_t> pshape =
              width > 0 ? std::vector<int64_t>{n, width} : std::vector<int64_t>{n};
          const tensor_view l{label_bytes.data(), lt, lshape, n, memory_kind::host};
          const tensor_view p{prediction_bytes.data(), pt, pshape, pn, memory_kind::host};
          SCOPED_TRACE(std::string(dtype_name(lt)) + "/" + std::string(dtype_name(pt)) + " n=" +
                       std::to_string(n) + " width=" + std::to_string(width) +
                       " seed=" + std::to_string(seed));
          const auto r = kernels::compute_confusion_cpu(
              l, p, n, width > 0 ? width : 1, k,
              width > 0 ? stats::prediction_kind::argmax_last_axis
                        : stats::prediction_kind::class_values);
          ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
          EXPECT_EQ(r->counts, reference::confusion_ref(
                                   reference::element_values(label_bytes.data(), lt, n),
                                   reference::element_values(prediction_bytes.data(), pt, pn), k,
                                   width));
        }
      }
    }
  }
}

}  // namespace
}  // namespace trialstat

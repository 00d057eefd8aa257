// SPDX-License-Identifier: Apache-2.0
// CPU twin of the per-node axis-0 counts vs the naive reference.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "kernels/axis_counts/axis_counts_cpu.hpp"
#include "tests/reference/reference_stats.hpp"

namespace trialstat {
namespace {

using reference::data_mode;

struct shape_case {
  std::vector<int64_t> shape;
};

int64_t elements_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

TEST(AxisCountsCpu, MatchesReferenceForEveryDtypeAndLayout) {
  // Wide (node split), tall-and-narrow (batch split), rank 0/1, empty batch.
  const std::vector<std::vector<int64_t>> shapes = {
      {},        {1},        {17},      {4, 3},     {2, 0, 3}, {0, 5},
      {64, 300}, {3000, 7},  {5, 4, 3, 2}, {33, 20000}, {1, 100}};
  for (const dtype t : reference::real_dtypes()) {
    for (const auto& shape : shapes) {
      const int64_t n = elements_of(shape);
      const uint64_t seed = 31u + static_cast<uint64_t>(n);
      const auto bytes = reference::make_tensor_bytes(t, n, data_mode::special, seed, 0.1, 20.0);
      std::vector<std::byte> buffer(1);  // odd offset: unaligned data
      buffer.insert(buffer.end(), bytes.begin(), bytes.end());
      tensor_view v;
      v.data = buffer.data() + 1;
      v.type = t;
      v.shape = shape;
      v.num_elements = n;
      const auto values = reference::element_values(bytes.data(), t, n);
      const int64_t batch = shape.size() >= 2 ? shape[0] : 1;
      const int64_t nodes = shape.size() >= 2 ? (batch == 0 ? elements_of({shape.begin() + 1, shape.end()}) : n / batch) : n;
      for (const bool interval : {false, true}) {
        stats::axis0_predicate p;
        p.what = interval ? stats::axis0_predicate::kind::open_interval
                          : stats::axis0_predicate::kind::positive;
        p.lo = -1.5;
        p.hi = 10.0;
        const auto r = kernels::count_along_axis0_cpu(v, p);
        ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
        SCOPED_TRACE(std::string("dtype=") + std::string(dtype_name(t)) + " rank=" +
                     std::to_string(shape.size()) + " n=" + std::to_string(n) + " interval=" +
                     (interval ? "1" : "0") + " seed=" + std::to_string(seed));
        EXPECT_EQ(r->batch, batch);
        EXPECT_EQ(r->per_node,
                  reference::count_axis0_ref(values, batch, nodes, interval, p.lo, p.hi));
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(AxisCountsCpu, HandChecked) {
  // x = [[1, -1, NaN],
  //      [2,  0,  3]]  → positive per node: [2, 0, 1]; in (−0.5, 2.5): [2, 1, 0]
  const std::vector<double> x = {1, -1, std::numeric_limits<double>::quiet_NaN(), 2, 0, 3};
  const auto bytes = reference::encode_values(dtype::float32, x);
  const std::vector<int64_t> shape = {2, 3};
  tensor_view v{bytes.data(), dtype::float32, shape, 6, memory_kind::host};
  auto r = kernels::count_along_axis0_cpu(v, {});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->batch, 2);
  EXPECT_EQ(r->per_node, (std::vector<int64_t>{2, 0, 1}));
  stats::axis0_predicate p{stats::axis0_predicate::kind::open_interval, -0.5, 2.5};
  r = kernels::count_along_axis0_cpu(v, p);
  EXPECT_EQ(r->per_node, (std::vector<int64_t>{2, 1, 0}));
}

TEST(AxisCountsCpu, RejectsShapeMismatch) {
  const std::vector<std::byte> bytes(64);
  const std::vector<int64_t> shape = {2, 3};
  tensor_view v{bytes.data(), dtype::float32, shape, 7, memory_kind::host};
  EXPECT_EQ(kernels::count_along_axis0_cpu(v, {}).error_status().code(),
            error_code::invalid_argument);
  v.num_elements = 6;
  v.type = dtype::complex64;
  EXPECT_EQ(kernels::count_along_axis0_cpu(v, {}).error_status().code(),
            error_code::unsupported_dtype);
}

}  // namespace
}  // namespace trialstat

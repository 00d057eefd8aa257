// SPDX-License-Identifier: Apache-2.0
// Fixed log-scale histograms: the edge table against smdebug's loop run at run time, exact bins
// at and around every edge, special values beside the bins, every dtype against an independent
// reference (upper_bound over the edges), TensorBoard trimming, and (gpu_*) CUDA vs CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <memory>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/gpu.hpp"
#include "tests/reference/reference_stats.hpp"
#include "trialstat/config.hpp"
#include "trialstat/stats/log_histogram.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/log_histogram/log_histogram_cuda.hpp"
#endif

namespace trialstat {
namespace {

using reference::data_mode;

std::vector<double> smdebug_edges() { return reference::log_histogram_edges_by_loop(); }

using log_reference = reference::log_histogram_ref;

log_reference reference_counts(const std::vector<double>& values, const std::vector<double>& edges) {
  return reference::log_histogram_counts(values, edges);
}

void expect_matches(const stats::log_histogram& h, const log_reference& r, const std::string& context) {
  SCOPED_TRACE(context);
  ASSERT_EQ(h.counts.size(), r.counts.size());
  for (std::size_t i = 0; i < r.counts.size(); ++i) EXPECT_EQ(h.counts[i], r.counts[i]) << "bin " << i;
  EXPECT_EQ(h.nan_count, r.nan);
  EXPECT_EQ(h.pos_inf_count, r.pos_inf);
  EXPECT_EQ(h.neg_inf_count, r.neg_inf);
  EXPECT_EQ(h.below_count, r.below);
  EXPECT_EQ(h.above_count, r.above);
}

stats::log_histogram histogram_of(const std::vector<double>& values, stats::backend which = stats::backend::cpu) {
  const stats::segment seg{0, static_cast<int64_t>(values.size()), dtype::float64};
  stats::log_histogram h;
  h.counts.assign(3, -7);  // poison
  h.nan_count = h.above_count = -7;
  const status s = stats::compute_log_histograms(reinterpret_cast<const std::byte*>(values.data()),
                                                 {&seg, 1}, {&h, 1}, which);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return h;
}

TEST(log_histogram, EdgesAreSmdebugDefaultBins) {
  const auto expected = smdebug_edges();
  const auto edges = stats::log_histogram_edges();
  ASSERT_EQ(expected.size(), 1549u);
  ASSERT_EQ(edges.size(), expected.size());
  EXPECT_EQ(stats::log_histogram_bins, 1548);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    ASSERT_EQ(edges[i], expected[i]) << "edge " << i;  // bit-exact, compile-time table
  }
  EXPECT_EQ(edges[774], 0.0);
  EXPECT_EQ(edges[775], 1e-12);
  EXPECT_LT(edges.back(), 1e20);
  EXPECT_GT(edges.back() * 1.1, 1e20);
  EXPECT_TRUE(std::is_sorted(edges.begin(), edges.end()));
}

TEST(log_histogram, EveryEdgeAndItsNeighbours) {
  const auto edges = smdebug_edges();
  std::vector<double> values;
  for (double e : edges) {
    values.push_back(e);
    values.push_back(std::nextafter(e, -INFINITY));
    values.push_back(std::nextafter(e, INFINITY));
  }
  const double specials[] = {0.0, -0.0, 5e-13, -5e-13, 4.9e-324, -4.9e-324, DBL_MIN, -DBL_MIN,
                             1e21, -1e21, DBL_MAX, -DBL_MAX, NAN, INFINITY, -INFINITY, 1.0, -1.0};
  values.insert(values.end(), std::begin(specials), std::end(specials));
  const auto h = histogram_of(values);
  expect_matches(h, reference_counts(values, edges), "edges");
  EXPECT_EQ(h.binned_count() + h.nan_count + h.pos_inf_count + h.neg_inf_count + h.below_count +
                h.above_count,
            static_cast<int64_t>(values.size()));
  // Spot checks of numpy's conventions: 0 and -0.0 in [0, 1e-12); the last edge in the last bin.
  const auto zero = histogram_of({0.0, -0.0});
  EXPECT_EQ(zero.counts[774], 2);
  const auto last = histogram_of({edges.back()});
  EXPECT_EQ(last.counts.back(), 1);
  const auto minus_p0 = histogram_of({-1e-12});
  EXPECT_EQ(minus_p0.counts[773], 1);
}

TEST(log_histogram, EveryDtypeMatchesTheReference) {
  const auto edges = smdebug_edges();
  std::mt19937_64 rng(77);
  for (const dtype t : reference::real_dtypes()) {
    for (const data_mode mode : {data_mode::normal, data_mode::special, data_mode::bits}) {
      for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{1000}, int64_t{70001}}) {
        const uint64_t seed = rng();
        const double scale = mode == data_mode::normal ? 1e3 : 1.0;
        auto bytes = reference::make_tensor_bytes(t, n, mode, seed, 0.0, scale);
        std::vector<std::byte> buffer(5, std::byte{0});  // unaligned start
        buffer.insert(buffer.end(), bytes.begin(), bytes.end());
        const stats::segment seg{5, n, t};
        stats::log_histogram h;
        ASSERT_TRUE(stats::compute_log_histograms(buffer.data(), {&seg, 1}, {&h, 1}).ok());
        const auto values = reference::element_values(bytes.data(), t, n);
        expect_matches(h, reference_counts(values, edges),
                       std::string(dtype_name(t)) + " " + reference::to_string(mode) + " n=" +
                           std::to_string(n) + " seed=" + std::to_string(seed));
      }
    }
  }
}

TEST(log_histogram, RejectsBadArguments) {
  const stats::segment seg{0, 4, dtype::string};
  stats::log_histogram h;
  const std::byte bytes[16] = {};
  EXPECT_EQ(stats::compute_log_histograms(bytes, {&seg, 1}, {&h, 1}).code(), error_code::unsupported_dtype);
  EXPECT_EQ(stats::compute_log_histograms(bytes, {&seg, 1}, {}).code(), error_code::invalid_argument);
  if (!stats::cuda_device_available()) {
    const stats::segment ok{0, 2, dtype::float32};
    EXPECT_EQ(stats::compute_log_histograms(bytes, {&ok, 1}, {&h, 1}, stats::backend::cuda).code(),
              error_code::invalid_argument);
  }
}

TEST(log_histogram, FromCellsBothForms) {
  // cells: bins 0 and 1547 set, then NaN 3, +Inf 4, −Inf 5, below 6, above 7.
  std::vector<int64_t> cells(stats::log_histogram_bins + 5, 0);
  cells[0] = 1;
  cells[stats::log_histogram_bins - 1] = 2;
  for (int k = 0; k < 5; ++k) cells[static_cast<std::size_t>(stats::log_histogram_bins + k)] = 3 + k;
  const stats::log_histogram a = stats::log_histogram_from_cells(cells.data());
  EXPECT_EQ(a.counts.size(), static_cast<std::size_t>(stats::log_histogram_bins));
  EXPECT_EQ(a.counts.front(), 1);
  EXPECT_EQ(a.counts.back(), 2);
  EXPECT_EQ(a.nan_count, 3);
  EXPECT_EQ(a.pos_inf_count, 4);
  EXPECT_EQ(a.neg_inf_count, 5);
  EXPECT_EQ(a.below_count, 6);
  EXPECT_EQ(a.above_count, 7);
  std::vector<int64_t> bins(cells.begin(), cells.begin() + stats::log_histogram_bins);
  const stats::log_histogram b =
      stats::log_histogram_from_cells(std::move(bins), cells.data() + stats::log_histogram_bins);
  EXPECT_EQ(b.counts, a.counts);
  EXPECT_EQ(std::tie(b.nan_count, b.pos_inf_count, b.neg_inf_count, b.below_count, b.above_count),
            std::tie(a.nan_count, a.pos_inf_count, a.neg_inf_count, a.below_count, a.above_count));
}

TEST(log_histogram, TensorboardBucketsTrimLikeSmdebug) {
  const auto edges = stats::log_histogram_edges();
  // Values in bins 800 and 805: buckets 799..805, limits edges[800..806].
  const auto h = histogram_of({edges[800], edges[805], edges[805], NAN});
  const auto tb = stats::to_tensorboard_buckets(h);
  ASSERT_EQ(tb.counts.size(), 7u);
  ASSERT_EQ(tb.limits.size(), 7u);
  EXPECT_EQ(tb.counts.front(), 0);
  EXPECT_EQ(tb.counts[1], 1);
  EXPECT_EQ(tb.counts.back(), 2);
  EXPECT_EQ(tb.limits.front(), edges[800]);
  EXPECT_EQ(tb.limits.back(), edges[806]);
  // A value in bin 0: a zero count is prepended, limits start at edge[0].
  const auto low = stats::to_tensorboard_buckets(histogram_of({edges[0]}));
  ASSERT_EQ(low.counts.size(), 2u);
  EXPECT_EQ(low.counts[0], 0);
  EXPECT_EQ(low.counts[1], 1);
  EXPECT_EQ(low.limits[0], edges[0]);
  EXPECT_EQ(low.limits[1], edges[1]);
  // Nothing binned: nothing to show.
  const auto none = stats::to_tensorboard_buckets(histogram_of({NAN, INFINITY, 1e30}));
  EXPECT_TRUE(none.counts.empty());
  EXPECT_TRUE(none.limits.empty());
}

TEST(gpu_log_histogram, DeviceTablesAreTheHostTables) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
#if TRIALSTAT_HAS_CUDA
  // nvcc evaluates make_log_histogram_tables() itself: its result must be the host's, bit for bit.
  static constexpr kernels::log_histogram_tables host = kernels::make_log_histogram_tables();
  auto device = std::make_unique<kernels::log_histogram_tables>();
  std::memset(device.get(), 0xff, sizeof *device);
  ASSERT_TRUE(kernels::copy_log_histogram_device_tables(device.get()).ok());
  EXPECT_EQ(std::memcmp(device.get(), &host, sizeof host), 0);
#endif
}

TEST(gpu_log_histogram, CudaMatchesCpuOnEveryDtype) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(78);
  std::vector<std::byte> buffer;
  std::vector<stats::segment> segments;
  std::vector<std::string> names;
  for (const dtype t : reference::real_dtypes()) {
    for (const data_mode mode : {data_mode::normal, data_mode::special, data_mode::bits}) {
      for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{4097}, int64_t{65537}, int64_t{300001}}) {
        const uint64_t seed = rng();
        auto bytes = reference::make_tensor_bytes(t, n, mode, seed, 0.0, 10.0);
        buffer.resize(buffer.size() + rng() % 7);
        segments.push_back({buffer.size(), n, t});
        buffer.insert(buffer.end(), bytes.begin(), bytes.end());
        names.push_back(std::string(dtype_name(t)) + " " + reference::to_string(mode) + " n=" +
                        std::to_string(n) + " seed=" + std::to_string(seed));
      }
    }
  }
  for (int i = 0; i < 3000; ++i) {  // many tiny tensors
    const int64_t n = static_cast<int64_t>(rng() % 30);
    auto bytes = reference::make_tensor_bytes(dtype::float32, n, data_mode::special, rng(), 0.0, 1e-6);
    segments.push_back({buffer.size(), n, dtype::float32});
    buffer.insert(buffer.end(), bytes.begin(), bytes.end());
    names.push_back("tiny " + std::to_string(i));
  }
  std::vector<stats::log_histogram> cpu(segments.size()), cuda(segments.size());
  ASSERT_TRUE(stats::compute_log_histograms(buffer.data(), segments, cpu).ok());
  const status s = stats::compute_log_histograms(buffer.data(), segments, cuda, stats::backend::cuda);
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (std::size_t i = 0; i < segments.size(); ++i) {
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(cuda[i].counts, cpu[i].counts);
    EXPECT_EQ(cuda[i].nan_count, cpu[i].nan_count);
    EXPECT_EQ(cuda[i].pos_inf_count, cpu[i].pos_inf_count);
    EXPECT_EQ(cuda[i].neg_inf_count, cpu[i].neg_inf_count);
    EXPECT_EQ(cuda[i].below_count, cpu[i].below_count);
    EXPECT_EQ(cuda[i].above_count, cpu[i].above_count);
  }
}

}  // namespace
}  // namespace trialstat

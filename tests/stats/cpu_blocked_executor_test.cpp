// SPDX-License-Identifier: Apache-2.0
// The CPU executor's cache-blocked path (host/stats/cpu_tensor_statistics.hpp) against its
// streamed per-statistic passes: the same batches through executors whose cache budget
// (executor_options::cpu_block_bytes) blocks no tensor, some, the default share, or every
// tensor, on one and on two threads, must give bit-identical records — moments (every double
// compared by its bits), scalars, fixed-bin histograms (two bin counts in one batch), log-scale
// histograms, and pairwise comparisons against history carried across batches (a window of 2,
// so the third step recycles a buffer; a tensor whose shape changes; a tensor twice in one
// batch). Tensors of every dtype with NaN/±Inf, one element, tails, several chunks, and sizes
// exactly at and one element over the budget.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "tests/support/record_equality.hpp"
#include "trialstat/dtype.hpp"
#include "trialstat/stats/statistics_executor.hpp"

namespace trialstat::stats {
namespace {

/// The budget of the "some tensors" executor; tensors at and one element over it are made.
constexpr std::size_t small_budget = std::size_t{64} << 10;

struct tensor_spec {
  trial::tensor_id tensor;
  dtype type;
  int64_t num_elements;
  int request;  ///< index into the batch's requests
};

/// The tensors of one step (tensor 7's size changes at step 2; tensor 3 appears twice).
std::vector<tensor_spec> specs_of_step(int step) {
  std::vector<tensor_spec> specs = {
      {0, dtype::float32, 65536, 0},                                      // one chunk, 256 KiB
      {1, dtype::float32, 1, 0},                                          // a scalar
      {2, dtype::float32, static_cast<int64_t>(small_budget / 4), 0},     // exactly the small budget
      {3, dtype::float32, static_cast<int64_t>(small_budget / 4) + 1, 0}, // one element over
      {4, dtype::float64, 70001, 0},                                      // two chunks, 560 KiB: over the default
      {5, dtype::float16, 3001, 1},
      {6, dtype::bfloat16, 1027, 0},
      {7, dtype::float32, step == 2 ? 513 : 512, 0},                      // shape change at step 2
      {8, dtype::int8, 999, 1},
      {9, dtype::uint8, 4096, 0},
      {10, dtype::int16, 77, 0},
      {11, dtype::uint16, 1500, 0},
      {12, dtype::int32, 20000, 1},
      {13, dtype::uint32, 33, 0},
      {14, dtype::int64, 5000, 0},
      {15, dtype::uint64, 257, 0},
      {16, dtype::boolean, 300, 0},
      {17, dtype::float32, 131072, 0},                                    // 512 KiB: exactly the default budget
      {18, dtype::float32, 131073, 0},                                    // one over the default
      {19, dtype::float64, 0, 0},                                         // empty
      {3, dtype::float32, static_cast<int64_t>(small_budget / 4) + 1, 0}, // tensor 3 again
  };
  return specs;
}

/// One value of element i of a tensor at a step: mostly normal, some NaN/±Inf for floats.
void fill_tensor(std::mt19937_64& rng, const tensor_spec& spec, std::byte* out) {
  std::normal_distribution<double> normal(0.0, 0.05);
  std::uniform_int_distribution<int> pick(0, 199);
  std::uniform_int_distribution<uint64_t> bits;
  const std::size_t size = dtype_size_bytes(spec.type);
  for (int64_t i = 0; i < spec.num_elements; ++i) {
    std::byte* p = out + static_cast<std::size_t>(i) * size;
    const int special = pick(rng);
    double x = normal(rng);
    if (special == 0) x = std::numeric_limits<double>::quiet_NaN();
    if (special == 1) x = std::numeric_limits<double>::infinity();
    if (special == 2) x = -std::numeric_limits<double>::infinity();
    if (special == 3) x = 0.0;
    switch (spec.type) {
      case dtype::float32: {
        const auto f = static_cast<float>(x);
        std::memcpy(p, &f, 4);
        break;
      }
      case dtype::float64: std::memcpy(p, &x, 8); break;
      case dtype::bfloat16: {
        const auto f = static_cast<float>(x);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        const auto h = static_cast<uint16_t>(b >> 16);
        std::memcpy(p, &h, 2);
        break;
      }
      case dtype::float16: {  // every bit pattern: NaNs, infinities, subnormals
        const auto h = static_cast<uint16_t>(bits(rng));
        std::memcpy(p, &h, 2);
        break;
      }
      case dtype::boolean: {
        const auto b = static_cast<uint8_t>(bits(rng) & 1u);
        std::memcpy(p, &b, 1);
        break;
      }
      default: {  // integers: every bit pattern of their width
        const uint64_t v = bits(rng);
        std::memcpy(p, &v, size);
        break;
      }
    }
  }
}

struct step_batch {
  std::vector<std::byte> bytes;
  std::vector<segment> segments;
  std::vector<statistics_record> records;
};

step_batch make_step(int step, int worker) {
  std::mt19937_64 rng(1000 + static_cast<uint64_t>(step) * 7 + static_cast<uint64_t>(worker));
  step_batch b;
  const auto specs = specs_of_step(step);
  uint64_t offset = 3;  // segments need no alignment
  for (const auto& spec : specs) {
    b.segments.push_back({offset, spec.num_elements, spec.type});
    offset += static_cast<uint64_t>(spec.num_elements) * dtype_size_bytes(spec.type) + 5;
  }
  b.bytes.resize(offset);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    fill_tensor(rng, specs[i], b.bytes.data() + b.segments[i].offset_bytes);
    statistics_record r;
    r.tensor = specs[i].tensor;
    r.worker = static_cast<trial::worker_id>(worker);
    r.step = step;
    r.type = specs[i].type;
    r.shape = {specs[i].num_elements};
    r.num_elements = specs[i].num_elements;
    b.records.push_back(std::move(r));
  }
  return b;
}

std::vector<statistics_request> make_requests() {
  statistics_request a;
  a.histogram_bins = 64;
  a.log_histogram = true;
  a.history_depth = 2;
  a.allclose = {allclose_params{}, allclose_params{1e-3, 1e-6, true}};
  statistics_request b;
  b.histogram_bins = 16;
  b.history_depth = 1;
  return {a, b};
}

/// Records of 3 steps × 2 workers through one executor.
std::vector<statistics_record> run(std::size_t block_bytes, int threads) {
#if defined(_OPENMP)
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
  executor_options options;
  options.cpu_block_bytes = block_bytes;
  auto executor = make_statistics_executor(backend::cpu, options);
  EXPECT_TRUE(executor.has_value()) << executor.error_status().message();
  const auto requests = make_requests();
  std::vector<statistics_record> all;
  for (int step = 0; step < 3; ++step) {
    for (int worker = 0; worker < 2; ++worker) {
      step_batch b = make_step(step, worker);
      tensor_batch batch;
      batch.base = b.bytes.data();
      batch.segments = b.segments;
      const auto specs = specs_of_step(step);
      for (std::size_t i = 0; i < b.records.size(); ++i) {
        batch.records.push_back(&b.records[i]);
        batch.requests.push_back(&requests[static_cast<std::size_t>(specs[i].request)]);
      }
      const status s = (*executor)->compute(batch);
      EXPECT_TRUE(s.ok()) << s.message();
      for (auto& r : b.records) all.push_back(std::move(r));
    }
  }
#if defined(_OPENMP)
  omp_set_num_threads(saved);
#endif
  return all;
}

#define EXPECT_SAME_BITS(a, b, field) EXPECT_TRUE(testing::same_bits((a).field, (b).field)) << #field

void expect_identical(const statistics_record& a, const statistics_record& b) {
  SCOPED_TRACE("tensor " + std::to_string(a.tensor) + " worker " + std::to_string(a.worker) +
               " step " + std::to_string(a.step) + " dtype " + std::string(dtype_name(a.type)));
  ASSERT_EQ(a.moments.has_value(), b.moments.has_value());
  ASSERT_TRUE(a.moments.has_value());
  testing::expect_identical_moments(*a.moments, *b.moments, "moments");
  ASSERT_EQ(a.scalar.has_value(), b.scalar.has_value());
  if (a.scalar) {
    EXPECT_TRUE(testing::same_bits(*a.scalar, *b.scalar));
  }
  testing::expect_same_histograms(a, b);
  ASSERT_EQ(a.previous.size(), b.previous.size());
  for (std::size_t k = 0; k < a.previous.size(); ++k) {
    const previous_comparison& pa = a.previous[k];
    const previous_comparison& pb = b.previous[k];
    EXPECT_EQ(pa.previous_step, pb.previous_step);
    EXPECT_EQ(pa.shape_matches, pb.shape_matches);
    EXPECT_EQ(pa.allclose_violations, pb.allclose_violations);
    EXPECT_EQ(pa.result.count, pb.result.count);
    EXPECT_EQ(pa.result.nan_mismatches, pb.result.nan_mismatches);
    EXPECT_EQ(pa.result.allclose_violations, pb.result.allclose_violations);
    EXPECT_SAME_BITS(pa.result, pb.result, diff_sum_squares);
    EXPECT_SAME_BITS(pa.result, pb.result, diff_max_abs);
    EXPECT_SAME_BITS(pa.result, pb.result, previous_sum_squares);
  }
}

void expect_all_identical(const std::vector<statistics_record>& expected,
                          const std::vector<statistics_record>& got) {
  ASSERT_EQ(expected.size(), got.size());
  for (std::size_t i = 0; i < expected.size(); ++i) expect_identical(expected[i], got[i]);
}

TEST(cpu_blocked_executor, records_match_the_streamed_passes_bit_for_bit) {
  const auto streamed = run(0, 1);
  // The data exercises what it should: history compared (and recycled), a shape change, NaNs.
  bool compared = false, shape_changed = false, recycled = false, nan_seen = false;
  for (const auto& r : streamed) {
    for (const auto& p : r.previous) {
      compared = compared || (p.shape_matches && p.result.count > 0);
      shape_changed = shape_changed || !p.shape_matches;
      recycled = recycled || (r.step == 2 && r.previous.size() == 2);
    }
    nan_seen = nan_seen || (r.moments && r.moments->nan_count > 0);
  }
  EXPECT_TRUE(compared);
  EXPECT_TRUE(shape_changed);
  EXPECT_TRUE(recycled);
  EXPECT_TRUE(nan_seen);
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    if (threads > 1) expect_all_identical(streamed, run(0, threads));
    expect_all_identical(streamed, run(small_budget, threads));
    expect_all_identical(streamed, run(default_cpu_block_bytes, threads));
    expect_all_identical(streamed, run(std::numeric_limits<std::size_t>::max(), threads));
  }
}

TEST(cpu_blocked_executor, rejects_a_bad_dtype_before_computing) {
  executor_options options;
  auto executor = make_statistics_executor(backend::cpu, options);
  ASSERT_TRUE(executor.has_value());
  std::vector<std::byte> bytes(64);
  statistics_record r;
  r.type = dtype::invalid;
  r.shape = {4};
  r.num_elements = 4;
  const statistics_request request;
  tensor_batch batch;
  batch.base = bytes.data();
  batch.segments = {{0, 4, dtype::invalid}};
  batch.records = {&r};
  batch.requests = {&request};
  const status s = (*executor)->compute(batch);
  EXPECT_EQ(s.code(), error_code::unsupported_dtype);
  EXPECT_FALSE(r.moments.has_value());
}

}  // namespace
}  // namespace trialstat::stats

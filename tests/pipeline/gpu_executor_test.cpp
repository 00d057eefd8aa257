// SPDX-License-Identifier: Apache-2.0
// CUDA executor vs CPU executor (suites gpu_*, skipped without a device): every golden trial
// and generated trials of every dtype with NaN/±Inf/float16/bfloat16 through the whole pipeline
// (backend cpu vs cuda, with buffers small enough to split tensors and to force many launch
// groups), and the executor driven directly (split large tensors, 10,000 small tensors, pinned
// sources, history across calls). Counts, extremes, histograms (the [min, max] and the fixed
// log-scale ones, split tensors included) and axis-0 counts must be equal;
// sums within 2e-12 of their scale (each backend is within 1e-12 of the exact value).
// Also (runs everywhere): asking for CUDA without a device is an error, never a CPU fallback.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/support/gpu.hpp"
#include "tests/support/record_equality.hpp"
#include "tests/reference/reference_stats.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/config.hpp"
#include "trialstat/memory/pinned_pool.hpp"
#include "trialstat/stats/statistics_executor.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

#if TRIALSTAT_HAS_CUDA
#include <cuda_runtime_api.h>

#include "host/stats/cuda_executor.hpp"
#endif

namespace trialstat::pipeline {
namespace {

using reference::data_mode;

constexpr double twin_tolerance = 2e-12;

::testing::AssertionResult near(const char* what, double cpu, double cuda, double scale) {
  if (std::isnan(cpu) || std::isinf(cpu)) {
    if ((std::isnan(cpu) && std::isnan(cuda)) || cpu == cuda) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << what << ": cpu " << cpu << ", cuda " << cuda;
  }
  const double allowed = twin_tolerance * std::fabs(scale);
  if (std::fabs(cpu - cuda) <= allowed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": cpu " << std::hexfloat << cpu << ", cuda "
                                       << cuda << std::defaultfloat << " (difference "
                                       << std::fabs(cpu - cuda) << " > " << allowed << ")";
}

void expect_same_moments(const stats::moments& a, const stats::moments& b) {
  testing::expect_same_moment_counts(a, b);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
  EXPECT_EQ(a.max_abs, b.max_abs);
  EXPECT_TRUE(near("sum", a.sum, b.sum, a.sum_abs));
  EXPECT_TRUE(near("sum_abs", a.sum_abs, b.sum_abs, a.sum_abs));
  EXPECT_TRUE(near("sum_squares", a.sum_squares, b.sum_squares, a.sum_squares));
  const double n = static_cast<double>(std::max<int64_t>(a.finite_count(), 1));
  EXPECT_TRUE(near("mean", a.mean, b.mean, a.sum_abs / n));
  if (a.has_finite()) {
    const double var = a.variance();
    EXPECT_TRUE(near("variance", var, b.variance(), std::max(var, a.mean * a.mean)));
  }
}

void expect_same_pairwise(const stats::pairwise& a, const stats::pairwise& b) {
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.allclose_violations, b.allclose_violations);
  EXPECT_EQ(a.diff_max_abs, b.diff_max_abs);
  EXPECT_TRUE(near("diff_sum_squares", a.diff_sum_squares, b.diff_sum_squares, a.diff_sum_squares));
  EXPECT_TRUE(near("previous_sum_squares", a.previous_sum_squares, b.previous_sum_squares,
                   a.previous_sum_squares));
}

void expect_same_record(const stats::statistics_record& a, const stats::statistics_record& b,
                        const std::string& context) {
  SCOPED_TRACE(context);
  ASSERT_EQ(a.tensor, b.tensor);
  ASSERT_EQ(a.worker, b.worker);
  ASSERT_EQ(a.step, b.step);
  EXPECT_EQ(a.raw_status.code(), b.raw_status.code());
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.num_elements, b.num_elements);
  ASSERT_EQ(a.moments.has_value(), b.moments.has_value());
  if (a.moments) expect_same_moments(*a.moments, *b.moments);
  ASSERT_EQ(a.scalar.has_value(), b.scalar.has_value());
  if (a.scalar) {
    EXPECT_TRUE(*a.scalar == *b.scalar || (std::isnan(*a.scalar) && std::isnan(*b.scalar)));
  }
  testing::expect_same_histograms(a, b);
  ASSERT_EQ(a.axis0.size(), b.axis0.size());
  for (std::size_t k = 0; k < a.axis0.size(); ++k) {
    EXPECT_EQ(a.axis0[k].batch, b.axis0[k].batch);
    EXPECT_EQ(a.axis0[k].per_node, b.axis0[k].per_node) << "predicate " << k;
  }
  ASSERT_EQ(a.previous.size(), b.previous.size());
  for (std::size_t c = 0; c < a.previous.size(); ++c) {
    SCOPED_TRACE("comparison " + std::to_string(c));
    EXPECT_EQ(a.previous[c].previous_step, b.previous[c].previous_step);
    EXPECT_EQ(a.previous[c].shape_matches, b.previous[c].shape_matches);
    EXPECT_EQ(a.previous[c].allclose_violations, b.previous[c].allclose_violations);
    if (a.previous[c].shape_matches) expect_same_pairwise(a.previous[c].result, b.previous[c].result);
  }
  ASSERT_EQ(a.saved_reductions.size(), b.saved_reductions.size());
  // Rule statistics (detail::compute_rule_statistics on each backend).
  ASSERT_EQ(a.percentiles.size(), b.percentiles.size());
  for (std::size_t i = 0; i < a.percentiles.size(); ++i) {
    EXPECT_EQ(a.percentiles[i].q, b.percentiles[i].q);
    EXPECT_TRUE(near("percentile", a.percentiles[i].value, b.percentiles[i].value,
                     std::fabs(a.percentiles[i].value)));
  }
  ASSERT_EQ(a.equal_counts.size(), b.equal_counts.size());
  for (std::size_t i = 0; i < a.equal_counts.size(); ++i) {
    EXPECT_EQ(a.equal_counts[i].value, b.equal_counts[i].value);
    EXPECT_EQ(a.equal_counts[i].count, b.equal_counts[i].count);
  }
  ASSERT_EQ(a.channel_sums.size(), b.channel_sums.size());
  const double scale = a.moments ? a.moments->sum_abs : 0.0;  // ≥ every channel's Σ|x|
  for (std::size_t i = 0; i < a.channel_sums.size(); ++i) {
    const auto& x = a.channel_sums[i];
    const auto& y = b.channel_sums[i];
    EXPECT_EQ(x.axis, y.axis);
    EXPECT_EQ(x.count, y.count);
    EXPECT_EQ(x.nan_count, y.nan_count);
    EXPECT_EQ(x.pos_inf_count, y.pos_inf_count);
    EXPECT_EQ(x.neg_inf_count, y.neg_inf_count);
    ASSERT_EQ(x.sum.size(), y.sum.size());
    for (std::size_t c = 0; c < x.sum.size(); ++c) EXPECT_TRUE(near("channel sum", x.sum[c], y.sum[c], scale));
  }
}

struct run_output {
  std::vector<stats::statistics_record> records;
  pipeline_counters counters;
};

run_output run(const trial::catalog& trial, const plan::read_plan& plan, stats::backend which,
               std::size_t pinned_bytes = stats::default_pinned_pool_bytes) {
  run_output out;
  pipeline_options options;
  options.backend = which;
  options.pinned_pool_bytes = pinned_bytes;
  auto counters = run_statistics(trial, plan, options, [&](const stats::step_statistics& step) {
    out.records.insert(out.records.end(), step.records.begin(), step.records.end());
  });
  EXPECT_TRUE(counters) << counters.error_status().to_string();
  if (counters) out.counters = *counters;
  return out;
}

/// Every tensor: moments, a histogram (64 bins, 7 for every third tensor), history of depth 2
/// with two allclose sets, both axis-0 predicates; percentiles, equality counts and channel sums
/// for every third tensor; the fixed log-scale histogram for every other tensor.
plan::read_plan full_plan(const trial::catalog& trial) {
  plan::read_plan plan;
  for (const trial::tensor_id id : trial.sorted_tensor_ids()) {
    stats::statistics_request request;
    request.moments = true;
    request.histogram_bins = id % 3 == 0 ? 7 : 64;
    request.history_depth = 2;
    request.log_histogram = id % 2 == 0;
    request.allclose = {stats::allclose_params{}, stats::allclose_params{1e-3, 1e-6, true}};
    request.axis0 = {stats::axis0_predicate{},
                     stats::axis0_predicate{stats::axis0_predicate::kind::open_interval, -0.5, 0.5}};
    // Rule statistics, on every third tensor (they run per tensor after the fused launches).
    if (id % 3 == 1) {
      request.percentiles = {0.0, 25.0, 50.0, 99.5, 100.0};
      request.equal_values = {0.0, 1.0};
      request.channel_axes = {-1, 0};
    }
    plan.request(id, request);
  }
  return plan;
}

void expect_same_runs(const trial::catalog& trial, const run_output& cpu, const run_output& cuda,
                      const std::string& label) {
  ASSERT_EQ(cpu.records.size(), cuda.records.size()) << label;
  EXPECT_EQ(cpu.counters.records, cuda.counters.records);
  EXPECT_EQ(cpu.counters.failed_records, cuda.counters.failed_records);
  for (std::size_t i = 0; i < cpu.records.size(); ++i) {
    const auto& r = cpu.records[i];
    expect_same_record(r, cuda.records[i],
                       label + ": " + std::string(trial.tensor_names()[r.tensor]) + " step " +
                           std::to_string(r.step) + " worker " + std::to_string(r.worker));
  }
}

TEST(cuda_executor_factory, NoDeviceIsAnErrorNeverAFallback) {
  if (stats::cuda_device_available()) GTEST_SKIP() << "a device is visible";
  auto made = stats::make_statistics_executor(stats::backend::cuda);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error_status().code(), error_code::invalid_argument);
  auto cpu = stats::make_statistics_executor(stats::backend::cpu, stats::executor_options{});
  ASSERT_TRUE(cpu);
  EXPECT_EQ((*cpu)->backend(), stats::backend::cpu);
  EXPECT_EQ((*cpu)->staging_pool(), nullptr);
}

TEST(gpu_executor, GoldenTrialsMatchCpu) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  const auto names = testing::shared_trial_names();
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    auto trial = trial::catalog::open(dir / name);
    ASSERT_TRUE(trial) << name << ": " << trial.error_status().to_string();
    const plan::read_plan plan = full_plan(*trial);
    const run_output cpu = run(*trial, plan, stats::backend::cpu);
    ASSERT_GT(cpu.records.size(), 0u) << name;
    expect_same_runs(*trial, cpu, run(*trial, plan, stats::backend::cuda), name + " (cuda)");
    // Smallest buffers (64 KiB): larger golden tensors split, many launch groups.
    expect_same_runs(*trial, cpu, run(*trial, plan, stats::backend::cuda, 512 << 10),
                     name + " (cuda, 64 KiB buffers)");
  }
}

/// A two-worker trial of every real dtype with NaN/±Inf, float16/bfloat16, a 0-d tensor, an
/// empty one, one whose shape changes, one that never changes, and 150 tiny tensors.
std::filesystem::path write_random_trial(uint64_t seed) {
  const auto root = testing::make_scratch_dir("gpu_random_trial");
  struct spec {
    std::string name;
    dtype type;
    std::vector<int64_t> shape;
    data_mode mode;
  };
  std::vector<spec> specs = {
      {"w_f32", dtype::float32, {300, 257}, data_mode::special},
      {"w_f16", dtype::float16, {100, 333}, data_mode::special},
      {"w_bf16", dtype::bfloat16, {64, 1000}, data_mode::bits},
      {"g_f64", dtype::float64, {33, 777}, data_mode::special},
      {"i32", dtype::int32, {50, 501}, data_mode::normal},
      {"i8", dtype::int8, {7, 3001}, data_mode::bits},
      {"u8", dtype::uint8, {1000, 97}, data_mode::bits},
      {"u64", dtype::uint64, {2, 20000}, data_mode::bits},
      {"flags", dtype::boolean, {300, 301}, data_mode::bits},
      {"loss", dtype::float32, {}, data_mode::special},
      {"empty", dtype::float32, {0, 5}, data_mode::normal},
      {"vector_f32", dtype::float32, {100003}, data_mode::special},
  };
  for (int k = 0; k < 150; ++k) {
    specs.push_back({"tiny_" + std::to_string(k), k % 2 ? dtype::float16 : dtype::float32,
                     {static_cast<int64_t>(1 + (k * 7) % 40)}, data_mode::special});
  }
  std::vector<std::byte> frozen = reference::make_tensor_bytes(dtype::float32, 5000, data_mode::normal, seed);
  for (int worker = 0; worker < 2; ++worker) {
    auto w = writer::trial_writer::create(root, "worker_" + std::to_string(worker), {.num_workers = 2});
    EXPECT_TRUE(w) << w.error_status().to_string();
    if (!w) return root;
    for (int64_t step = 0; step < 5; ++step) {
      EXPECT_TRUE(w->begin_step(step * 10, mode::train, step * 10).ok());
      for (std::size_t t = 0; t < specs.size(); ++t) {
        const spec& s = specs[t];
        int64_t n = 1;
        for (int64_t d : s.shape) n *= d;
        const auto bytes = reference::make_tensor_bytes(s.type, n, s.mode,
                                                        seed + 1000003 * step + 7919 * t + worker, 0.1, 2.0);
        const tensor_view view{bytes.data(), s.type, s.shape, n};
        EXPECT_TRUE(w->add_tensor(s.name, view).ok());
      }
      // Shape changes at step 20: comparisons against it and across it have no result.
      const std::vector<int64_t> odd_shape{step == 2 ? int64_t{17} : int64_t{16}, 3};
      const auto odd = reference::make_tensor_bytes(dtype::float32, odd_shape[0] * 3, data_mode::normal, seed + step);
      EXPECT_TRUE(w->add_tensor("odd", tensor_view{odd.data(), dtype::float32, odd_shape, odd_shape[0] * 3}).ok());
      const std::vector<int64_t> frozen_shape{50, 100};
      EXPECT_TRUE(w->add_tensor("frozen", tensor_view{frozen.data(), dtype::float32, frozen_shape, 5000}).ok());
      EXPECT_TRUE(w->end_step().ok());
    }
    EXPECT_TRUE(w->close(true).ok());
  }
  return root;
}

TEST(gpu_executor, RandomTrialMatchesCpu) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  const uint64_t seed = 4242;
  const auto root = write_random_trial(seed);
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial) << trial.error_status().to_string();
  const plan::read_plan plan = full_plan(*trial);
  const run_output cpu = run(*trial, plan, stats::backend::cpu);
  ASSERT_GT(cpu.records.size(), 1000u);
  expect_same_runs(*trial, cpu, run(*trial, plan, stats::backend::cuda), "seed 4242 (cuda)");
  expect_same_runs(*trial, cpu, run(*trial, plan, stats::backend::cuda, 512 << 10),
                   "seed 4242 (cuda, 64 KiB buffers: split tensors)");
  // UnchangedTensor's view: the frozen tensor has no violations against its previous step.
  for (const auto& r : cpu.records) {
    if (trial->tensor_names()[r.tensor] != "frozen" || r.previous.empty()) continue;
    EXPECT_EQ(r.previous[0].allclose_violations[0], 0);
  }
  std::filesystem::remove_all(root);
}

#if TRIALSTAT_HAS_CUDA

/// A host batch of `tensors` built from generated bytes (owned), with records to fill.
struct direct_batch {
  std::vector<std::byte> bytes;
  std::vector<stats::statistics_record> records;
  stats::tensor_batch batch;

  void add(trial::tensor_id id, int64_t step, dtype type, std::vector<int64_t> shape,
           data_mode mode, uint64_t seed, uint64_t lead = 3) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const auto data = reference::make_tensor_bytes(type, n, mode, seed, 0.25, 4.0);
    bytes.resize(bytes.size() + lead);
    batch.segments.push_back({bytes.size(), n, type});
    bytes.insert(bytes.end(), data.begin(), data.end());
    stats::statistics_record& r = records.emplace_back();
    r.tensor = id;
    r.worker = 0;
    r.step = step;
    r.type = type;
    r.shape = std::move(shape);
    r.num_elements = n;
  }
  /// Point the batch at `base` (bytes copied there when given) and at the records.
  void finish(std::byte* base = nullptr) {
    if (base != nullptr) std::memcpy(base, bytes.data(), bytes.size());
    batch.base = base != nullptr ? base : bytes.data();
    batch.records.clear();
    for (auto& r : records) batch.records.push_back(&r);
  }
};

/// `batch` with each record's request from `plan` (what the statistics stream hands executors).
stats::tensor_batch with_requests(const plan::read_plan& plan, stats::tensor_batch batch) {
  batch.requests.clear();
  for (const stats::statistics_record* r : batch.records) batch.requests.push_back(plan.find(r->tensor));
  return batch;
}

plan::read_plan plan_for(int tensors, int history_depth) {
  plan::read_plan plan;
  for (int id = 0; id < tensors; ++id) {
    stats::statistics_request request;
    request.histogram_bins = 64;
    request.log_histogram = id % 2 == 0;  // split and whole pieces, mixed within groups
    request.history_depth = history_depth;
    request.allclose = {stats::allclose_params{}, stats::allclose_params{1e-2, 1e-4, false}};
    request.axis0 = {stats::axis0_predicate{}};
    plan.request(static_cast<trial::tensor_id>(id), request);
  }
  return plan;
}

void expect_same_batches(const direct_batch& cpu, const direct_batch& cuda, const std::string& label) {
  ASSERT_EQ(cpu.records.size(), cuda.records.size());
  for (std::size_t i = 0; i < cpu.records.size(); ++i) {
    expect_same_record(cpu.records[i], cuda.records[i], label + " record " + std::to_string(i));
  }
}

TEST(gpu_executor, SplitsLargeTensorsAndMergesExactly) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  auto cpu = stats::make_statistics_executor(stats::backend::cpu);
  stats::executor_options small;
  small.pinned_pool_bytes = std::size_t{8} << 20;  // 1 MiB device buffers
  auto cuda = stats::make_statistics_executor(stats::backend::cuda, small);
  ASSERT_TRUE(cpu && cuda) << cuda.error_status().to_string();
  const plan::read_plan plan = plan_for(4, 2);
  for (int64_t step = 0; step < 3; ++step) {  // history across calls: pairwise on the pieces
    direct_batch a, b;
    for (direct_batch* d : {&a, &b}) {
      d->add(0, step, dtype::float32, {2048, 4096}, data_mode::special, 10 + step);  // 32 MiB
      d->add(1, step, dtype::bfloat16, {3, 700001}, data_mode::bits, 20 + step);      // rows > buffer
      d->add(2, step, dtype::float16, {1000}, data_mode::special, 30 + step);
      d->add(3, step, dtype::float64, {4096, 33}, data_mode::normal, 40 + step);
      d->finish();
    }
    ASSERT_TRUE((*cpu)->compute(with_requests(plan, a.batch)).ok());
    const status s = (*cuda)->compute(with_requests(plan, b.batch));
    ASSERT_TRUE(s.ok()) << s.to_string();
    expect_same_batches(a, b, "step " + std::to_string(step));
  }
  const auto counters = stats::cuda_counters(**cuda);
  ASSERT_TRUE(counters);
  EXPECT_GE(counters->split_segments, 9);
  EXPECT_GT(counters->second_pass_groups, 0);
  EXPECT_GT(counters->bytes_staged, 0);  // pageable source: staged through the pool
}

TEST(gpu_executor, TenThousandSmallTensorsInOneBatch) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  auto cpu = stats::make_statistics_executor(stats::backend::cpu);
  auto cuda = stats::make_statistics_executor(stats::backend::cuda);
  ASSERT_TRUE(cpu && cuda);
  const plan::read_plan plan = plan_for(10000, 1);
  for (int64_t step = 0; step < 2; ++step) {
    direct_batch a, b;
    for (direct_batch* d : {&a, &b}) {
      std::mt19937_64 local(static_cast<uint64_t>(step) * 7 + 1);
      for (int id = 0; id < 10000; ++id) {
        const auto& dtypes = reference::real_dtypes();
        const dtype t = dtypes[local() % dtypes.size()];
        const int64_t n = static_cast<int64_t>(local() % 300);
        const uint64_t data_seed = local();
        const uint64_t lead = local() % 5;
        d->add(static_cast<trial::tensor_id>(id), step, t, {n}, data_mode::special, data_seed, lead);
      }
      d->finish();
    }
    ASSERT_TRUE((*cpu)->compute(with_requests(plan, a.batch)).ok());
    const status s = (*cuda)->compute(with_requests(plan, b.batch));
    ASSERT_TRUE(s.ok()) << s.to_string();
    expect_same_batches(a, b, "step " + std::to_string(step));
  }
}

TEST(gpu_executor, PinnedReaderBuffersAreCopiedDirectly) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  auto cpu = stats::make_statistics_executor(stats::backend::cpu);
  auto cuda = stats::make_statistics_executor(stats::backend::cuda);
  ASSERT_TRUE(cpu && cuda);
  memory::pinned_pool* pool = (*cuda)->staging_pool();
  ASSERT_NE(pool, nullptr);
  EXPECT_TRUE(pool->is_pinned());
  memory::pool_lease lease = pool->try_acquire();
  ASSERT_TRUE(lease);
  const plan::read_plan plan = plan_for(3, 1);
  direct_batch a, b;
  for (direct_batch* d : {&a, &b}) {
    d->add(0, 0, dtype::float32, {128, 128}, data_mode::special, 5);
    d->add(1, 0, dtype::float16, {999}, data_mode::special, 6);
    d->add(2, 0, dtype::int16, {}, data_mode::normal, 7);
  }
  a.finish();
  ASSERT_LE(b.bytes.size(), lease.size_bytes());
  b.finish(lease.data());
  ASSERT_TRUE((*cpu)->compute(with_requests(plan, a.batch)).ok());
  const status s = (*cuda)->compute(with_requests(plan, b.batch));
  ASSERT_TRUE(s.ok()) << s.to_string();
  expect_same_batches(a, b, "pinned");
  const auto counters = stats::cuda_counters(**cuda);
  ASSERT_TRUE(counters);
  EXPECT_EQ(counters->bytes_staged, 0);
  EXPECT_GT(counters->bytes_to_device, 0);
}

TEST(gpu_executor, HistoryDepthAndShapeChangesMatchCpu) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  auto cpu = stats::make_statistics_executor(stats::backend::cpu);
  auto cuda = stats::make_statistics_executor(stats::backend::cuda);
  ASSERT_TRUE(cpu && cuda);
  const plan::read_plan plan = plan_for(2, 3);
  for (int64_t step = 0; step < 7; ++step) {
    direct_batch a, b;
    for (direct_batch* d : {&a, &b}) {
      // Tensor 0 grows at step 3 (new arena slot) and shrinks back at step 5.
      const int64_t rows = step == 3 || step == 4 ? 90 : 40;
      d->add(0, step, dtype::float32, {rows, 50}, data_mode::special, 100 + step);
      d->add(1, step, dtype::bfloat16, {77}, data_mode::special, 200 + step);
      d->finish();
    }
    ASSERT_TRUE((*cpu)->compute(with_requests(plan, a.batch)).ok());
    const status s = (*cuda)->compute(with_requests(plan, b.batch));
    ASSERT_TRUE(s.ok()) << s.to_string();
    expect_same_batches(a, b, "step " + std::to_string(step));
  }
}

TEST(gpu_executor, DeviceAndManagedSourcesAreRejectedBeforeAnyWork) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  auto cuda = stats::make_statistics_executor(stats::backend::cuda);
  ASSERT_TRUE(cuda);
  const plan::read_plan plan = plan_for(2, 1);
  direct_batch b;
  b.add(0, 0, dtype::float32, {1000}, data_mode::normal, 3);
  b.add(1, 0, dtype::float64, {77}, data_mode::special, 4);
  b.finish();
  for (bool managed : {false, true}) {
    void* p = nullptr;
    const cudaError_t err = managed ? cudaMallocManaged(&p, b.bytes.size()) : cudaMalloc(&p, b.bytes.size());
    ASSERT_EQ(err, cudaSuccess);
    ASSERT_EQ(cudaMemcpy(p, b.bytes.data(), b.bytes.size(), cudaMemcpyDefault), cudaSuccess);
    stats::tensor_batch on_device = b.batch;
    on_device.base = static_cast<const std::byte*>(p);
    const status s = (*cuda)->compute(with_requests(plan, on_device));
    EXPECT_EQ(s.code(), error_code::invalid_argument) << s.to_string();
    EXPECT_NE(s.message().find(managed ? "managed" : "device"), std::string::npos) << s.message();
    ASSERT_EQ(cudaFree(p), cudaSuccess);
  }
  // The history was not touched: the same batch from host memory still computes.
  const status ok = (*cuda)->compute(with_requests(plan, b.batch));
  EXPECT_TRUE(ok.ok()) << ok.to_string();
}

#endif  // TRIALSTAT_HAS_CUDA

}  // namespace
}  // namespace trialstat::pipeline

// SPDX-License-Identifier: Apache-2.0
// Google Benchmark of the CPU twins (moments, histogram, pairwise) per ISA level, against a
// plain read of the same bytes (a 64-bit sum over them: the memory/cache ceiling).
//
//   bench_kernels_cpu [--benchmark_filter=...] [--benchmark_repetitions=5]
//                     [--benchmark_format=json --benchmark_out=cpu_kernels.json]
//
// Arguments of each kernel benchmark: /elements/isa with isa 0 = baseline (SSE2), 1 = AVX2,
// 2 = AVX-512 (a level above the machine's runs as the machine's). Counters: bytes_per_second
// (float32 input bytes; pairwise counts both tensors), ns_per_element, and vs_read = kernel
// bandwidth / the plain read's bandwidth on the same buffer, measured in the same process.
// "batch" benchmarks run many 1 KiB tensors (256 float32) as one segmented batch.
// OpenMP uses the default team (set OMP_NUM_THREADS to pin it); batches below
// cpu_parallel_min_elements run on the calling thread.
//
// Every benchmark first checks its kernel: results of every ISA level bit-identical to the
// baseline's, moments against a long double reference (1e-12 of Σ|x|), histogram counts equal
// to histogram_bin (histogram_op.hpp) element by element.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/cpu_simd.hpp"
#include "kernels/histogram/histogram_cpu.hpp"
#include "kernels/histogram/histogram_op.hpp"
#include "kernels/moments/moments_cpu.hpp"
#include "kernels/pairwise/pairwise_cpu.hpp"

namespace {

using trialstat::dtype;
namespace kernels = trialstat::kernels;
namespace stats = trialstat::stats;

constexpr int bins = 64;

/// float32 data, normal(0.1, 1), fixed seed; every 10,007th value NaN when `specials`.
const std::vector<float>& data(int64_t n, bool specials = false, uint64_t seed = 42) {
  static std::map<std::tuple<int64_t, bool, uint64_t>, std::vector<float>> cache;
  auto& v = cache[{n, specials, seed}];
  if (v.empty()) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.1f, 1.0f);
    v.resize(static_cast<std::size_t>(n));
    for (auto& x : v) x = normal(rng);
    if (specials) {
      for (std::size_t i = 3; i < v.size(); i += 10007) v[i] = std::numeric_limits<float>::quiet_NaN();
    }
  }
  return v;
}

const std::byte* bytes_of(const std::vector<float>& v) { return reinterpret_cast<const std::byte*>(v.data()); }

/// The plain read: a 64-bit sum over the bytes (4 independent accumulators).
uint64_t read_sum(const std::byte* p, std::size_t bytes) {
  uint64_t s[4] = {0, 0, 0, 0};
  const std::size_t words = bytes / 8;
  std::size_t i = 0;
  for (; i + 4 <= words; i += 4) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, p + (i + k) * 8, 8);
      s[k] += w;
    }
  }
  for (; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, p + i * 8, 8);
    s[0] += w;
  }
  return s[0] + s[1] + s[2] + s[3];
}

/// Best-of-N bandwidth (bytes/s) of the plain read over [p, p + bytes).
double read_bandwidth(const std::byte* p, std::size_t bytes) {
  const int reps = static_cast<int>(std::clamp<std::size_t>((std::size_t{1} << 28) / (bytes + 1), 3, 20000));
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < reps; ++k) benchmark::DoNotOptimize(read_sum(p, bytes));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    best = std::min(best, s);
  }
  return static_cast<double>(bytes) / best;
}

void set_counters(benchmark::State& state, double bytes_per_iteration, int64_t elements,
                  double read_bytes_per_second) {
  state.SetBytesProcessed(static_cast<int64_t>(bytes_per_iteration) * state.iterations());
  state.counters["ns_per_element"] = benchmark::Counter(
      static_cast<double>(elements) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  // vs_read = (bytes / t) / read_bw, as a rate counter: bytes / read_bw per iteration.
  state.counters["vs_read"] = benchmark::Counter(bytes_per_iteration / read_bytes_per_second,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(kernels::cpu_isa_name(kernels::active_cpu_isa())));
}

/// Segments of `count` tensors of `each` float32 elements laid end to end.
std::vector<stats::segment> segments_of(int64_t count, int64_t each) {
  std::vector<stats::segment> segs(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    segs[static_cast<std::size_t>(i)] = {static_cast<uint64_t>(i * each * 4), each, dtype::float32};
  }
  return segs;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same_moments(const stats::moments& a, const stats::moments& b) {
  return a.count == b.count && a.nan_count == b.nan_count && a.pos_inf_count == b.pos_inf_count &&
         a.neg_inf_count == b.neg_inf_count && a.zero_count == b.zero_count &&
         a.positive_count == b.positive_count && a.negative_count == b.negative_count &&
         same_bits(a.min, b.min) && same_bits(a.max, b.max) && same_bits(a.sum, b.sum) &&
         same_bits(a.sum_abs, b.sum_abs) && same_bits(a.sum_squares, b.sum_squares) &&
         same_bits(a.max_abs, b.max_abs) && same_bits(a.mean, b.mean) && same_bits(a.m2, b.m2);
}

/// Check moments of `segs` at the active level against the baseline level and a long double
/// reference. Returns an error message or "".
std::string check_moments(const std::byte* base, const std::vector<stats::segment>& segs) {
  std::vector<stats::moments> got(segs.size()), baseline(segs.size());
  const kernels::cpu_isa active = kernels::active_cpu_isa();
  kernels::set_cpu_isa_limit(static_cast<int>(kernels::cpu_isa::baseline));
  const bool ok_base = kernels::compute_moments_cpu(base, segs, baseline).ok();
  kernels::set_cpu_isa_limit(static_cast<int>(active));
  if (!ok_base || !kernels::compute_moments_cpu(base, segs, got).ok()) return "compute_moments_cpu failed";
  for (std::size_t s = 0; s < segs.size(); ++s) {
    if (!same_moments(got[s], baseline[s])) return "moments differ from the baseline ISA";
    long double sum = 0, sum_abs = 0;
    for (int64_t i = 0; i < segs[s].num_elements; ++i) {
      float x;
      std::memcpy(&x, base + segs[s].offset_bytes + static_cast<uint64_t>(i) * 4, 4);
      if (!std::isfinite(x)) continue;
      sum += x;
      sum_abs += std::fabs(x);
    }
    if (std::fabs(static_cast<long double>(got[s].sum) - sum) > 1e-12L * sum_abs) return "moments sum off";
  }
  return "";
}

void bm_read(benchmark::State& state) {
  const auto& v = data(state.range(0));
  const std::size_t bytes = v.size() * 4;
  for (auto _ : state) benchmark::DoNotOptimize(read_sum(bytes_of(v), bytes));
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.counters["ns_per_element"] = benchmark::Counter(
      static_cast<double>(v.size()) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void bm_moments(benchmark::State& state) {
  kernels::set_cpu_isa_limit(static_cast<int>(state.range(1)));
  const bool specials = state.range(2) != 0;
  const auto& v = data(state.range(0), specials);
  const std::vector<stats::segment> segs = {{0, state.range(0), dtype::float32}};
  if (auto e = check_moments(bytes_of(v), segs); !e.empty()) {
    state.SkipWithError(e.c_str());
    return;
  }
  std::vector<stats::moments> out(1);
  const double read_bw = read_bandwidth(bytes_of(v), v.size() * 4);
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernels::compute_moments_cpu(bytes_of(v), segs, out).ok());
    benchmark::ClobberMemory();
  }
  set_counters(state, static_cast<double>(v.size()) * 4, state.range(0), read_bw);
  kernels::set_cpu_isa_limit(-1);
}

void bm_moments_batch(benchmark::State& state) {
  kernels::set_cpu_isa_limit(static_cast<int>(state.range(1)));
  const int64_t each = 256;
  const int64_t count = state.range(0);
  const auto& v = data(count * each);
  const auto segs = segments_of(count, each);
  if (auto e = check_moments(bytes_of(v), segs); !e.empty()) {
    state.SkipWithError(e.c_str());
    return;
  }
  std::vector<stats::moments> out(segs.size());
  const double read_bw = read_bandwidth(bytes_of(v), v.size() * 4);
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernels::compute_moments_cpu(bytes_of(v), segs, out).ok());
    benchmark::ClobberMemory();
  }
  set_counters(state, static_cast<double>(v.size()) * 4, static_cast<int64_t>(v.size()), read_bw);
  state.counters["ns_per_tensor"] = benchmark::Counter(
      static_cast<double>(count) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  kernels::set_cpu_isa_limit(-1);
}

/// Histogram check: counts at the active level equal histogram_bin element by element.
std::string check_histograms(const std::byte* base, const std::vector<stats::segment>& segs,
                             const std::vector<stats::moments>& m) {
  std::vector<stats::histogram> got(segs.size());
  if (!kernels::compute_histograms_cpu(base, segs, m, bins, got).ok()) return "compute_histograms_cpu failed";
  for (std::size_t s = 0; s < segs.size(); ++s) {
    const auto p = kernels::make_histogram_params(m[s].min, m[s].max, bins);
    std::vector<int64_t> want(bins, 0);
    for (int64_t i = 0; i < segs[s].num_elements; ++i) {
      float x;
      std::memcpy(&x, base + segs[s].offset_bytes + static_cast<uint64_t>(i) * 4, 4);
      if (kernels::histogram_keeps(p, x)) ++want[static_cast<std::size_t>(kernels::histogram_bin(p, x))];
    }
    if (got[s].counts != want) return "histogram counts differ from histogram_bin";
  }
  return "";
}

void bm_histogram(benchmark::State& state) {
  kernels::set_cpu_isa_limit(static_cast<int>(state.range(1)));
  const int64_t each = state.range(2) == 0 ? state.range(0) : 256;
  const int64_t count = state.range(0) / each;
  const auto& v = data(count * each);
  const auto segs = segments_of(count, each);
  std::vector<stats::moments> m(segs.size());
  if (!kernels::compute_moments_cpu(bytes_of(v), segs, m).ok()) {
    state.SkipWithError("moments failed");
    return;
  }
  if (auto e = check_histograms(bytes_of(v), segs, m); !e.empty()) {
    state.SkipWithError(e.c_str());
    return;
  }
  std::vector<stats::histogram> out(segs.size());
  const double read_bw = read_bandwidth(bytes_of(v), v.size() * 4);
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernels::compute_histograms_cpu(bytes_of(v), segs, m, bins, out).ok());
    benchmark::ClobberMemory();
  }
  set_counters(state, static_cast<double>(v.size()) * 4, static_cast<int64_t>(v.size()), read_bw);
  kernels::set_cpu_isa_limit(-1);
}

void bm_pairwise(benchmark::State& state) {
  kernels::set_cpu_isa_limit(static_cast<int>(state.range(1)));
  const int64_t n = state.range(0);
  const auto& a = data(n, false, 1);
  std::vector<float> b = data(n, false, 2);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = a[i] + 1e-3f * b[i];
  const std::vector<int64_t> shape = {n};
  const trialstat::tensor_view va{bytes_of(a), dtype::float32, shape, n, trialstat::memory_kind::host};
  const trialstat::tensor_view vb{bytes_of(b), dtype::float32, shape, n, trialstat::memory_kind::host};
  const stats::allclose_params params{};
  auto first = kernels::compute_pairwise_cpu(va, vb, params);
  kernels::set_cpu_isa_limit(static_cast<int>(kernels::cpu_isa::baseline));
  auto base = kernels::compute_pairwise_cpu(va, vb, params);
  kernels::set_cpu_isa_limit(static_cast<int>(state.range(1)));
  if (!first || !base || first->allclose_violations != base->allclose_violations ||
      !same_bits(first->diff_sum_squares, base->diff_sum_squares) ||
      !same_bits(first->previous_sum_squares, base->previous_sum_squares)) {
    state.SkipWithError("pairwise differs from the baseline ISA");
    return;
  }
  const double read_bw = read_bandwidth(bytes_of(a), a.size() * 4);
  for (auto _ : state) {
    auto r = kernels::compute_pairwise_cpu(va, vb, params);
    benchmark::DoNotOptimize(r);
  }
  set_counters(state, 2.0 * static_cast<double>(n) * 4, n, read_bw);
  kernels::set_cpu_isa_limit(-1);
}

void isa_args(benchmark::internal::Benchmark* b, std::initializer_list<int64_t> sizes, int64_t extra) {
  for (int64_t n : sizes) {
    for (int64_t isa = 0; isa <= static_cast<int64_t>(kernels::detected_cpu_isa()); ++isa) {
      b->Args({n, isa, extra});
    }
  }
}

}  // namespace

BENCHMARK(bm_read)->Arg(256)->Arg(64 << 10)->Arg(4 << 20)->ArgName("elements");
BENCHMARK(bm_moments)
    ->Apply([](auto* b) { isa_args(b, {256, 64 << 10, 4 << 20}, 0); })
    ->Apply([](auto* b) { isa_args(b, {4 << 20}, 1); })
    ->ArgNames({"elements", "isa", "nan"});
BENCHMARK(bm_moments_batch)
    ->Apply([](auto* b) { isa_args(b, {4096}, 0); })
    ->ArgNames({"tensors", "isa", ""});
BENCHMARK(bm_histogram)
    ->Apply([](auto* b) { isa_args(b, {256, 64 << 10, 4 << 20}, 0); })
    ->Apply([](auto* b) { isa_args(b, {1 << 20}, 1); })
    ->ArgNames({"elements", "isa", "batch_1KiB"});
BENCHMARK(bm_pairwise)
    ->Apply([](auto* b) { isa_args(b, {256, 64 << 10, 4 << 20}, 0); })
    ->ArgNames({"elements", "isa", ""});

BENCHMARK_MAIN();

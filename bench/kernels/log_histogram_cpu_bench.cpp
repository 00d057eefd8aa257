// SPDX-License-Identifier: Apache-2.0
// Google Benchmark of the log-scale histogram's CPU twin (kernels/log_histogram/), per ISA level
// and value distribution.
//
//   bench_log_histogram_cpu [--benchmark_filter=...] [--benchmark_repetitions=5]
//
// Arguments: /elements/isa/dist — isa 0 = baseline (SSE2), 1 = AVX2, 2 = AVX-512 (a level above
// the machine's runs as the machine's); dist (float32, fixed seeds):
//   0  normal(0, 0.05)                       (the kernel figures of bench/RESULTS.md)
//   1  uniform(−1/16, 1/16)                  (freshly initialised weights: ranks at both ends)
//   2  normal(0, 1) · e^normal(0, 1.5) · 1e-3 (gradients: a wide band of ranks)
//   3  max(0, normal(0, 1))                  (ReLU outputs: half zeros, one rank)
//   4  zeros                                 (one rank throughout)
// "elements" is one tensor (segment_log_histogram_cpu, the per-tensor path of `stats`), except
// bm_log_histogram_batch: 1 KiB tensors (256 elements) as one batch (compute_log_histograms_cpu).
// Counters: bytes_per_second and ns_per_element.
//
// Every benchmark first checks its kernel: the cells equal log_histogram_rank32's
// (log_histogram_op.hpp, the scalar definition) element by element.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/common/cpu_simd.hpp"
#include "kernels/log_histogram/log_histogram_cpu.hpp"
#include "kernels/log_histogram/log_histogram_op.hpp"

namespace {

using trialstat::dtype;
namespace kernels = trialstat::kernels;
namespace stats = trialstat::stats;

constexpr kernels::log_histogram_tables tables = kernels::make_log_histogram_tables();
constexpr kernels::log_histogram_lookup lookup{tables.rank32, tables.first_rank, tables.next_lower};

/// float32 values of distribution `dist` (see the file comment), fixed seed.
const std::vector<float>& data(int64_t n, int dist) {
  static std::map<std::pair<int64_t, int>, std::vector<float>> cache;
  auto& v = cache[{n, dist}];
  if (v.empty()) {
    std::mt19937_64 rng(1234 + static_cast<uint64_t>(dist));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(-0.0625f, 0.0625f);
    v.resize(static_cast<std::size_t>(n));
    for (auto& x : v) {
      switch (dist) {
        case 0: x = 0.05f * normal(rng); break;
        case 1: x = uniform(rng); break;
        case 2: x = normal(rng) * std::exp(1.5f * normal(rng)) * 1e-3f; break;
        case 3: x = std::max(0.0f, normal(rng)); break;
        default: x = 0.0f; break;
      }
    }
  }
  return v;
}

const std::byte* bytes_of(const std::vector<float>& v) { return reinterpret_cast<const std::byte*>(v.data()); }

void set_counters(benchmark::State& state, int64_t elements) {
  const double bytes = static_cast<double>(elements) * 4;
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.counters["ns_per_element"] = benchmark::Counter(
      static_cast<double>(elements) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetLabel(std::string(kernels::cpu_isa_name(kernels::active_cpu_isa())));
}

/// The cells of `v`'s [begin, begin + n) by the scalar rank (log_histogram_op.hpp).
std::vector<int64_t> reference_cells(const std::vector<float>& v, int64_t begin, int64_t n) {
  std::vector<int64_t> cells(kernels::log_histogram_num_cells, 0);
  for (int64_t i = begin; i < begin + n; ++i) {
    ++cells[static_cast<std::size_t>(
        kernels::log_cell_of_rank(kernels::log_histogram_rank32(lookup, v[static_cast<std::size_t>(i)])))];
  }
  return cells;
}

void bm_log_histogram(benchmark::State& state) {
  kernels::set_cpu_isa_limit(static_cast<int>(state.range(1)));
  const int64_t n = state.range(0);
  const auto& v = data(n, static_cast<int>(state.range(2)));
  const stats::segment seg{0, n, dtype::float32};
  std::vector<int64_t> cells(kernels::log_histogram_num_cells, 0);
  kernels::segment_log_histogram_cpu(bytes_of(v), seg, cells.data(), cells.data() + kernels::log_histogram_num_bins);
  if (cells != reference_cells(v, 0, n)) {
    state.SkipWithError("log histogram cells differ from log_histogram_rank32");
    return;
  }
  for (auto _ : state) {
    kernels::segment_log_histogram_cpu(bytes_of(v), seg, cells.data(), cells.data() + kernels::log_histogram_num_bins);
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
  kernels::set_cpu_isa_limit(-1);
}

void bm_log_histogram_batch(benchmark::State& state) {
  kernels::set_cpu_isa_limit(static_cast<int>(state.range(1)));
  constexpr int64_t each = 256;
  const int64_t count = state.range(0) / each;
  const auto& v = data(count * each, static_cast<int>(state.range(2)));
  std::vector<stats::segment> segs(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i) segs[static_cast<std::size_t>(i)] = {static_cast<uint64_t>(i * each * 4), each, dtype::float32};
  std::vector<int64_t> cells(segs.size() * kernels::log_histogram_num_cells, 0);
  if (!kernels::compute_log_histograms_cpu(bytes_of(v), segs, cells).ok()) {
    state.SkipWithError("compute_log_histograms_cpu failed");
    return;
  }
  for (int64_t s = 0; s < count; ++s) {
    const auto want = reference_cells(v, s * each, each);
    if (!std::equal(want.begin(), want.end(), cells.begin() + s * kernels::log_histogram_num_cells)) {
      state.SkipWithError("log histogram cells differ from log_histogram_rank32");
      return;
    }
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernels::compute_log_histograms_cpu(bytes_of(v), segs, cells).ok());
    benchmark::ClobberMemory();
  }
  set_counters(state, count * each);
  kernels::set_cpu_isa_limit(-1);
}

void isa_args(benchmark::internal::Benchmark* b, std::initializer_list<int64_t> sizes,
              std::initializer_list<int64_t> dists) {
  for (int64_t n : sizes) {
    for (int64_t dist : dists) {
      for (int64_t isa = 0; isa <= static_cast<int64_t>(kernels::detected_cpu_isa()); ++isa) {
        b->Args({n, isa, dist});
      }
    }
  }
}

}  // namespace

BENCHMARK(bm_log_histogram)
    ->Apply([](auto* b) { isa_args(b, {65536}, {0, 1, 2, 3, 4}); })
    ->Apply([](auto* b) { isa_args(b, {256, 4096, 16384, 200003}, {0}); })
    ->ArgNames({"elements", "isa", "dist"});
BENCHMARK(bm_log_histogram_batch)
    ->Apply([](auto* b) { isa_args(b, {1 << 18}, {0}); })
    ->ArgNames({"elements", "isa", "dist"});

BENCHMARK_MAIN();

// SPDX-License-Identifier: Apache-2.0
/// @file selftest.hpp
/// @brief `trialstat selftest` as a library call: every statistic of this header folder, run on
/// two implementations over generated data, compared result by result. It is what a user runs
/// on a new machine (issue 25 item 2):
///  - **CUDA against the CPU twin** (`selftest_options::compare_cuda`): the public entry points
///    with backend::cuda and backend::cpu, and the CUDA statistics executor against the CPU one;
///  - **each SIMD level of the CPU twin against the baseline level** (`compare_cpu_isa`): the
///    levels `kernels/common/cpu_simd.hpp` dispatches to on this CPU (AVX2, AVX-512), forced as
///    `tests/kernels/cpu_lanes_test.cpp` forces them. On a CPU with the baseline level only,
///    the baseline runs twice and the two runs are compared (determinism).
///
/// Data: every real dtype (`dtype_is_real_numeric`), each as one batch at unaligned byte
/// offsets holding these cases: `specials` (±0, the dtype's smallest and largest subnormals,
/// ±Inf, NaN, large values, ±0.5, mixed into random values), `bin_edges` (0…64 with the values
/// one ulp — one bit pattern — either side of each integer: the edges of the 64-bin histogram
/// over [0, 64]), `log_edges` (log-scale histogram edges and their one-ulp neighbours), `bits`
/// (random bit patterns), `normal` (70007 random values: several blocks and chunks) and
/// `one_element`; plus `tiny`, a batch of 600 float32/bfloat16 tensors of 0–16 elements. With
/// `large`, a uint8 tensor of 2³¹ + 4099 elements checks the index arithmetic past 2³¹.
///
/// Tolerances (the comparison is the same for every check):
///  - integers (counts, histogram cells, per-node counts, class counts, k) exactly;
///  - CPU levels: every float bit-identical or both NaN (cpu_simd.hpp: "bit-identical on every
///    ISA, which NaN payload survives a sum aside");
///  - CUDA: the floats each header promises exactly — min, max and histogram edges bit for bit
///    (signed zeros included), max|x|, max|a−b|, percentiles, top-k max and one-element scalars
///    by value (−0.0 == +0.0) — and every other float within `cuda_relative_tolerance` of its
///    scale: 2 × the 1e-12 each header states against a long-double reference (moments.hpp:
///    Σx, Σ|x| and the mean relative to Σ|x|, Σx² to itself, the variance to max(variance,
///    mean²); pairwise.hpp; order_statistics.hpp: top-k sums relative to Σ|x|; channel_sums.hpp:
///    each channel's Σ|x|), as tests/stats/gpu_twin_test.cpp checks. A non-finite sum must be
///    the same non-finite value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trialstat/stats/result_comparison.hpp"
#include "trialstat/status.hpp"

namespace trialstat::stats {

/// @brief Relative tolerance of CUDA floats that are not exact: twice the 1e-12 each public
/// header promises against a long-double reference (both twins within it, so within 2e-12 of
/// each other).
inline constexpr double cuda_relative_tolerance = device_relative_tolerance;

/// @brief Elements of the `large` case: past 2³¹, odd, so no power-of-two split hides an
/// off-by-one.
inline constexpr int64_t selftest_large_elements = (int64_t{1} << 31) + 4099;

/// @brief Test hook: change one result of the compared side before the comparison, to prove
/// that the comparison catches it.
enum class selftest_perturbation : uint8_t {
  none,
  /// One ulp (std::nextafter) on a float the statistic promises exactly on both backends: the
  /// maximum of `moments` and of `top_k_sum`, the last edge of `histogram`, `diff_max_abs` of
  /// `pairwise`, the first finite percentile, the maximum of the `executor`'s moments. Other
  /// statistics have no such float, and the hook leaves them alone.
  float_ulp,
  /// +1 on one count: `moments` nan_count, `histogram` and `log_histogram` a cell, `pairwise`
  /// allclose violations, `axis0_counts` a node, `count_equal`, `channel_sums`, `bincount`,
  /// `confusion` a count, `top_k_sum` k, the `executor`'s moments count. `percentiles` has none.
  count_off_by_one,
};

/// @brief What to compare.
struct selftest_options {
  /// CUDA against the CPU twin (at the CPU's best level). Needs `cuda_device_available()`.
  bool compare_cuda = false;
  /// Each SIMD level above the baseline against the baseline (or the baseline twice).
  bool compare_cpu_isa = true;
  /// Add the 2³¹ + 4099-element case when memory allows: host memory for the tensor and the
  /// copies the entry points make (about 3 × 2.1 GB available; with CUDA also 2 × 2.1 GB free
  /// on the device). When it does not fit, a note says so and the case is skipped.
  bool large = false;
  /// Seed of the generated data (the same seed gives the same bytes).
  uint64_t seed = 25;
  /// Test hook: the statistics (their `selftest_check::statistic` names) whose first applicable
  /// result on the compared side is changed by `perturbation` — once each, in the first check
  /// of that statistic where the perturbation has a target; empty = none.
  std::vector<std::string> perturb_statistics;
  selftest_perturbation perturbation = selftest_perturbation::none;
};

/// @brief One comparison: one statistic over one batch (a dtype's cases, `tiny` or `large`).
/// The outcome (passed, largest differences, the first mismatch — "tensor, case, field, both
/// values", or the error a side returned) is result_comparison.hpp's.
struct selftest_check : comparison_outcome {
  /// "moments", "histogram", "log_histogram", "pairwise", "axis0_counts", "percentiles",
  /// "count_equal", "channel_sums", "bincount", "confusion", "top_k_sum" or "executor".
  std::string statistic;
  /// The data: a dtype name ("float16": its six cases), "tiny" or "large".
  std::string data_case;
  /// "cuda vs cpu", "avx2 vs baseline", "avx512 vs baseline" or "baseline vs baseline".
  std::string backends;
  /// Elements each side read (Σ over the batch's tensors; pairwise and confusion count both
  /// operands; the executor counts each of its two steps).
  int64_t num_elements = 0;
};

/// @brief Every check, and what was not run and why.
struct selftest_report {
  std::vector<selftest_check> checks;
  /// Lines for the user: the CPU's SIMD level, a skipped `large` case with the memory found.
  std::vector<std::string> notes;
  /// @brief True when there is at least one check and every check passed.
  [[nodiscard]] bool passed() const noexcept {
    if (checks.empty()) return false;
    for (const auto& c : checks) {
      if (!c.passed) return false;
    }
    return true;
  }
};

/// @brief Run the comparisons `options` asks for. Prints nothing. A statistic that returns an
/// error on either side is a failed check (its `mismatch` holds the error), not an error of
/// this call. On the CPU alone (`compare_cuda` off) it takes about a second on two cores.
/// Restores the CPU level cap (`set_cpu_isa_limit(-1)`) before returning; not to be run while
/// other threads compute statistics (the cap is process-wide).
/// @return the report; errors: invalid_argument when `compare_cuda` is set and CUDA is not
///   built or no device is visible, or when nothing is to be compared; out_of_memory when the
///   generated data cannot be allocated.
[[nodiscard]] result<selftest_report> run_selftest(const selftest_options& options);

}  // namespace trialstat::stats

// SPDX-License-Identifier: Apache-2.0
// CPU twin of the histogram. Per block of cpu_block_elements, the lane body
// (histogram_lanes_cpu.hpp, compiled per ISA) computes every element's bin into a small index
// array (a value numpy does not keep goes to a spill bin), then counts the indices into four
// interleaved sub-histograms so that runs of equal bins do not serialise on one counter
// (store-to-load forwarding), and finally adds the sub-histograms into the chunk's int64 counts.
// Chunks of ≥ 16 Ki elements with ≤ 64 bins (the default) count pairs of consecutive elements
// instead — one counter update per two elements, into two alternating tables of (bins + 1)²
// pair counters whose row and column sums are the bins' counts (0.56–0.65 → 0.47 ns per
// float32 element for 64 bins on 256 KiB tensors; bench/RESULTS.md, twelfth session).
// Counts are integers: the result is identical for any thread count, order or ISA.
//
// The guess. numpy divides, g = int(((x − lo) / (hi − lo))·bins), then corrects g by one bin
// against the edges (histogram_bin_t). bin_mode::exact does exactly that over lanes. When the
// edges are well resolved (fast_guess_ok: bins ≤ 2^24, a finite normal range, and a bin width
// step ≥ 2^-30·M with M = max(|lo|, |hi|)), bin_mode::fast multiplies instead,
// f = (x − lo)·(bins / (hi − lo)), and skips the correction when f is at least
// fast_guess_margin = 2^-16 away from an integer. Why that is numpy's bin: let
// u(y) = (y − lo)·bins/(hi − lo) in exact arithmetic and t the bin with
// edge[t] ≤ x < edge[t + 1] (the last bin closed).
//  - Each edge is i·step + lo in two roundings with step = (hi − lo)/bins rounded, so
//    |u(edge[i]) − i| ≤ 2·2^-53·bins + 2^-53·M/step ≤ 2^-28 + 2^-23 < 2^-22. Edges are
//    therefore strictly increasing, and u(x) ∈ [t − 2^-22, t + 1 + 2^-22].
//  - Both numpy's guess and f are three roundings from u(x) ≤ bins: |f − u(x)| ≤ 2^-27.
//  - So numpy's int guess is t − 1, t or t + 1, which its correction maps to t (t − 1:
//    x ≥ edge[t] increments; t + 1: x < edge[t + 1] decrements): numpy's bin is t. The same
//    holds for int(f) with the same correction (taken when f is near an integer).
//  - If f − floor(f) ∈ [2^-16, 1 − 2^-16], then u(x) is more than 2^-16 − 2^-27 > 2^-22 from
//    every integer, so u(edge[k]) < u(x) < u(edge[k + 1]) for k = floor(f): t = k, no
//    correction needed. The guess is clamped to [2^-15, bins − 1/2]: below 2^-15 (x near lo)
//    u(x) < 2^-15 + 2^-27 < 1 − 2^-22, so t = 0; above bins − 1/2 (x near hi)
//    u(x) > bins − 1 + 2^-22, so t = bins − 1; both are the clamped guess's integer part.
// tests/kernels/cpu_lanes_test.cpp checks every mode and ISA against histogram_bin on
// values at, and ulps next to, every edge.
#include "kernels/histogram/histogram_cpu.hpp"

#include "kernels/common/cpu_simd.hpp"  // first: turns FP contraction off for this file

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/histogram/histogram_op.hpp"

namespace trialstat::kernels {
namespace {

constexpr int sub_histograms = 4;
/// Sub-histograms for up to this many bins live on the stack.
constexpr int stack_bins = 256;
/// Chunks of at most this many elements count into one sub-histogram, then the int64 output.
constexpr int64_t direct_count_elements = 256;
/// Chunks of at most this many elements add one by one straight into the int64 output.
constexpr int64_t direct_add_elements = 64;
/// Chunks of at least this many elements, with at most pair_max_bins bins, count pairs of
/// elements (histogram_lanes_cpu.hpp, count_pairs_into_tables: one counter update per two
/// elements, 2 tables of (bins + 1)² counters — 34 KB for 64 bins — flushed once per chunk,
/// which smaller chunks would not repay).
constexpr int64_t pair_count_elements = 16384;
constexpr int pair_max_bins = 64;

/// Counters a chunk needs for `bins` bins (sub-histograms, or pair tables).
constexpr std::size_t scratch_words(int bins) {
  const auto sub = static_cast<std::size_t>(sub_histograms) * (static_cast<std::size_t>(bins) + 2);
  const auto pairs = 2 * (static_cast<std::size_t>(bins) + 1) * (static_cast<std::size_t>(bins) + 1);
  return bins <= pair_max_bins && pairs > sub ? pairs : sub;
}

/// How a tensor's bins are computed.
enum class bin_mode : int {
  degenerate,    ///< every kept value in bin bins/2
  constant,      ///< min == max (range widened): every finite value is min, one known bin
  exact,         ///< numpy's guess (a division) and correction, step ≠ 0
  exact_step0,   ///< numpy's guess and correction, linspace's step == 0 branch
  fast,          ///< multiplied guess, corrected only near integers (fast_guess_ok only)
  fast32,        ///< float32/float16/bfloat16 tensors: the same in float32 over 16 lanes (fast32_guess_ok)
};

/// A fast guess closer than this to an integer takes numpy's correction.
constexpr double fast_guess_margin = 0x1p-16;

/// Whether the multiplied guess provably ends in numpy's bin (see above): at most 2^24 bins,
/// a finite normal range and scale, and a bin width of at least 2^-30 of max(|lo|, |hi|)
/// (float32/float16/bfloat16 tensors with 64 bins always qualify: their range is at least one
/// float32 ulp, 2^-24 of it; float64 tensors with ultra-narrow ranges and int64 tensors of huge
/// values take bin_mode::exact).
bool fast_guess_ok(const histogram_params& p) {
  if (p.degenerate || p.step_zero || p.bins > (1 << 24)) return false;
  const double scale = static_cast<double>(p.bins) / p.delta;
  const double magnitude = std::fabs(p.lo) > std::fabs(p.hi) ? std::fabs(p.lo) : std::fabs(p.hi);
  return std::isfinite(p.delta) && p.delta >= 0x1p-900 && std::isfinite(scale) &&
         std::isfinite(magnitude) && p.step >= 0x1p-30 * magnitude;
}

/// float32 guesses (bin_mode::fast32): f = (x − lo)·scale evaluated in float32 (three
/// roundings of 2^-24: |f − u(x)| ≤ 3.1·2^-24·bins) is final when at least
/// fast32_margin(bins) = bins·2^-20 away from an integer — five times that error plus the edges'
/// 2^-22 (the argument above, with this margin). Needs a fast_guess_ok range whose ends are
/// float32 values (the min/max of a float32 tensor are), at most 1024 bins (margin ≤ 2^-10),
/// and a normal float32 range and scale.
float fast32_margin(int bins) {
  return static_cast<float>(static_cast<double>(bins) * 0x1p-20);  // exact (bins ≤ 2^24): ldexp's value, no call
}

bool fast32_guess_ok(const histogram_params& p) {
  if (!fast_guess_ok(p) || p.bins > 1024) return false;
  const double scale = static_cast<double>(p.bins) / p.delta;
  return static_cast<double>(static_cast<float>(p.lo)) == p.lo &&
         static_cast<double>(static_cast<float>(p.hi)) == p.hi && p.delta <= 0x1p100 &&
         p.delta >= 0x1p-100 && scale <= 0x1p100;
}

bin_mode choose_mode(const histogram_params& p, const stats::moments& m, dtype type) {
  if (p.degenerate) return bin_mode::degenerate;
  if (m.min == m.max) return bin_mode::constant;
  if (p.step_zero) return bin_mode::exact_step0;
  // float16 / bfloat16 values are float32 values (the argument above holds for them).
  if ((type == dtype::float32 || type == dtype::float16 || type == dtype::bfloat16) &&
      fast32_guess_ok(p)) {
    return bin_mode::fast32;
  }
  return fast_guess_ok(p) ? bin_mode::fast : bin_mode::exact;
}

}  // namespace
}  // namespace trialstat::kernels

#define TRIALSTAT_CPU_KERNEL_BODY "kernels/histogram/histogram_lanes_cpu.hpp"
#include "kernels/common/cpu_regions.hpp"

namespace trialstat::kernels {
namespace {

/// Per-thread counters (scratch_words): on the stack up to stack_bins, else one heap block.
class scratch_counters {
 public:
  explicit scratch_counters(int bins) {
    if (bins > stack_bins) {
      heap_.reset(new (std::nothrow) uint32_t[scratch_words(bins)]);
      data_ = heap_.get();
    }
  }
  [[nodiscard]] uint32_t* get() noexcept { return data_; }

 private:
  static constexpr std::size_t stack_words =
      std::max(scratch_words(stack_bins), scratch_words(pair_max_bins));
  alignas(64) uint32_t stack_[stack_words];
  std::unique_ptr<uint32_t[]> heap_;
  uint32_t* data_ = stack_;
};

/// A segment's binning: numpy's parameters over [min, max] and the mode that bins it.
struct segment_binning {
  histogram_params params;
  bin_mode mode = bin_mode::exact;
};

/// Start `h` for a segment with moments `m`: bins, range and zero counts; false (h empty,
/// bins = 0, nothing to count) when the segment has no finite values.
bool start_histogram(const stats::moments& m, int bins, dtype type, stats::histogram& h,
                     segment_binning& binning) {
  h = stats::histogram{};
  if (!(m.has_finite() && m.min <= m.max)) return false;
  binning.params = make_histogram_params(m.min, m.max, bins);
  binning.mode = choose_mode(binning.params, m, type);
  h.bins = bins;
  h.lo = binning.params.lo;
  h.hi = binning.params.hi;
  h.degenerate = binning.params.degenerate;
  h.counts.assign(static_cast<std::size_t>(bins), 0);
  return true;
}

/// Every chunk of a segment, in order, counted straight into `counts` on this thread.
void count_segment(const unsigned char* bytes_base, const stats::segment& seg,
                   const segment_binning& binning, double min, uint32_t* scratch,
                   int64_t* counts) {
  const auto chunk = TRIALSTAT_CPU_SELECT(chunk_histogram);
  for (int64_t begin = 0; begin < seg.num_elements; begin += cpu_chunk_elements) {
    const int64_t left = seg.num_elements - begin;
    chunk(bytes_base + seg.offset_bytes, seg.type, begin,
          left < cpu_chunk_elements ? left : cpu_chunk_elements, binning.params, binning.mode,
          min, scratch, counts);
  }
}

status bins_out_of_range(int bins) {
  return status(error_code::invalid_argument,
                "compute_histograms: bins must be in [1, 2^24], got " + std::to_string(bins));
}

status scratch_failed(int bins) {
  return status(error_code::out_of_memory,
                "compute_histograms: cannot allocate sub-histograms for " + std::to_string(bins) +
                    " bins");
}

}  // namespace

status segment_histogram_cpu(const std::byte* base, const stats::segment& seg,
                             const stats::moments& seg_moments, int bins,
                             stats::histogram& out) noexcept {
  if (bins < 1 || bins > (1 << 24)) return bins_out_of_range(bins);
  try {
    segment_binning binning;
    if (!start_histogram(seg_moments, bins, seg.type, out, binning)) return status::success();
    scratch_counters scratch(bins);
    if (scratch.get() == nullptr) return scratch_failed(bins);
    count_segment(reinterpret_cast<const unsigned char*>(base), seg, binning, seg_moments.min,
                  scratch.get(), out.counts.data());
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_histograms: cannot allocate counts of " + std::to_string(bins) + " bins");
  }
  return status::success();
}

status compute_histograms_cpu(const std::byte* base, std::span<const stats::segment> segments,
                              std::span<const stats::moments> segment_moments, int bins,
                              std::span<stats::histogram> out) noexcept {
  if (segment_moments.size() != segments.size() || out.size() != segments.size()) {
    return status(error_code::invalid_argument,
                  "compute_histograms: " + std::to_string(segments.size()) + " segments, " +
                      std::to_string(segment_moments.size()) + " moments records and " +
                      std::to_string(out.size()) + " outputs (sizes must match)");
  }
  if (bins < 1 || bins > (1 << 24)) return bins_out_of_range(bins);
  TRIALSTAT_RETURN_IF_ERROR(validate_segments(base, segments, "compute_histograms"));
  const auto* bytes_base = reinterpret_cast<const unsigned char*>(base);
  const auto chunk = TRIALSTAT_CPU_SELECT(chunk_histogram);
  try {
    // Outputs, binnings and the work they need.
    std::vector<segment_binning> binnings(segments.size());
    std::vector<stats::segment> work_segments(segments.begin(), segments.end());
    int64_t work = 0;
    for (std::size_t s = 0; s < segments.size(); ++s) {
      if (!start_histogram(segment_moments[s], bins, segments[s].type, out[s], binnings[s])) {
        work_segments[s].num_elements = 0;  // nothing to bin: bins = 0, no counts
        continue;
      }
      work += work_segments[s].num_elements;
    }
    int64_t num_chunks = 0;
    for (const auto& s : work_segments) num_chunks += (s.num_elements + cpu_chunk_elements - 1) / cpu_chunk_elements;

    if (!cpu_should_parallelise(num_chunks, work)) {
      // Serial: every chunk counts straight into its segment's output (integers: any order).
      scratch_counters scratch(bins);
      if (scratch.get() == nullptr) return scratch_failed(bins);
      for (std::size_t s = 0; s < segments.size(); ++s) {
        count_segment(bytes_base, work_segments[s], binnings[s], segment_moments[s].min,
                      scratch.get(), out[s].counts.data());
      }
      return status::success();
    }

    const cpu_work_plan plan = plan_cpu_chunks(work_segments);
    // Chunks of one segment count into separate rows (no sharing between threads), then rows
    // are added per segment. A single-chunk segment counts straight into its output.
    std::vector<int64_t> row_of_item(plan.items.size(), -1);
    int64_t rows = 0;
    for (std::size_t s = 0; s < segments.size(); ++s) {
      if (plan.first[s + 1] - plan.first[s] > 1) {
        for (int64_t i = plan.first[s]; i < plan.first[s + 1]; ++i) {
          row_of_item[static_cast<std::size_t>(i)] = rows++;
        }
      }
    }
    std::vector<int64_t> partial(static_cast<std::size_t>(rows) * static_cast<std::size_t>(bins),
                                 0);
    std::atomic<bool> failed{false};
    cpu_parallel_for(static_cast<int64_t>(plan.items.size()), work, [&](int64_t i) {
      const cpu_work_item& item = plan.items[static_cast<std::size_t>(i)];
      const auto s = static_cast<std::size_t>(item.segment);
      scratch_counters scratch(bins);
      if (scratch.get() == nullptr) {
        failed.store(true, std::memory_order_relaxed);
        return;
      }
      const int64_t row = row_of_item[static_cast<std::size_t>(i)];
      int64_t* counts = row < 0 ? out[s].counts.data()
                                : partial.data() + row * static_cast<int64_t>(bins);
      chunk(bytes_base + segments[s].offset_bytes, segments[s].type, item.begin, item.count,
            binnings[s].params, binnings[s].mode, segment_moments[s].min, scratch.get(), counts);
    });
    if (failed.load()) return scratch_failed(bins);
    for (std::size_t s = 0; s < segments.size(); ++s) {
      for (int64_t i = plan.first[s]; i < plan.first[s + 1]; ++i) {
        const int64_t row = row_of_item[static_cast<std::size_t>(i)];
        if (row < 0) continue;
        const int64_t* src = partial.data() + row * static_cast<int64_t>(bins);
        for (int bin = 0; bin < bins; ++bin) out[s].counts[static_cast<std::size_t>(bin)] += src[bin];
      }
    }
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_histograms: cannot allocate counts for " +
                      std::to_string(segments.size()) + " segments of " + std::to_string(bins) +
                      " bins");
  }
  return status::success();
}

}  // namespace trialstat::kernels

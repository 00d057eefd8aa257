// SPDX-License-Identifier: Apache-2.0
// CPU twin of the histogram. Per block: convert to float64 once, compute every element's bin
// with the branch-free guess + correction of histogram_op.hpp into a small index array (a
// rejected value goes to a spill bin), then count the indices into four interleaved
// sub-histograms so that runs of equal bins do not serialise on one counter (store-to-load
// forwarding), and finally add the sub-histograms into the chunk's int64 counts.
#include "kernels/histogram/histogram_cpu.hpp"

#include <algorithm>
#include <atomic>
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

/// Bins of n converted values into idx (spill bin = p.bins for values numpy does not keep).
/// One branch-free loop per case, so the compiler vectorises the index computation.
template <bool StepZero>
void bin_block_t(const histogram_params& p, const double* buf, int64_t n, int32_t* idx) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = buf[i];
    const int bin = histogram_bin_t<StepZero>(p, x);
    idx[i] = histogram_keeps(p, x) ? bin : p.bins;
  }
}

void bin_block(const histogram_params& p, const double* buf, int64_t n, int32_t* idx) {
  if (p.degenerate) {
    for (int64_t i = 0; i < n; ++i) idx[i] = histogram_keeps(p, buf[i]) ? p.bins / 2 : p.bins;
  } else if (p.step_zero) {
    bin_block_t<true>(p, buf, n, idx);
  } else {
    bin_block_t<false>(p, buf, n, idx);
  }
}

/// Counts of elements [begin, begin + count) of a D segment into `counts` [bins] (added).
/// `scratch` holds sub_histograms × (bins + 1) uint32 counters.
template <dtype D>
void chunk_histogram(const unsigned char* bytes, int64_t begin, int64_t count,
                     const histogram_params& p, uint32_t* scratch, int64_t* counts) {
  alignas(64) double buf[cpu_block_elements];
  alignas(64) int32_t idx[cpu_block_elements];
  const int64_t stride = p.bins + 1;
  std::fill(scratch, scratch + sub_histograms * stride, 0u);
  for (int64_t b = 0; b < count; b += cpu_block_elements) {
    const int64_t n = std::min(count - b, cpu_block_elements);
    const unsigned char* src = bytes + (begin + b) * element_size_v<D>;
    for (int64_t i = 0; i < n; ++i) buf[i] = load_as_double<D, false>(src, i);
    bin_block(p, buf, n, idx);
    int64_t i = 0;
    for (; i + sub_histograms <= n; i += sub_histograms) {
      for (int k = 0; k < sub_histograms; ++k) ++scratch[k * stride + idx[i + k]];
    }
    for (; i < n; ++i) ++scratch[idx[i]];
  }
  // A chunk has ≤ 2^16 elements per sub-histogram counter, far below 2^32.
  for (int bin = 0; bin < p.bins; ++bin) {
    uint64_t total = 0;
    for (int k = 0; k < sub_histograms; ++k) total += scratch[k * stride + bin];
    counts[bin] += static_cast<int64_t>(total);
  }
}

}  // namespace

status compute_histograms_cpu(const std::byte* base, std::span<const stats::segment> segments,
                              std::span<const stats::moments> segment_moments, int bins,
                              std::span<stats::histogram> out) noexcept {
  if (segment_moments.size() != segments.size() || out.size() != segments.size()) {
    return status(error_code::invalid_argument,
                  "compute_histograms: " + std::to_string(segments.size()) + " segments, " +
                      std::to_string(segment_moments.size()) + " moments records and " +
                      std::to_string(out.size()) + " outputs (sizes must match)");
  }
  if (bins < 1 || bins > (1 << 24)) {
    return status(error_code::invalid_argument,
                  "compute_histograms: bins must be in [1, 2^24], got " + std::to_string(bins));
  }
  TRIALSTAT_RETURN_IF_ERROR(validate_segments(base, segments, "compute_histograms"));
  try {
    std::vector<histogram_params> params(segments.size());
    std::vector<stats::segment> work_segments(segments.begin(), segments.end());
    for (std::size_t s = 0; s < segments.size(); ++s) {
      const stats::moments& m = segment_moments[s];
      stats::histogram& h = out[s];
      h = stats::histogram{};
      const bool has_finite = m.has_finite() && m.min <= m.max;
      if (!has_finite) {
        work_segments[s].num_elements = 0;  // nothing to bin: bins = 0, no counts
        continue;
      }
      params[s] = make_histogram_params(m.min, m.max, bins);
      h.bins = bins;
      h.lo = params[s].lo;
      h.hi = params[s].hi;
      h.degenerate = params[s].degenerate;
      h.counts.assign(static_cast<std::size_t>(bins), 0);
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
    std::atomic<bool> scratch_failed{false};
    const std::size_t scratch_size =
        static_cast<std::size_t>(sub_histograms) * (static_cast<std::size_t>(bins) + 1);
    cpu_parallel_for(static_cast<int64_t>(plan.items.size()), [&](int64_t i) {
      const cpu_work_item& item = plan.items[static_cast<std::size_t>(i)];
      const auto s = static_cast<std::size_t>(item.segment);
      std::unique_ptr<uint32_t[]> scratch(new (std::nothrow) uint32_t[scratch_size]);
      if (!scratch) {
        scratch_failed.store(true, std::memory_order_relaxed);
        return;
      }
      const int64_t row = row_of_item[static_cast<std::size_t>(i)];
      int64_t* counts = row < 0 ? out[s].counts.data()
                                : partial.data() + row * static_cast<int64_t>(bins);
      const auto* bytes = reinterpret_cast<const unsigned char*>(base) + segments[s].offset_bytes;
      visit_real_dtype(segments[s].type, [&](auto tag) {
        chunk_histogram<decltype(tag)::value>(bytes, item.begin, item.count, params[s],
                                              scratch.get(), counts);
      });
    });
    if (scratch_failed.load()) {
      return status(error_code::out_of_memory,
                    "compute_histograms: cannot allocate sub-histograms for " +
                        std::to_string(bins) + " bins");
    }
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

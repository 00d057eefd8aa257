// SPDX-License-Identifier: Apache-2.0
// Public log-scale histogram entry points: validate, pick the backend, call the twin
// (kernels/log_histogram/), unpack the cells into records.
#include "trialstat/stats/log_histogram.hpp"

#include <string>
#include <utility>
#include <vector>

#include "host/stats/dispatch.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/log_histogram/log_histogram_cpu.hpp"
#include "kernels/log_histogram/log_histogram_op.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/common/result_poison.hpp"
#include "kernels/log_histogram/log_histogram_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {
namespace {

static_assert(log_histogram_bins == kernels::log_histogram_num_bins);

constexpr kernels::log_histogram_edge_table edge_table = kernels::make_log_histogram_edges();

#if TRIALSTAT_HAS_CUDA
status compute_log_histograms_cuda(const std::byte* base, std::span<const segment> segments,
                                   std::vector<int64_t>& cells) {
  detail::cuda_context cuda;
  TRIALSTAT_RETURN_IF_ERROR(cuda.open());
  auto staged = detail::stage_batch(cuda, base, segments, "compute_log_histograms");
  if (!staged) return staged.error_status();
  const kernels::device_batch& batch = *staged;
  auto d_out = cuda.reserve(detail::cuda_context::output, cells.size() * sizeof(int64_t));
  if (!d_out) return d_out.error_status();
  auto* d_cells = reinterpret_cast<int64_t*>(*d_out);
  TRIALSTAT_RETURN_IF_ERROR(cuda.run_two_phase([&](void* workspace, std::size_t* bytes) {
    return kernels::launch_log_histograms(batch, workspace == nullptr ? nullptr : d_cells,
                                          workspace, bytes, cuda.stream());
  }));
  TRIALSTAT_RETURN_IF_ERROR(cuda.download(cells.data(), d_cells, cells.size() * sizeof(int64_t)));
  constexpr auto per = static_cast<std::size_t>(kernels::log_histogram_num_cells);
  for (std::size_t s = 0; s < segments.size(); ++s) {
    if (kernels::counts_poisoned(cells.data() + s * per, per)) {
      return detail::poisoned_result("compute_log_histograms", s);
    }
  }
  return status::success();
}
#endif

}  // namespace

std::span<const double> log_histogram_edges() noexcept {
  return {edge_table.edge, static_cast<std::size_t>(kernels::log_histogram_num_edges)};
}

log_histogram log_histogram_from_cells(std::vector<int64_t>&& bin_counts, const int64_t* extra_cells) {
  static_assert(kernels::log_histogram_num_bins == log_histogram_bins);
  constexpr int bins = kernels::log_histogram_num_bins;
  log_histogram h;
  h.counts = std::move(bin_counts);
  h.nan_count = extra_cells[kernels::log_cell_nan - bins];
  h.pos_inf_count = extra_cells[kernels::log_cell_pos_inf - bins];
  h.neg_inf_count = extra_cells[kernels::log_cell_neg_inf - bins];
  h.below_count = extra_cells[kernels::log_cell_below - bins];
  h.above_count = extra_cells[kernels::log_cell_above - bins];
  return h;
}

log_histogram log_histogram_from_cells(const int64_t* cells) {
  return log_histogram_from_cells(
      std::vector<int64_t>(cells, cells + kernels::log_histogram_num_bins),
      cells + kernels::log_histogram_num_bins);
}

status compute_log_histograms(const std::byte* base, std::span<const segment> segments,
                              std::span<log_histogram> out, backend which) {
  if (out.size() != segments.size()) {
    return status(error_code::invalid_argument,
                  "compute_log_histograms: " + std::to_string(segments.size()) +
                      " segments but " + std::to_string(out.size()) + " outputs");
  }
  TRIALSTAT_RETURN_IF_ERROR(kernels::validate_segments(base, segments, "compute_log_histograms"));
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "compute_log_histograms"));
  constexpr auto per = static_cast<std::size_t>(kernels::log_histogram_num_cells);
  std::vector<int64_t> cells;
  try {
    cells.assign(segments.size() * per, 0);
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory, "compute_log_histograms: cannot allocate counts");
  }
  if (which == backend::cpu) {
    TRIALSTAT_RETURN_IF_ERROR(kernels::compute_log_histograms_cpu(base, segments, cells));
  } else {
#if TRIALSTAT_HAS_CUDA
    if (!segments.empty()) TRIALSTAT_RETURN_IF_ERROR(compute_log_histograms_cuda(base, segments, cells));
#else
    return status(error_code::invalid_argument, "compute_log_histograms: no CUDA backend in this build");
#endif
  }
  for (std::size_t s = 0; s < segments.size(); ++s) {
    out[s] = log_histogram_from_cells(cells.data() + s * per);
  }
  return status::success();
}

tensorboard_buckets to_tensorboard_buckets(const log_histogram& histogram) {
  tensorboard_buckets out;
  const auto& counts = histogram.counts;
  std::size_t first = counts.size();
  std::size_t last = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    if (first == counts.size()) first = i;
    last = i;
  }
  if (first == counts.size()) return out;  // nothing binned
  const auto edges = log_histogram_edges();
  // smdebug: counts[start-1:end] (or [0] + counts[:end] when start == 0), limits[start:end+1],
  // with start = first non-empty bin and end = last non-empty bin + 1.
  if (first == 0) {
    out.counts.push_back(0);
    out.counts.insert(out.counts.end(), counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  } else {
    out.counts.assign(counts.begin() + static_cast<std::ptrdiff_t>(first) - 1,
                      counts.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  }
  out.limits.assign(edges.begin() + static_cast<std::ptrdiff_t>(first),
                    edges.begin() + static_cast<std::ptrdiff_t>(last) + 2);
  return out;
}

}  // namespace trialstat::stats

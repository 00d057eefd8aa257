// SPDX-License-Identifier: Apache-2.0
// Public histogram entry point: validate, pick the backend, call the twin (kernels/histogram/).
#include "trialstat/stats/histogram.hpp"

#include <string>
#include <vector>

#include "host/stats/dispatch.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/histogram/histogram_cpu.hpp"
#include "kernels/histogram/histogram_op.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/common/result_poison.hpp"
#include "kernels/histogram/histogram_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {
namespace {

#if TRIALSTAT_HAS_CUDA
status compute_histograms_cuda(const std::byte* base, std::span<const segment> segments,
                               std::span<const moments> segment_moments, int bins,
                               std::span<histogram> out) {
  const std::size_t cells = segments.size() * static_cast<std::size_t>(bins);
  std::vector<int64_t> h_counts(cells);
  detail::cuda_context cuda;
  TRIALSTAT_RETURN_IF_ERROR(cuda.open());
  auto staged = detail::stage_batch(cuda, base, segments, "compute_histograms");
  if (!staged) return staged.error_status();
  const kernels::device_batch& batch = *staged;
  auto d_moments = cuda.upload(detail::cuda_context::table_b, segment_moments);
  if (!d_moments) return d_moments.error_status();
  auto d_out = cuda.reserve(detail::cuda_context::output, cells * sizeof(int64_t));
  if (!d_out) return d_out.error_status();
  auto* d_counts = reinterpret_cast<int64_t*>(*d_out);
  TRIALSTAT_RETURN_IF_ERROR(cuda.run_two_phase([&](void* workspace, std::size_t* bytes) {
    const bool query = workspace == nullptr;
    return kernels::launch_histograms(batch, query ? nullptr : *d_moments, bins,
                                      query ? nullptr : d_counts, workspace, bytes, cuda.stream());
  }));
  TRIALSTAT_RETURN_IF_ERROR(cuda.download(h_counts.data(), d_counts, cells * sizeof(int64_t)));
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const moments& m = segment_moments[s];
    histogram& h = out[s];
    h = histogram{};
    if (!(m.has_finite() && m.min <= m.max)) continue;
    const kernels::histogram_params p = kernels::make_histogram_params(m.min, m.max, bins);
    h.bins = bins;
    h.lo = p.lo;
    h.hi = p.hi;
    h.degenerate = p.degenerate;
    const auto first = h_counts.begin() + static_cast<std::ptrdiff_t>(s * static_cast<std::size_t>(bins));
    if (kernels::counts_poisoned(&*first, static_cast<std::size_t>(bins))) {
      h = histogram{};
      return detail::poisoned_result("compute_histograms", s);
    }
    h.counts.assign(first, first + bins);
  }
  return status::success();
}
#endif

}  // namespace

status compute_histograms(const std::byte* base, std::span<const segment> segments,
                          std::span<const moments> segment_moments, int bins,
                          std::span<histogram> out, backend which) {
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
  TRIALSTAT_RETURN_IF_ERROR(kernels::validate_segments(base, segments, "compute_histograms"));
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "compute_histograms"));
  if (which == backend::cpu) {
    return kernels::compute_histograms_cpu(base, segments, segment_moments, bins, out);
  }
#if TRIALSTAT_HAS_CUDA
  if (segments.empty()) return status::success();
  return compute_histograms_cuda(base, segments, segment_moments, bins, out);
#else
  return status(error_code::invalid_argument, "compute_histograms: no CUDA backend in this build");
#endif
}

}  // namespace trialstat::stats

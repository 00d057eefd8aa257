// SPDX-License-Identifier: Apache-2.0
// Public moments entry points: validate, pick the backend, call the twin (kernels/moments/).
#include "trialstat/stats/moments.hpp"

#include <string>
#include <vector>

#include "host/stats/dispatch.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/moments/moments_cpu.hpp"
#include "kernels/moments/moments_op.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/moments/moments_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {
namespace {

#if TRIALSTAT_HAS_CUDA
status compute_moments_cuda(const std::byte* base, std::span<const segment> segments,
                            std::span<moments> out) {
  std::size_t span_bytes = 0;
  TRIALSTAT_RETURN_IF_ERROR(detail::segments_span_bytes(segments, "compute_moments", span_bytes));
  int64_t total_elements = 0;
  for (const auto& s : segments) total_elements += s.num_elements;
  detail::cuda_stream stream;
  TRIALSTAT_RETURN_IF_ERROR(stream.create());
  {
    detail::device_buffer base_staging, d_segments, d_out, workspace;
    const void* d_base = nullptr;
    TRIALSTAT_RETURN_IF_ERROR(
        detail::device_view_of(base, span_bytes, base_staging, stream.get(), d_base));
    TRIALSTAT_RETURN_IF_ERROR(d_segments.allocate(segments.size_bytes(), stream.get()));
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(d_segments.get(), segments.data(), segments.size_bytes(),
                                       cudaMemcpyHostToDevice, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(d_out.allocate(out.size_bytes(), stream.get()));
    const kernels::device_batch batch{static_cast<const std::byte*>(d_base),
                                      d_segments.as<const segment>(),
                                      static_cast<int64_t>(segments.size()), total_elements};
    std::size_t workspace_bytes = 0;
    TRIALSTAT_RETURN_IF_ERROR(
        kernels::launch_moments(batch, nullptr, nullptr, &workspace_bytes, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(workspace.allocate(workspace_bytes, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_moments(batch, d_out.as<moments>(), workspace.get(),
                                                      &workspace_bytes, stream.get()));
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(out.data(), d_out.get(), out.size_bytes(),
                                       cudaMemcpyDeviceToHost, stream.get()));
    TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  }  // buffers are freed (stream-ordered) before the stream goes
  TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (kernels::is_poisoned(out[i])) return detail::poisoned_result("compute_moments", i);
  }
  return status::success();
}
#endif

}  // namespace

moments merge(const moments& a, const moments& b) noexcept {
  moments r;
  kernels::store_moments(kernels::merge_moments(kernels::load_moments(a), kernels::load_moments(b)),
                         &r);
  return r;
}

status compute_moments(const std::byte* base, std::span<const segment> segments,
                       std::span<moments> out, backend which) {
  if (out.size() != segments.size()) {
    return status(error_code::invalid_argument,
                  "compute_moments: " + std::to_string(segments.size()) + " segments but " +
                      std::to_string(out.size()) + " output records");
  }
  TRIALSTAT_RETURN_IF_ERROR(kernels::validate_segments(base, segments, "compute_moments"));
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "compute_moments"));
  if (which == backend::cpu) return kernels::compute_moments_cpu(base, segments, out);
#if TRIALSTAT_HAS_CUDA
  if (segments.empty()) return status::success();
  return compute_moments_cuda(base, segments, out);
#else
  return status(error_code::invalid_argument, "compute_moments: no CUDA backend in this build");
#endif
}

result<moments> compute_moments(const tensor_view& tensor) {
  const segment seg{0, tensor.num_elements, tensor.type};
  const backend which = tensor.memory == memory_kind::device ? backend::cuda : backend::cpu;
  moments out;
  TRIALSTAT_RETURN_IF_ERROR(compute_moments(tensor.data, {&seg, 1}, {&out, 1}, which));
  return out;
}

}  // namespace trialstat::stats

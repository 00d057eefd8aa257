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
  detail::cuda_context cuda;
  TRIALSTAT_RETURN_IF_ERROR(cuda.open());
  auto staged = detail::stage_batch(cuda, base, segments, "compute_moments");
  if (!staged) return staged.error_status();
  const kernels::device_batch& batch = *staged;
  auto d_out = cuda.reserve(detail::cuda_context::output, out.size_bytes());
  if (!d_out) return d_out.error_status();
  auto* d_moments = reinterpret_cast<moments*>(*d_out);
  TRIALSTAT_RETURN_IF_ERROR(cuda.run_two_phase([&](void* workspace, std::size_t* bytes) {
    return kernels::launch_moments(batch, workspace == nullptr ? nullptr : d_moments, workspace,
                                   bytes, cuda.stream());
  }));
  TRIALSTAT_RETURN_IF_ERROR(cuda.download(out.data(), d_moments, out.size_bytes()));
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

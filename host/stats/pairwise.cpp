// SPDX-License-Identifier: Apache-2.0
// Public pairwise entry point: validate, pick the backend, call the twin (kernels/pairwise/).
#include "trialstat/stats/pairwise.hpp"

#include <string>

#include "host/stats/dispatch.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/pairwise/pairwise_cpu.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/common/result_poison.hpp"
#include "kernels/pairwise/pairwise_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {
namespace {

#if TRIALSTAT_HAS_CUDA
result<pairwise> compute_pairwise_cuda(const tensor_view& previous, const tensor_view& current,
                                       const allclose_params& params) {
  const segment seg_a{0, previous.num_elements, previous.type};
  const segment seg_b{0, current.num_elements, current.type};
  const segment table[2] = {seg_a, seg_b};
  pairwise out;
  detail::cuda_stream stream;
  TRIALSTAT_RETURN_IF_ERROR(stream.create());
  {
    detail::device_buffer a_staging, b_staging, d_segments, d_out, workspace;
    const void* d_a = nullptr;
    const void* d_b = nullptr;
    TRIALSTAT_RETURN_IF_ERROR(detail::device_view_of(previous.data, previous.size_bytes(),
                                                     a_staging, stream.get(), d_a));
    TRIALSTAT_RETURN_IF_ERROR(detail::device_view_of(current.data, current.size_bytes(),
                                                     b_staging, stream.get(), d_b));
    TRIALSTAT_RETURN_IF_ERROR(d_segments.allocate(sizeof table, stream.get()));
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(d_segments.get(), table, sizeof table,
                                       cudaMemcpyHostToDevice, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(d_out.allocate(sizeof(pairwise), stream.get()));
    const segment* d_table = d_segments.as<const segment>();
    const kernels::device_batch a{static_cast<const std::byte*>(d_a), d_table, 1,
                                  previous.num_elements};
    const kernels::device_batch b{static_cast<const std::byte*>(d_b), d_table + 1, 1,
                                  current.num_elements};
    std::size_t workspace_bytes = 0;
    TRIALSTAT_RETURN_IF_ERROR(
        kernels::launch_pairwise(a, b, params, nullptr, nullptr, &workspace_bytes, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(workspace.allocate(workspace_bytes, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_pairwise(a, b, params, d_out.as<pairwise>(),
                                                       workspace.get(), &workspace_bytes,
                                                       stream.get()));
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(&out, d_out.get(), sizeof out, cudaMemcpyDeviceToHost,
                                       stream.get()));
    TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  }
  TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  if (kernels::is_poisoned(out)) return detail::poisoned_result("compute_pairwise", 0);
  return out;
}
#endif

}  // namespace

result<pairwise> compute_pairwise(const tensor_view& previous, const tensor_view& current,
                                  const allclose_params& params, backend which) {
  if (previous.num_elements != current.num_elements) {
    return status(error_code::invalid_argument,
                  "compute_pairwise: previous has " + std::to_string(previous.num_elements) +
                      " elements but current has " + std::to_string(current.num_elements));
  }
  const segment seg_a{0, previous.num_elements, previous.type};
  const segment seg_b{0, current.num_elements, current.type};
  TRIALSTAT_RETURN_IF_ERROR(
      kernels::validate_segments(previous.data, {&seg_a, 1}, "compute_pairwise (previous)"));
  TRIALSTAT_RETURN_IF_ERROR(
      kernels::validate_segments(current.data, {&seg_b, 1}, "compute_pairwise (current)"));
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "compute_pairwise"));
  if (which == backend::cpu) return kernels::compute_pairwise_cpu(previous, current, params);
#if TRIALSTAT_HAS_CUDA
  return compute_pairwise_cuda(previous, current, params);
#else
  return status(error_code::invalid_argument, "compute_pairwise: no CUDA backend in this build");
#endif
}

}  // namespace trialstat::stats

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
  detail::cuda_context cuda;
  TRIALSTAT_RETURN_IF_ERROR(cuda.open());
  auto d_a = cuda.stage(detail::cuda_context::input, previous.data, previous.size_bytes());
  if (!d_a) return d_a.error_status();
  auto d_b = cuda.stage(detail::cuda_context::input_b, current.data, current.size_bytes());
  if (!d_b) return d_b.error_status();
  auto d_table = cuda.upload(detail::cuda_context::table, std::span<const segment>(table));
  if (!d_table) return d_table.error_status();
  auto d_out = cuda.reserve(detail::cuda_context::output, sizeof(pairwise));
  if (!d_out) return d_out.error_status();
  const kernels::device_batch a{*d_a, *d_table, 1, previous.num_elements};
  const kernels::device_batch b{*d_b, *d_table + 1, 1, current.num_elements};
  auto* d_pairwise = reinterpret_cast<pairwise*>(*d_out);
  TRIALSTAT_RETURN_IF_ERROR(cuda.run_two_phase([&](void* workspace, std::size_t* bytes) {
    return kernels::launch_pairwise(a, b, params, workspace == nullptr ? nullptr : d_pairwise,
                                    workspace, bytes, cuda.stream());
  }));
  TRIALSTAT_RETURN_IF_ERROR(cuda.download(&out, d_pairwise, sizeof out));
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

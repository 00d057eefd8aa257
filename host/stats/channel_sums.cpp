// SPDX-License-Identifier: Apache-2.0
// Public per-channel sums entry point: validate the axis and layout, pick the backend, call the
// twin (kernels/channel_sums/).
#include "trialstat/stats/channel_sums.hpp"

#include <string>

#include "host/stats/dispatch.hpp"
#include "host/stats/tensor_statistics.hpp"
#include "kernels/channel_sums/channel_sums_cpu.hpp"
#include "kernels/channel_sums/channel_sums_op.hpp"
#include "kernels/common/cpu_validate.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/channel_sums/channel_sums_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {
namespace detail {

result<channel_sums> compute_channel_sums(const tensor_view& tensor, int64_t axis, backend which,
                                          cuda_context* cuda) {
  const segment seg{0, tensor.num_elements, tensor.type};
  TRIALSTAT_RETURN_IF_ERROR(
      kernels::validate_segments(tensor.data, {&seg, 1}, "compute_channel_sums"));
  const auto rank = static_cast<int64_t>(tensor.shape.size());
  if (rank == 0) {
    return status(error_code::invalid_argument,
                  "compute_channel_sums: a 0-d tensor has no channel axis");
  }
  if (axis < -rank || axis >= rank) {
    return status(error_code::invalid_argument,
                  "compute_channel_sums: axis " + std::to_string(axis) +
                      " is out of range for a tensor of rank " + std::to_string(rank));
  }
  const int64_t normalised = axis < 0 ? axis + rank : axis;
  int64_t outer = 0;
  int64_t channels = 0;
  int64_t inner = 0;
  if (!kernels::channel_layout(tensor.shape.data(), tensor.shape.size(),
                               static_cast<std::size_t>(normalised), tensor.num_elements, outer,
                               channels, inner)) {
    return status(error_code::invalid_argument,
                  "compute_channel_sums: shape of rank " + std::to_string(rank) +
                      " does not describe " + std::to_string(tensor.num_elements) + " elements");
  }
  TRIALSTAT_RETURN_IF_ERROR(check_backend(which, "compute_channel_sums"));
  if (which == backend::cpu) {
    return kernels::compute_channel_sums_cpu(tensor, normalised, outer, channels, inner);
  }
#if TRIALSTAT_HAS_CUDA
  std::vector<kernels::channel_state> states(static_cast<std::size_t>(channels));
  if (channels > 0) {
    cuda_context own;
    TRIALSTAT_RETURN_IF_ERROR(use_or_open(cuda, own));
    auto d_data = cuda->stage(cuda_context::input, tensor.data, tensor.size_bytes());
    if (!d_data) return d_data.error_status();
    const std::size_t state_bytes = states.size() * sizeof(kernels::channel_state);
    auto d_states = cuda->reserve(cuda_context::output, state_bytes);
    if (!d_states) return d_states.error_status();
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_channel_sums(
        *d_data, tensor.type, outer, channels, inner,
        reinterpret_cast<kernels::channel_state*>(*d_states), cuda->stream()));
    TRIALSTAT_RETURN_IF_ERROR(cuda->download(states.data(), *d_states, state_bytes));
  }
  channel_sums out;
  out.axis = normalised;
  for (const auto& s : states) {
    out.sum.push_back(s.sum);
    out.count.push_back(s.count);
    out.nan_count.push_back(s.nan_count);
    out.pos_inf_count.push_back(s.pos_inf_count);
    out.neg_inf_count.push_back(s.neg_inf_count);
  }
  return out;
#else
  static_cast<void>(cuda);
  return status(error_code::invalid_argument,
                "compute_channel_sums: no CUDA backend in this build");
#endif
}

}  // namespace detail

result<channel_sums> compute_channel_sums(const tensor_view& tensor, int64_t axis, backend which) {
  return detail::compute_channel_sums(tensor, axis, which, nullptr);
}

}  // namespace trialstat::stats

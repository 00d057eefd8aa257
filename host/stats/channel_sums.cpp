// SPDX-License-Identifier: Apache-2.0
// Public per-channel sums entry point: validate the axis and layout, pick the backend, call the
// twin (kernels/channel_sums/).
#include "trialstat/stats/channel_sums.hpp"

#include <string>

#include "host/stats/dispatch.hpp"
#include "kernels/channel_sums/channel_sums_cpu.hpp"
#include "kernels/channel_sums/channel_sums_op.hpp"
#include "kernels/common/cpu_validate.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/channel_sums/channel_sums_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {

result<channel_sums> compute_channel_sums(const tensor_view& tensor, int64_t axis, backend which) {
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
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "compute_channel_sums"));
  if (which == backend::cpu) {
    return kernels::compute_channel_sums_cpu(tensor, normalised, outer, channels, inner);
  }
#if TRIALSTAT_HAS_CUDA
  std::vector<kernels::channel_state> states(static_cast<std::size_t>(channels));
  detail::cuda_stream stream;
  TRIALSTAT_RETURN_IF_ERROR(stream.create());
  if (channels > 0) {
    detail::device_buffer staging, d_states;
    const void* d_data = nullptr;
    TRIALSTAT_RETURN_IF_ERROR(
        detail::device_view_of(tensor.data, tensor.size_bytes(), staging, stream.get(), d_data));
    const std::size_t state_bytes = states.size() * sizeof(kernels::channel_state);
    TRIALSTAT_RETURN_IF_ERROR(d_states.allocate(state_bytes, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_channel_sums(
        static_cast<const std::byte*>(d_data), tensor.type, outer, channels, inner,
        d_states.as<kernels::channel_state>(), stream.get()));
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(states.data(), d_states.get(), state_bytes,
                                       cudaMemcpyDeviceToHost, stream.get()));
    TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  }
  TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
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
  return status(error_code::invalid_argument,
                "compute_channel_sums: no CUDA backend in this build");
#endif
}

}  // namespace trialstat::stats

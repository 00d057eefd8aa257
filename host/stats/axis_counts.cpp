// SPDX-License-Identifier: Apache-2.0
// Public axis-0 counts entry point: validate, pick the backend, call the twin
// (kernels/axis_counts/).
#include "trialstat/stats/axis_counts.hpp"

#include <string>

#include "host/stats/dispatch.hpp"
#include "kernels/axis_counts/axis_counts_cpu.hpp"
#include "kernels/axis_counts/axis_counts_op.hpp"
#include "kernels/common/cpu_validate.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/axis_counts/axis_counts_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {

result<axis0_counts> count_along_axis0(const tensor_view& tensor, const axis0_predicate& predicate,
                                       backend which) {
  int64_t batch = 0;
  int64_t nodes = 0;
  if (!kernels::axis0_layout(tensor.shape.data(), tensor.shape.size(), tensor.num_elements, batch,
                             nodes)) {
    return status(error_code::invalid_argument,
                  "count_along_axis0: shape of rank " + std::to_string(tensor.shape.size()) +
                      " does not describe " + std::to_string(tensor.num_elements) + " elements");
  }
  const segment seg{0, tensor.num_elements, tensor.type};
  TRIALSTAT_RETURN_IF_ERROR(kernels::validate_segments(tensor.data, {&seg, 1}, "count_along_axis0"));
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "count_along_axis0"));
  if (which == backend::cpu) return kernels::count_along_axis0_cpu(tensor, predicate);
#if TRIALSTAT_HAS_CUDA
  axis0_counts out;
  out.batch = batch;
  out.per_node.assign(static_cast<std::size_t>(nodes), 0);
  if (nodes == 0) return out;
  detail::cuda_context cuda;
  TRIALSTAT_RETURN_IF_ERROR(cuda.open());
  auto d_data = cuda.stage(detail::cuda_context::input, tensor.data, tensor.size_bytes());
  if (!d_data) return d_data.error_status();
  const std::size_t count_bytes = static_cast<std::size_t>(nodes) * sizeof(int64_t);
  auto d_counts = cuda.reserve(detail::cuda_context::output, count_bytes);
  if (!d_counts) return d_counts.error_status();
  TRIALSTAT_RETURN_IF_ERROR(kernels::launch_axis0_counts(*d_data, tensor.type, batch, nodes, predicate,
                                                         reinterpret_cast<int64_t*>(*d_counts),
                                                         cuda.stream()));
  TRIALSTAT_RETURN_IF_ERROR(cuda.download(out.per_node.data(), *d_counts, count_bytes));
  return out;
#else
  return status(error_code::invalid_argument, "count_along_axis0: no CUDA backend in this build");
#endif
}

}  // namespace trialstat::stats

// SPDX-License-Identifier: Apache-2.0
// Public count_equal entry point: validate, pick the backend, call the twin
// (kernels/value_counts/).
#include "trialstat/stats/value_counts.hpp"

#include <string>

#include "host/stats/dispatch.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/value_counts/value_counts_cpu.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/value_counts/value_counts_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {

result<std::vector<int64_t>> count_equal(const tensor_view& tensor, std::span<const double> values,
                                         backend which) {
  const segment seg{0, tensor.num_elements, tensor.type};
  TRIALSTAT_RETURN_IF_ERROR(kernels::validate_segments(tensor.data, {&seg, 1}, "count_equal"));
  if (values.size() > max_counted_values) {
    return status(error_code::invalid_argument,
                  "count_equal: " + std::to_string(values.size()) + " values, at most " +
                      std::to_string(max_counted_values));
  }
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "count_equal"));
  if (which == backend::cpu) return kernels::count_equal_cpu(tensor, values);
#if TRIALSTAT_HAS_CUDA
  std::vector<int64_t> out(values.size(), 0);
  if (values.empty()) return out;
  detail::cuda_stream stream;
  TRIALSTAT_RETURN_IF_ERROR(stream.create());
  {
    detail::device_buffer staging, d_counts;
    const void* d_data = nullptr;
    TRIALSTAT_RETURN_IF_ERROR(
        detail::device_view_of(tensor.data, tensor.size_bytes(), staging, stream.get(), d_data));
    TRIALSTAT_RETURN_IF_ERROR(d_counts.allocate(out.size() * sizeof(int64_t), stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_count_equal(static_cast<const std::byte*>(d_data),
                                                          tensor.type, tensor.num_elements, values,
                                                          d_counts.as<int64_t>(), stream.get()));
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(out.data(), d_counts.get(), out.size() * sizeof(int64_t),
                                       cudaMemcpyDeviceToHost, stream.get()));
    TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  }
  TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  return out;
#else
  return status(error_code::invalid_argument, "count_equal: no CUDA backend in this build");
#endif
}

}  // namespace trialstat::stats

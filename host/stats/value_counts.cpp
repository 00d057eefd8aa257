// SPDX-License-Identifier: Apache-2.0
// Public count_equal entry point: validate, pick the backend, call the twin
// (kernels/value_counts/).
#include "trialstat/stats/value_counts.hpp"

#include <string>

#include "host/stats/dispatch.hpp"
#include "host/stats/tensor_statistics.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/value_counts/value_counts_cpu.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/value_counts/value_counts_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {
namespace detail {

result<std::vector<int64_t>> count_equal(const tensor_view& tensor, std::span<const double> values,
                                         backend which, cuda_context* cuda) {
  const segment seg{0, tensor.num_elements, tensor.type};
  TRIALSTAT_RETURN_IF_ERROR(kernels::validate_segments(tensor.data, {&seg, 1}, "count_equal"));
  if (values.size() > max_counted_values) {
    return status(error_code::invalid_argument,
                  "count_equal: " + std::to_string(values.size()) + " values, at most " +
                      std::to_string(max_counted_values));
  }
  TRIALSTAT_RETURN_IF_ERROR(check_backend(which, "count_equal"));
  if (which == backend::cpu) return kernels::count_equal_cpu(tensor, values);
#if TRIALSTAT_HAS_CUDA
  std::vector<int64_t> out(values.size(), 0);
  if (values.empty()) return out;
  cuda_context own;
  TRIALSTAT_RETURN_IF_ERROR(use_or_open(cuda, own));
  auto d_data = cuda->stage(cuda_context::input, tensor.data, tensor.size_bytes());
  if (!d_data) return d_data.error_status();
  const std::size_t count_bytes = out.size() * sizeof(int64_t);
  auto d_counts = cuda->reserve(cuda_context::output, count_bytes);
  if (!d_counts) return d_counts.error_status();
  TRIALSTAT_RETURN_IF_ERROR(kernels::launch_count_equal(*d_data, tensor.type, tensor.num_elements,
                                                        values, reinterpret_cast<int64_t*>(*d_counts),
                                                        cuda->stream()));
  TRIALSTAT_RETURN_IF_ERROR(cuda->download(out.data(), *d_counts, count_bytes));
  return out;
#else
  static_cast<void>(cuda);
  return status(error_code::invalid_argument, "count_equal: no CUDA backend in this build");
#endif
}

}  // namespace detail

result<std::vector<int64_t>> count_equal(const tensor_view& tensor, std::span<const double> values,
                                         backend which) {
  return detail::count_equal(tensor, values, which, nullptr);
}

}  // namespace trialstat::stats

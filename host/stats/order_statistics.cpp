// SPDX-License-Identifier: Apache-2.0
// Public order-statistics entry points: validate, pick the backend, call the twin
// (kernels/order_statistics/).
#include "trialstat/stats/order_statistics.hpp"

#include <string>

#include "host/stats/dispatch.hpp"
#include "host/stats/tensor_statistics.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/order_statistics/order_statistics_cpu.hpp"
#include "kernels/order_statistics/order_statistics_op.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/order_statistics/order_statistics_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {
namespace {

status validate(const tensor_view& tensor, const char* what) {
  const segment seg{0, tensor.num_elements, tensor.type};
  return kernels::validate_segments(tensor.data, {&seg, 1}, what);
}

#if TRIALSTAT_HAS_CUDA
result<std::vector<double>> percentiles_cuda(const tensor_view& tensor,
                                             std::span<const double> q_percent,
                                             detail::cuda_context& cuda) {
  std::vector<double> out(q_percent.size());
  if (q_percent.empty()) return out;
  auto d_data = cuda.stage(detail::cuda_context::input, tensor.data, tensor.size_bytes());
  if (!d_data) return d_data.error_status();
  auto d_q = cuda.upload(detail::cuda_context::table, q_percent);
  if (!d_q) return d_q.error_status();
  const std::size_t out_bytes = out.size() * sizeof(double);
  auto d_out = cuda.reserve(detail::cuda_context::output, out_bytes);
  if (!d_out) return d_out.error_status();
  auto* d_values = reinterpret_cast<double*>(*d_out);
  const auto num_q = static_cast<int64_t>(q_percent.size());
  TRIALSTAT_RETURN_IF_ERROR(cuda.run_two_phase([&](void* workspace, std::size_t* bytes) {
    const bool query = workspace == nullptr;
    return kernels::launch_percentiles(*d_data, tensor.type, tensor.num_elements,
                                       query ? nullptr : *d_q, num_q, query ? nullptr : d_values,
                                       workspace, bytes, cuda.stream());
  }));
  TRIALSTAT_RETURN_IF_ERROR(cuda.download(out.data(), d_values, out_bytes));
  return out;
}

result<top_k_sum> top_k_sum_cuda(const tensor_view& tensor, int64_t k) {
  top_k_sum out;
  detail::cuda_context cuda;
  TRIALSTAT_RETURN_IF_ERROR(cuda.open());
  auto d_data = cuda.stage(detail::cuda_context::input, tensor.data, tensor.size_bytes());
  if (!d_data) return d_data.error_status();
  auto d_out = cuda.reserve(detail::cuda_context::output, sizeof(top_k_sum));
  if (!d_out) return d_out.error_status();
  auto* d_sum = reinterpret_cast<top_k_sum*>(*d_out);
  TRIALSTAT_RETURN_IF_ERROR(cuda.run_two_phase([&](void* workspace, std::size_t* bytes) {
    return kernels::launch_top_k_sum(*d_data, tensor.type, tensor.num_elements, k,
                                     workspace == nullptr ? nullptr : d_sum, workspace, bytes,
                                     cuda.stream());
  }));
  TRIALSTAT_RETURN_IF_ERROR(cuda.download(&out, d_sum, sizeof out));
  return out;
}
#endif

}  // namespace

namespace detail {

result<std::vector<double>> compute_percentiles(const tensor_view& tensor,
                                                std::span<const double> q_percent, backend which,
                                                cuda_context* cuda) {
  TRIALSTAT_RETURN_IF_ERROR(validate(tensor, "compute_percentiles"));
  for (std::size_t i = 0; i < q_percent.size(); ++i) {
    if (!kernels::valid_percentile(q_percent[i])) {
      return status(error_code::invalid_argument,
                    "compute_percentiles: q[" + std::to_string(i) + "] = " +
                        std::to_string(q_percent[i]) + " is not in [0, 100]");
    }
  }
  TRIALSTAT_RETURN_IF_ERROR(check_backend(which, "compute_percentiles"));
  if (which == backend::cpu) return kernels::compute_percentiles_cpu(tensor, q_percent);
#if TRIALSTAT_HAS_CUDA
  cuda_context own;
  TRIALSTAT_RETURN_IF_ERROR(use_or_open(cuda, own));
  return percentiles_cuda(tensor, q_percent, *cuda);
#else
  static_cast<void>(cuda);
  return status(error_code::invalid_argument, "compute_percentiles: no CUDA backend in this build");
#endif
}

}  // namespace detail

result<std::vector<double>> compute_percentiles(const tensor_view& tensor,
                                                std::span<const double> q_percent, backend which) {
  return detail::compute_percentiles(tensor, q_percent, which, nullptr);
}

result<top_k_sum> compute_top_k_sum(const tensor_view& tensor, int64_t k, backend which) {
  TRIALSTAT_RETURN_IF_ERROR(validate(tensor, "compute_top_k_sum"));
  if (k < 0) {
    return status(error_code::invalid_argument,
                  "compute_top_k_sum: k = " + std::to_string(k) + " is negative");
  }
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "compute_top_k_sum"));
  if (which == backend::cpu) return kernels::compute_top_k_sum_cpu(tensor, k);
#if TRIALSTAT_HAS_CUDA
  return top_k_sum_cuda(tensor, k);
#else
  return status(error_code::invalid_argument, "compute_top_k_sum: no CUDA backend in this build");
#endif
}

}  // namespace trialstat::stats

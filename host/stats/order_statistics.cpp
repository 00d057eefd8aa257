// SPDX-License-Identifier: Apache-2.0
// Public order-statistics entry points: validate, pick the backend, call the twin
// (kernels/order_statistics/).
#include "trialstat/stats/order_statistics.hpp"

#include <string>

#include "host/stats/dispatch.hpp"
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
                                             std::span<const double> q_percent) {
  std::vector<double> out(q_percent.size());
  if (q_percent.empty()) return out;
  detail::cuda_stream stream;
  TRIALSTAT_RETURN_IF_ERROR(stream.create());
  {
    detail::device_buffer staging, d_q, d_out, workspace;
    const void* d_data = nullptr;
    TRIALSTAT_RETURN_IF_ERROR(
        detail::device_view_of(tensor.data, tensor.size_bytes(), staging, stream.get(), d_data));
    const std::size_t q_bytes = q_percent.size() * sizeof(double);
    TRIALSTAT_RETURN_IF_ERROR(d_q.allocate(q_bytes, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(d_out.allocate(q_bytes, stream.get()));
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(d_q.get(), q_percent.data(), q_bytes,
                                       cudaMemcpyHostToDevice, stream.get()));
    std::size_t workspace_bytes = 0;
    const auto* bytes = static_cast<const std::byte*>(d_data);
    const auto num_q = static_cast<int64_t>(q_percent.size());
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_percentiles(bytes, tensor.type, tensor.num_elements,
                                                          nullptr, num_q, nullptr, nullptr,
                                                          &workspace_bytes, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(workspace.allocate(workspace_bytes, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_percentiles(
        bytes, tensor.type, tensor.num_elements, d_q.as<const double>(), num_q,
        d_out.as<double>(), workspace.get(), &workspace_bytes, stream.get()));
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(out.data(), d_out.get(), q_bytes, cudaMemcpyDeviceToHost,
                                       stream.get()));
    TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  }
  TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  return out;
}

result<top_k_sum> top_k_sum_cuda(const tensor_view& tensor, int64_t k) {
  top_k_sum out;
  detail::cuda_stream stream;
  TRIALSTAT_RETURN_IF_ERROR(stream.create());
  {
    detail::device_buffer staging, d_out, workspace;
    const void* d_data = nullptr;
    TRIALSTAT_RETURN_IF_ERROR(
        detail::device_view_of(tensor.data, tensor.size_bytes(), staging, stream.get(), d_data));
    TRIALSTAT_RETURN_IF_ERROR(d_out.allocate(sizeof(top_k_sum), stream.get()));
    std::size_t workspace_bytes = 0;
    const auto* bytes = static_cast<const std::byte*>(d_data);
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_top_k_sum(bytes, tensor.type, tensor.num_elements, k,
                                                        nullptr, nullptr, &workspace_bytes,
                                                        stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(workspace.allocate(workspace_bytes, stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_top_k_sum(bytes, tensor.type, tensor.num_elements, k,
                                                        d_out.as<top_k_sum>(), workspace.get(),
                                                        &workspace_bytes, stream.get()));
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(&out, d_out.get(), sizeof out, cudaMemcpyDeviceToHost,
                                       stream.get()));
    TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  }
  TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  return out;
}
#endif

}  // namespace

result<std::vector<double>> compute_percentiles(const tensor_view& tensor,
                                                std::span<const double> q_percent, backend which) {
  TRIALSTAT_RETURN_IF_ERROR(validate(tensor, "compute_percentiles"));
  for (std::size_t i = 0; i < q_percent.size(); ++i) {
    if (!kernels::valid_percentile(q_percent[i])) {
      return status(error_code::invalid_argument,
                    "compute_percentiles: q[" + std::to_string(i) + "] = " +
                        std::to_string(q_percent[i]) + " is not in [0, 100]");
    }
  }
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "compute_percentiles"));
  if (which == backend::cpu) return kernels::compute_percentiles_cpu(tensor, q_percent);
#if TRIALSTAT_HAS_CUDA
  return percentiles_cuda(tensor, q_percent);
#else
  return status(error_code::invalid_argument, "compute_percentiles: no CUDA backend in this build");
#endif
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

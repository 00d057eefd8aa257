// SPDX-License-Identifier: Apache-2.0
// Public class-count entry points: validate, pick the backend, call the twin
// (kernels/class_counts/).
#include "trialstat/stats/class_counts.hpp"

#include <string>

#include "host/stats/dispatch.hpp"
#include "kernels/class_counts/class_counts_cpu.hpp"
#include "kernels/common/cpu_validate.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/class_counts/class_counts_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats {
namespace {

status validate(const tensor_view& tensor, const char* what) {
  const segment seg{0, tensor.num_elements, tensor.type};
  return kernels::validate_segments(tensor.data, {&seg, 1}, what);
}

status check_classes(int64_t num_classes, int64_t limit, const char* what) {
  if (num_classes >= 1 && num_classes <= limit) return status::success();
  return status(error_code::invalid_argument, std::string(what) + ": num_classes = " +
                                                  std::to_string(num_classes) + " is not in [1, " +
                                                  std::to_string(limit) + "]");
}

#if TRIALSTAT_HAS_CUDA
/// Stage `tensor` on the device (in place when it already is there).
status stage(const tensor_view& tensor, detail::device_buffer& staging, cudaStream_t stream,
             const std::byte*& d_ptr) {
  const void* p = nullptr;
  TRIALSTAT_RETURN_IF_ERROR(detail::device_view_of(tensor.data, tensor.size_bytes(), staging,
                                                   stream, p));
  d_ptr = static_cast<const std::byte*>(p);
  return status::success();
}

status copy_counts_back(const detail::device_buffer& d_counts, std::vector<int64_t>& counts,
                        cudaStream_t stream) {
  TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(counts.data(), d_counts.get(),
                                     counts.size() * sizeof(int64_t), cudaMemcpyDeviceToHost,
                                     stream));
  TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream));
  return status::success();
}
#endif

}  // namespace

result<class_histogram> compute_bincount(const tensor_view& tensor, int64_t num_classes,
                                         backend which) {
  TRIALSTAT_RETURN_IF_ERROR(validate(tensor, "compute_bincount"));
  TRIALSTAT_RETURN_IF_ERROR(check_classes(num_classes, max_bincount_classes, "compute_bincount"));
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "compute_bincount"));
  if (which == backend::cpu) return kernels::compute_bincount_cpu(tensor, num_classes);
#if TRIALSTAT_HAS_CUDA
  class_histogram out;
  out.num_classes = num_classes;
  out.counts.assign(static_cast<std::size_t>(num_classes + 1), 0);
  detail::cuda_stream stream;
  TRIALSTAT_RETURN_IF_ERROR(stream.create());
  {
    detail::device_buffer staging, d_counts;
    const std::byte* d_data = nullptr;
    TRIALSTAT_RETURN_IF_ERROR(stage(tensor, staging, stream.get(), d_data));
    TRIALSTAT_RETURN_IF_ERROR(d_counts.allocate(out.counts.size() * sizeof(int64_t), stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_bincount(d_data, tensor.type, tensor.num_elements,
                                                       num_classes, d_counts.as<int64_t>(),
                                                       stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(copy_counts_back(d_counts, out.counts, stream.get()));
  }
  TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  return out;
#else
  return status(error_code::invalid_argument, "compute_bincount: no CUDA backend in this build");
#endif
}

result<confusion_counts> compute_confusion(const tensor_view& labels,
                                           const tensor_view& predictions, int64_t num_classes,
                                           prediction_kind kind, backend which) {
  TRIALSTAT_RETURN_IF_ERROR(validate(labels, "compute_confusion (labels)"));
  TRIALSTAT_RETURN_IF_ERROR(validate(predictions, "compute_confusion (predictions)"));
  TRIALSTAT_RETURN_IF_ERROR(check_classes(num_classes, max_confusion_classes, "compute_confusion"));
  const int64_t n = labels.num_elements;
  int64_t width = 1;
  if (kind == prediction_kind::argmax_last_axis) {
    width = predictions.shape.empty() ? 0 : predictions.shape.back();
    if (width < 1) {
      return status(error_code::invalid_argument,
                    "compute_confusion: argmax over the last axis needs predictions of rank >= 1 "
                    "with a non-empty last axis");
    }
    if (predictions.num_elements % width != 0 || predictions.num_elements / width != n) {
      return status(error_code::invalid_argument,
                    "compute_confusion: " + std::to_string(n) + " labels but predictions of " +
                        std::to_string(predictions.num_elements) + " elements in rows of " +
                        std::to_string(width));
    }
  } else if (predictions.num_elements != n) {
    return status(error_code::invalid_argument,
                  "compute_confusion: " + std::to_string(n) + " labels but " +
                      std::to_string(predictions.num_elements) + " predictions");
  }
  TRIALSTAT_RETURN_IF_ERROR(detail::check_backend(which, "compute_confusion"));
  if (which == backend::cpu) {
    return kernels::compute_confusion_cpu(labels, predictions, n, width, num_classes, kind);
  }
#if TRIALSTAT_HAS_CUDA
  confusion_counts out;
  out.num_classes = num_classes;
  out.counts.assign(static_cast<std::size_t>((num_classes + 1) * (num_classes + 1)), 0);
  detail::cuda_stream stream;
  TRIALSTAT_RETURN_IF_ERROR(stream.create());
  {
    detail::device_buffer label_staging, prediction_staging, d_counts;
    const std::byte* d_labels = nullptr;
    const std::byte* d_predictions = nullptr;
    TRIALSTAT_RETURN_IF_ERROR(stage(labels, label_staging, stream.get(), d_labels));
    TRIALSTAT_RETURN_IF_ERROR(stage(predictions, prediction_staging, stream.get(), d_predictions));
    TRIALSTAT_RETURN_IF_ERROR(d_counts.allocate(out.counts.size() * sizeof(int64_t), stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_confusion(d_labels, labels.type, d_predictions,
                                                        predictions.type, n, width, num_classes,
                                                        kind, d_counts.as<int64_t>(),
                                                        stream.get()));
    TRIALSTAT_RETURN_IF_ERROR(copy_counts_back(d_counts, out.counts, stream.get()));
  }
  TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  return out;
#else
  return status(error_code::invalid_argument, "compute_confusion: no CUDA backend in this build");
#endif
}

}  // namespace trialstat::stats

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
/// Count on the device: `launch(d_counts)` enqueues the kernel; `counts` (sized) receives them.
template <class Launch>
status count_on_device(detail::cuda_context& cuda, std::vector<int64_t>& counts, Launch&& launch) {
  const std::size_t bytes = counts.size() * sizeof(int64_t);
  auto d_counts = cuda.reserve(detail::cuda_context::output, bytes);
  if (!d_counts) return d_counts.error_status();
  TRIALSTAT_RETURN_IF_ERROR(launch(reinterpret_cast<int64_t*>(*d_counts)));
  return cuda.download(counts.data(), *d_counts, bytes);
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
  detail::cuda_context cuda;
  TRIALSTAT_RETURN_IF_ERROR(cuda.open());
  auto d_data = cuda.stage(detail::cuda_context::input, tensor.data, tensor.size_bytes());
  if (!d_data) return d_data.error_status();
  TRIALSTAT_RETURN_IF_ERROR(count_on_device(cuda, out.counts, [&](int64_t* d_counts) {
    return kernels::launch_bincount(*d_data, tensor.type, tensor.num_elements, num_classes, d_counts,
                                    cuda.stream());
  }));
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
  detail::cuda_context cuda;
  TRIALSTAT_RETURN_IF_ERROR(cuda.open());
  auto d_labels = cuda.stage(detail::cuda_context::input, labels.data, labels.size_bytes());
  if (!d_labels) return d_labels.error_status();
  auto d_predictions =
      cuda.stage(detail::cuda_context::input_b, predictions.data, predictions.size_bytes());
  if (!d_predictions) return d_predictions.error_status();
  TRIALSTAT_RETURN_IF_ERROR(count_on_device(cuda, out.counts, [&](int64_t* d_counts) {
    return kernels::launch_confusion(*d_labels, labels.type, *d_predictions, predictions.type, n,
                                     width, num_classes, kind, d_counts, cuda.stream());
  }));
  return out;
#else
  return status(error_code::invalid_argument, "compute_confusion: no CUDA backend in this build");
#endif
}

}  // namespace trialstat::stats

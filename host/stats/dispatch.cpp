// SPDX-License-Identifier: Apache-2.0
#include "host/stats/dispatch.hpp"

#include "trialstat/dtype.hpp"

#if TRIALSTAT_HAS_CUDA
#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::stats::detail {

status check_backend(backend which, const char* what) {
  if (which == backend::cpu) return status::success();
  if (which != backend::cuda) {
    return status(error_code::invalid_argument,
                  std::string(what) + ": unknown backend " +
                      std::to_string(static_cast<int>(which)));
  }
#if TRIALSTAT_HAS_CUDA
  if (!cuda_device_available()) {
    return status(error_code::invalid_argument,
                  std::string(what) +
                      ": backend::cuda requested but no CUDA device is visible "
                      "(cudaGetDeviceCount reports none); use backend::cpu");
  }
  return status::success();
#else
  return status(error_code::invalid_argument,
                std::string(what) +
                    ": backend::cuda requested but this build of trialstat has no CUDA backend "
                    "(configure with nvcc and TRIALSTAT_ENABLE_CUDA=ON); use backend::cpu");
#endif
}

status segments_span_bytes(std::span<const segment> segments, const char* what,
                           std::size_t& bytes) {
  bytes = 0;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const auto& s = segments[i];
    const auto size = dtype_size_bytes(s.type);
    if (s.num_elements < 0) {
      return status(error_code::invalid_argument,
                    std::string(what) + ": segment " + std::to_string(i) +
                        " has a negative element count");
    }
    const auto n = static_cast<uint64_t>(s.num_elements);
    if (size != 0 && n > (UINT64_MAX - s.offset_bytes) / size) {
      return status(error_code::invalid_argument,
                    std::string(what) + ": segment " + std::to_string(i) +
                        " extends past the address space");
    }
    const uint64_t end = s.offset_bytes + n * size;
    if (end > bytes) bytes = static_cast<std::size_t>(end);
  }
  return status::success();
}

#if TRIALSTAT_HAS_CUDA

result<kernels::device_batch> stage_batch(cuda_context& cuda, const std::byte* base,
                                          std::span<const segment> segments, const char* what) {
  std::size_t span_bytes = 0;
  TRIALSTAT_RETURN_IF_ERROR(segments_span_bytes(segments, what, span_bytes));
  auto d_base = cuda.stage(cuda_context::input, base, span_bytes);
  if (!d_base) return d_base.error_status();
  auto d_segments = cuda.upload(cuda_context::table, segments);
  if (!d_segments) return d_segments.error_status();
  return device_batch_of(*d_base, *d_segments, segments);
}

status poisoned_result(const char* what, std::size_t index) {
  return status(error_code::cuda_error,
                std::string(what) + ": the CUDA result of segment " + std::to_string(index) +
                    " came back poisoned (the kernel could not compute it: workspace smaller "
                    "than the batch or a dtype the device cannot read)");
}

#endif

}  // namespace trialstat::stats::detail

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

cuda_stream::~cuda_stream() {
  if (stream_ == nullptr) return;
  // cudaStreamDestroy returns at once while queued work goes on: wait, so that no copy still
  // reads (or writes) caller memory after an early return.
  if (cudaStreamSynchronize(stream_) != cudaSuccess) static_cast<void>(cudaGetLastError());
  static_cast<void>(cudaStreamDestroy(stream_));
}

status cuda_stream::create() {
  TRIALSTAT_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  return status::success();
}

device_buffer::~device_buffer() {
  if (ptr_ != nullptr) static_cast<void>(cudaFreeAsync(ptr_, stream_));
}

status device_buffer::allocate(std::size_t bytes, cudaStream_t stream) {
  stream_ = stream;
  // A valid, distinct pointer even for empty data; a multiple of 16 bytes so that the kernels'
  // unaligned loads (aligned words around an element, element_op.hpp) stay inside it.
  bytes = ((bytes == 0 ? 1 : bytes) + 15) & ~std::size_t{15};
  TRIALSTAT_CUDA_TRY(cudaMallocAsync(&ptr_, bytes, stream));
  return status::success();
}

status poisoned_result(const char* what, std::size_t index) {
  return status(error_code::cuda_error,
                std::string(what) + ": the CUDA result of segment " + std::to_string(index) +
                    " came back poisoned (the kernel could not compute it: workspace smaller "
                    "than the batch or a dtype the device cannot read)");
}

bool is_device_pointer(const void* p) noexcept {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

status device_view_of(const void* host_or_device, std::size_t bytes, device_buffer& staging,
                      cudaStream_t stream, const void*& d_ptr) {
  if (host_or_device != nullptr && is_device_pointer(host_or_device)) {
    d_ptr = host_or_device;
    return status::success();
  }
  TRIALSTAT_RETURN_IF_ERROR(staging.allocate(bytes, stream));
  if (bytes > 0) {
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(staging.get(), host_or_device, bytes,
                                       cudaMemcpyHostToDevice, stream));
  }
  d_ptr = staging.get();
  return status::success();
}

#endif

}  // namespace trialstat::stats::detail

// SPDX-License-Identifier: Apache-2.0
// The launcher layer's resources: reusable CUDA memory and the context a statistic runs on.
#include "host/stats/cuda_context.hpp"

#if TRIALSTAT_HAS_CUDA

#include <algorithm>

#include "trialstat/detail/cuda_check.hpp"

namespace trialstat::stats::detail {

cudaError_t device_alloc(void** ptr, std::size_t bytes) { return cudaMalloc(ptr, bytes); }
cudaError_t device_free(void* ptr) { return cudaFree(ptr); }
cudaError_t pinned_alloc(void** ptr, std::size_t bytes) {
  return cudaHostAlloc(ptr, bytes, cudaHostAllocDefault);
}
cudaError_t pinned_free(void* ptr) { return cudaFreeHost(ptr); }

template <cudaError_t (*Alloc)(void**, std::size_t), cudaError_t (*Free)(void*)>
status growing_block<Alloc, Free>::reserve(std::size_t bytes, int64_t& growths) {
  if (bytes <= bytes_ && ptr_ != nullptr) return status::success();
  const std::size_t want = std::max(align_up(std::max<std::size_t>(bytes, 1)), bytes_ * 2);
  if (ptr_ != nullptr) {
    growths += 1;
    TRIALSTAT_CUDA_TRY(Free(ptr_));
    ptr_ = nullptr;
    bytes_ = 0;
  }
  TRIALSTAT_CUDA_TRY(Alloc(&ptr_, want));
  bytes_ = want;
  return status::success();
}

template class growing_block<device_alloc, device_free>;
template class growing_block<pinned_alloc, pinned_free>;

cuda_context::~cuda_context() {
  if (stream_ == nullptr) return;
  // Queued copies may still read or write caller memory (an early return after an enqueue):
  // wait before the blocks go (cudaFree would wait for the device, not for this stream's host
  // memory accesses to be safe to release).
  if (cudaStreamSynchronize(stream_) != cudaSuccess) static_cast<void>(cudaGetLastError());
  if (owns_stream_) static_cast<void>(cudaStreamDestroy(stream_));
}

status cuda_context::open() {
  if (stream_ != nullptr) return status::success();
  TRIALSTAT_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  owns_stream_ = true;
  return status::success();
}

result<std::byte*> cuda_context::reserve(slot which, std::size_t bytes) {
  device_block& block = blocks_[which];
  TRIALSTAT_RETURN_IF_ERROR(block.reserve(bytes, growths_));
  return block.get();
}

result<std::byte*> cuda_context::copy_to_device(slot which, const void* host, std::size_t bytes) {
  auto d = reserve(which, bytes);
  if (!d) return d.error_status();
  if (bytes > 0) {
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(*d, host, bytes, cudaMemcpyHostToDevice, stream_));
  }
  return *d;
}

result<const std::byte*> cuda_context::stage(slot which, const void* data, std::size_t bytes) {
  if (data != nullptr && is_device_pointer(data)) return static_cast<const std::byte*>(data);
  auto d = copy_to_device(which, data, bytes);
  if (!d) return d.error_status();
  return static_cast<const std::byte*>(*d);
}

status cuda_context::download(void* host, const void* device, std::size_t bytes) {
  if (bytes > 0) {
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_));
  }
  TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream_));
  return status::success();
}

bool is_device_pointer(const void* p) noexcept {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

}  // namespace trialstat::stats::detail

#endif  // TRIALSTAT_HAS_CUDA

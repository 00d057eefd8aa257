// SPDX-License-Identifier: Apache-2.0
#include "kernels/common/cuda_device.hpp"

#include <cuda_runtime_api.h>

namespace trialstat::kernels {

int cuda_visible_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());  // "no device" / "no driver" is not sticky: clear it
    return 0;
  }
  return count;
}

std::size_t cuda_free_device_bytes() noexcept {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return 0;
  }
  return free_bytes;
}

}  // namespace trialstat::kernels

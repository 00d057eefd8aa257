// SPDX-License-Identifier: Apache-2.0
#include "trialstat/stats/backend.hpp"

#include "trialstat/config.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/common/cuda_device.hpp"
#endif

namespace trialstat::stats {

std::string_view backend_name(backend b) noexcept {
  switch (b) {
    case backend::cpu: return "cpu";
    case backend::cuda: return "cuda";
  }
  return "unknown";
}

bool cuda_device_available() noexcept {
#if TRIALSTAT_HAS_CUDA
  static const bool available = kernels::cuda_visible_device_count() > 0;
  return available;
#else
  return false;
#endif
}

}  // namespace trialstat::stats

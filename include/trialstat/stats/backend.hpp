// SPDX-License-Identifier: Apache-2.0
/// @file backend.hpp
/// @brief Which implementation computes statistics (CPU twin or CUDA), and whether CUDA can run.
#pragma once

#include <cstdint>
#include <string_view>

namespace trialstat::stats {

/// @brief Statistics backend. Both give the same answers: integer outputs exactly, float
/// outputs within the tolerance stated on each function.
enum class backend : uint8_t {
  cpu,   ///< OpenMP (+Eigen) twin; always built
  cuda,  ///< CUDA kernels; only when built with CUDA and a device is visible
};

/// @brief "cpu" / "cuda".
[[nodiscard]] std::string_view backend_name(backend b) noexcept;

/// @brief Whether backend::cuda can run here: true only when this build has the CUDA backend
/// (`TRIALSTAT_HAS_CUDA` in trialstat/config.hpp) and the CUDA runtime reports at least one
/// device. Queried once per process (the answer is cached); never throws, never fails.
[[nodiscard]] bool cuda_device_available() noexcept;

}  // namespace trialstat::stats

// SPDX-License-Identifier: Apache-2.0
/// @file backend.hpp
/// @brief Which implementation computes statistics, and segmented batches (the unit of work).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "trialstat/dtype.hpp"

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

/// @brief One tensor inside a batch buffer: `num_elements` elements of `type` starting
/// `offset_bytes` after the buffer's base. Segments may be unaligned and may not overlap.
struct segment {
  uint64_t offset_bytes = 0;
  int64_t num_elements = 0;
  dtype type = dtype::float32;
};

}  // namespace trialstat::stats

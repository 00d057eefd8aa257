// SPDX-License-Identifier: Apache-2.0
/// @file cuda_device.hpp
/// @brief Device discovery for the dispatch layer (internal; only built with CUDA).
#pragma once

#include <cstddef>

namespace trialstat::kernels {

/// @brief cudaGetDeviceCount, or 0 when it fails (no driver, no device). Never throws.
[[nodiscard]] int cuda_visible_device_count() noexcept;

/// @brief cudaMemGetInfo on the current device: free bytes (0 when it fails). Never throws.
[[nodiscard]] std::size_t cuda_free_device_bytes() noexcept;

}  // namespace trialstat::kernels

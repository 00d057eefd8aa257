// SPDX-License-Identifier: Apache-2.0
/// @file cuda_batch.hpp
/// @brief What every segmented CUDA launcher takes: a batch buffer and its segment table, both
/// in device memory, plus the upper bound that sizes the launcher's workspace. Internal.
#pragma once

#include <cstddef>
#include <cstdint>

#include "trialstat/stats/segment.hpp"

namespace trialstat::kernels {

/// @brief A batch in device memory. Segments may start at any byte offset (unaligned loads are
/// handled per segment: aligned words and a funnel shift, which may read the aligned words
/// around an element, so `d_base` is 8-byte aligned and its buffer extends to a multiple of 8
/// bytes past the last segment; cudaMalloc'd buffers are) and must have real dtypes and
/// num_elements ≥ 0 (validated on the host beforehand: a kernel cannot report errors; what
/// still goes wrong on the device comes back as poison, result_poison.hpp).
struct device_batch {
  const std::byte* d_base = nullptr;                ///< batch bytes (device or mapped memory)
  const stats::segment* d_segments = nullptr;       ///< [num_segments], device memory
  int64_t num_segments = 0;
  /// ≥ Σ num_elements over the segments. Sizes the workspace (per-chunk partial results) in the
  /// query phase, so it must not grow between the query and the launch for one workspace. A
  /// batch that exceeds it is not read past the workspace: its records are poisoned (count −1,
  /// NaN values) instead of silently wrong.
  int64_t max_total_elements = 0;
};

/// @brief Round `bytes` up to the CUDA allocation granularity used inside workspaces.
[[nodiscard]] constexpr std::size_t workspace_align(std::size_t bytes) noexcept {
  return (bytes + 255) & ~static_cast<std::size_t>(255);
}

}  // namespace trialstat::kernels

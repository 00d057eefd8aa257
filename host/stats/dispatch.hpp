// SPDX-License-Identifier: Apache-2.0
/// @file dispatch.hpp
/// @brief Backend checks of the statistics entry points (internal to host/stats). Their CUDA
/// paths run on a `cuda_context` (host/stats/cuda_context.hpp): a private one per public call,
/// the executor's own when the CUDA executor computes rule statistics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "trialstat/config.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/segment.hpp"
#include "trialstat/status.hpp"

#if TRIALSTAT_HAS_CUDA
#include "host/stats/cuda_context.hpp"
#endif

namespace trialstat::stats::detail {

/// @brief ok when `which` can run here; invalid_argument naming `what` otherwise (never a
/// silent fallback to the CPU).
[[nodiscard]] status check_backend(backend which, const char* what);

/// @brief Bytes a segment table spans from the base: max(offset + n·size). invalid_argument on
/// overflow.
[[nodiscard]] status segments_span_bytes(std::span<const segment> segments, const char* what,
                                         std::size_t& bytes);

#if TRIALSTAT_HAS_CUDA

/// @brief A batch on the device for a launch on `cuda`: the bytes the segments span from `base`
/// (staged into the context's `input` slot unless already device memory) and the segment table
/// (uploaded into its `table` slot). Errors: invalid_argument naming `what` when the segments
/// overflow the address space; as cuda_context::stage / upload.
[[nodiscard]] result<kernels::device_batch> stage_batch(cuda_context& cuda, const std::byte* base,
                                                        std::span<const segment> segments,
                                                        const char* what);

/// @brief The error for result `index` of `what` that came back poisoned (result_poison.hpp).
[[nodiscard]] status poisoned_result(const char* what, std::size_t index);

#endif

}  // namespace trialstat::stats::detail

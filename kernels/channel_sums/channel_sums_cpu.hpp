// SPDX-License-Identifier: Apache-2.0
/// @file channel_sums_cpu.hpp
/// @brief CPU twin of the per-channel sums (internal; host/stats/channel_sums.cpp).
#pragma once

#include <cstdint>

#include "trialstat/stats/channel_sums.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::kernels {

/// @brief Per-channel totals of a host tensor viewed as [outer, channels, inner] (layout checked
/// by the caller; `axis` already normalised). Work is split into fixed (row group, channel) tasks
/// independent of the thread count; each task sums blocks of 1024 elements and merges them
/// pairwise in order, and the row groups of a channel merge pairwise in order: deterministic,
/// O(log n) rounding growth.
[[nodiscard]] result<stats::channel_sums> compute_channel_sums_cpu(const tensor_view& tensor,
                                                                   int64_t axis, int64_t outer,
                                                                   int64_t channels,
                                                                   int64_t inner) noexcept;

}  // namespace trialstat::kernels

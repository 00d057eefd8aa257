// SPDX-License-Identifier: Apache-2.0
/// @file tensor_statistics.hpp
/// @brief The per-tensor rule statistics with the CUDA context to run on (internal to
/// host/stats): the same validation, results and errors as the public entry points
/// (stats/order_statistics.hpp, stats/value_counts.hpp, stats/channel_sums.hpp), which call these
/// with `cuda == nullptr` (a private context per call). The CUDA executor passes its own context
/// (its stream and reusable device memory), so computing these per tensor allocates nothing and
/// creates no stream in the steady state. `cuda` is ignored on the CPU backend.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/channel_sums.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats::detail {

class cuda_context;  // host/stats/cuda_context.hpp (CUDA builds)

/// @brief As stats::compute_percentiles.
[[nodiscard]] result<std::vector<double>> compute_percentiles(const tensor_view& tensor,
                                                              std::span<const double> q_percent,
                                                              backend which, cuda_context* cuda);
/// @brief As stats::count_equal.
[[nodiscard]] result<std::vector<int64_t>> count_equal(const tensor_view& tensor,
                                                       std::span<const double> values,
                                                       backend which, cuda_context* cuda);
/// @brief As stats::compute_channel_sums.
[[nodiscard]] result<channel_sums> compute_channel_sums(const tensor_view& tensor, int64_t axis,
                                                        backend which, cuda_context* cuda);

}  // namespace trialstat::stats::detail

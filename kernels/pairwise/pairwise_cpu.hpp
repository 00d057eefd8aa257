// SPDX-License-Identifier: Apache-2.0
/// @file pairwise_cpu.hpp
/// @brief CPU twin of the pairwise statistics (internal; called by host/stats/pairwise.cpp).
#pragma once

#include <cstddef>

#include "trialstat/stats/pairwise.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::kernels {

/// @brief Pairwise statistics of host tensors `previous` (a) and `current` (b) with the same
/// element count (dtypes may differ; each converts to float64). Semantics in pairwise_op.hpp.
/// OpenMP over fixed chunks merged pairwise in order: deterministic for any thread count.
/// `overwrite_previous`: null, or previous's own bytes (mutable): then, block by block after
/// reading them, current's bytes are copied over them (the caller's history buffer becomes this
/// step's copy without a second pass over `current`). Needs equal dtypes.
/// @return the record; invalid_argument (element counts differ, null data, overwrite with
///   different dtypes); unsupported_dtype; out_of_memory.
[[nodiscard]] result<stats::pairwise> compute_pairwise_cpu(const tensor_view& previous,
                                                           const tensor_view& current,
                                                           const stats::allclose_params& params,
                                                           std::byte* overwrite_previous) noexcept;

/// @brief As above without overwriting.
[[nodiscard]] inline result<stats::pairwise> compute_pairwise_cpu(
    const tensor_view& previous, const tensor_view& current,
    const stats::allclose_params& params) noexcept {
  return compute_pairwise_cpu(previous, current, params, nullptr);
}

}  // namespace trialstat::kernels

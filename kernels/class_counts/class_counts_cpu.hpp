// SPDX-License-Identifier: Apache-2.0
/// @file class_counts_cpu.hpp
/// @brief CPU twins of the class counts (internal; host/stats/class_counts.cpp).
#pragma once

#include <cstdint>

#include "trialstat/stats/class_counts.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::kernels {

/// @brief Bincount of a host tensor (semantics: stats::compute_bincount). OpenMP over chunks
/// with private counters merged at the end (exact). Arguments are validated by the caller
/// (host/stats) except for out_of_memory.
[[nodiscard]] result<stats::class_histogram> compute_bincount_cpu(const tensor_view& tensor,
                                                                  int64_t num_classes) noexcept;

/// @brief Pair counts of host tensors (semantics: stats::compute_confusion); `num_pairs` is the
/// label count (= prediction rows), `width` the argmax row width (1 for class values).
[[nodiscard]] result<stats::confusion_counts> compute_confusion_cpu(
    const tensor_view& labels, const tensor_view& predictions, int64_t num_pairs, int64_t width,
    int64_t num_classes, stats::prediction_kind kind) noexcept;

}  // namespace trialstat::kernels

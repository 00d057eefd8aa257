// SPDX-License-Identifier: Apache-2.0
/// @file class_counts_cuda.hpp
/// @brief CUDA launchers of the class counts (internal; only built with CUDA). No workspace:
/// the counters are the output. Blocks count into shared-memory counters when they fit
/// (≤ 4096 counters) and add them to the output with 64-bit atomics; larger outputs take global
/// atomics directly. Exact.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "trialstat/dtype.hpp"
#include "trialstat/stats/class_counts.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief d_counts[0..num_classes] = bincount of the n elements at d_data (zeroed here).
/// @return ok; invalid_argument (null pointers, negative sizes, num_classes < 1, unsupported
///   dtype); cuda_error/cuda_fatal.
[[nodiscard]] status launch_bincount(const std::byte* d_data, dtype type, int64_t n,
                                     int64_t num_classes, int64_t* d_counts,
                                     cudaStream_t stream) noexcept;

/// @brief d_counts[(k+1)²] = pair counts of `num_pairs` labels with predictions (class values,
/// or argmax over rows of `width` scores), zeroed here.
/// @return ok; invalid_argument (null pointers, negative sizes, width < 1, num_classes < 1,
///   unsupported dtype); cuda_error/cuda_fatal.
[[nodiscard]] status launch_confusion(const std::byte* d_labels, dtype label_type,
                                      const std::byte* d_predictions, dtype prediction_type,
                                      int64_t num_pairs, int64_t width, int64_t num_classes,
                                      stats::prediction_kind kind, int64_t* d_counts,
                                      cudaStream_t stream) noexcept;

}  // namespace trialstat::kernels

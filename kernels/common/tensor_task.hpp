// SPDX-License-Identifier: Apache-2.0
/// @file tensor_task.hpp
/// @brief One tensor of a multi-tensor launch (internal; host and device, no CUDA headers): the
/// rule statistics — equality counts, channel sums, percentiles — of a whole batch run as one
/// launch each over a table of these (issue 25 item 3), and a single-tensor call is a table of
/// one. The host plans the table (host/stats/rule_statistics_tasks.hpp, CPU-tested); the kernels
/// only read it.
#pragma once

#include <cstdint>

#include "trialstat/dtype.hpp"

namespace trialstat::kernels {

/// @brief Where a task's elements, parameters and outputs are. Offsets index the launch's arrays.
struct tensor_task {
  int64_t offset_bytes = 0;  ///< first element, from the launch's device base
  int64_t num_elements = 0;
  int64_t params_first = 0;  ///< first parameter (a value to count, a percentile q)
  int64_t params_count = 0;  ///< parameters of this task (count_equal: ≤ values_per_pass)
  int64_t out_first = 0;     ///< first output (a count, a channel_state, a percentile)
  int64_t keys_first = 0;    ///< percentiles: first of its num_elements float64 keys
  int64_t channels = 0;      ///< channel sums: the tensor as [outer, channels, inner]
  int64_t inner = 0;
  dtype type = dtype::invalid;
};

/// @brief Percentile tasks of more elements than this are sorted alone (one device-wide radix
/// sort each); smaller ones together in one segmented sort (a block per segment).
inline constexpr int64_t percentile_large_task_elements = int64_t{1} << 16;

}  // namespace trialstat::kernels

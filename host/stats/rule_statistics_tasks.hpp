// SPDX-License-Identifier: Apache-2.0
// The rule statistics of a whole batch as task tables (issue 25 item 3): the CUDA executor runs
// the percentiles, equality counts and channel sums of every tensor of a batch as one launch
// each (kernels/common/tensor_task.hpp) instead of a launch and a wait per tensor. This file is
// the host side — which tensors, in which groups, where their bytes go on the device, and how
// the outputs become record fields — with no CUDA in it, so the CPU tests check it
// (tests/stats/rule_statistics_tasks_test.cpp). Internal to host/stats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/channel_sums/channel_sums_op.hpp"
#include "kernels/common/tensor_task.hpp"
#include "trialstat/stats/tensor_batch.hpp"
#include "trialstat/status.hpp"

namespace trialstat::stats::detail {

/// @brief Limits of one group (one staging copy, one set of launches, one download).
struct rule_task_limits {
  int64_t max_device_bytes = int64_t{256} << 20;  ///< staged input bytes of a group
  int64_t max_percentile_keys = int64_t{16} << 20;  ///< float64 keys (×16 bytes of workspace)
};

/// @brief One channel-sums output: a requested axis of a segment's tensor.
struct channel_output {
  int64_t axis = 0;        ///< normalised to [0, rank)
  int64_t out_first = 0;   ///< first of its `channels` states
  int64_t channels = 0;
  int64_t task = -1;       ///< into rule_task_plan::channel_tasks; -1: no elements to add
};

/// @brief One count_equal output group: ≤ values_per_pass values of a segment's request (the
/// task of the same index in rule_task_plan::equal_tasks).
struct equal_output {
  int64_t values_first = 0;  ///< into rule_task_plan::values
  int64_t values_count = 0;
  int64_t out_first = 0;
};

/// @brief What one segment gets, as indices into the plan's arrays.
struct segment_outputs {
  std::size_t segment = 0;         ///< index into the batch
  int64_t percentile_task = -1;    ///< into rule_task_plan::percentile_tasks, or none
  std::size_t equal_begin = 0, equal_end = 0;      ///< into rule_task_plan::equal_outputs
  std::size_t channel_begin = 0, channel_end = 0;  ///< into rule_task_plan::channel_outputs
  bool keep_values = false;
};

/// @brief One group of a batch's segments and its task tables.
struct rule_task_plan {
  /// The device input: the batch's bytes [range_first, range_first + input_bytes) copied whole
  /// (`packed` false: the wanted tensors fill at least half of it), or the wanted tensors'
  /// bytes packed, each at an 8-byte-aligned offset (`packed`: `copies`; `input_bytes` then a
  /// multiple of 8).
  bool packed = false;
  int64_t range_first = 0;
  int64_t input_bytes = 0;
  struct copy {
    int64_t from = 0;   ///< byte offset in the batch
    int64_t to = 0;     ///< byte offset in the device input
    int64_t bytes = 0;
  };
  std::vector<copy> copies;  ///< `packed` only

  std::vector<kernels::tensor_task> equal_tasks;       ///< launch_count_equal_tasks
  std::vector<double> values;                          ///< their values
  int64_t counts = 0;                                  ///< outputs (int64)
  std::vector<kernels::tensor_task> channel_tasks;     ///< launch_channel_sums_tasks
  int64_t states = 0;                                  ///< outputs (channel_state)
  std::vector<kernels::tensor_task> percentile_tasks;  ///< launch_percentiles_tasks
  std::vector<double> q;                               ///< their q (percent)
  int64_t percentiles = 0;                             ///< outputs (double)
  int64_t keys = 0;                                    ///< Σ elements of the percentile tasks

  std::vector<equal_output> equal_outputs;
  std::vector<channel_output> channel_outputs;
  std::vector<segment_outputs> segments;  ///< the group's segments with rule statistics, in order

  [[nodiscard]] bool empty() const noexcept { return segments.empty(); }
};

/// @brief Whether `request` asks for statistics of this file (percentiles, equality counts,
/// channel sums, kept values).
[[nodiscard]] bool has_rule_statistics(const statistics_request& request) noexcept;

/// @brief Split `batch` into groups within `limits` (a tensor larger than a limit is a group of
/// its own) and plan each: the same statistics, in the same order, as compute_rule_statistics
/// per tensor — percentiles in request order, equality counts in request order (in tasks of ≤
/// values_per_pass values), channel sums per requested axis valid for the tensor's rank (a
/// second axis naming the same dimension skipped), kept values.
/// @return the groups (none when no segment asks for rule statistics); errors: invalid_argument
///   for a q outside [0, 100], more equality values than max_counted_values per request chunk
///   is fine (they are split), a shape that does not describe its elements (as the per-tensor
///   entry points).
[[nodiscard]] result<std::vector<rule_task_plan>> plan_rule_statistics(const tensor_batch& batch,
                                                                        const rule_task_limits& limits = {});

/// @brief Write a group's outputs into its records (percentiles, equal_counts, channel_sums,
/// values_data = the host bytes of the tensor in `batch`).
/// @param counts [plan.counts], states [plan.states], percentiles [plan.percentiles]
void fill_rule_statistics(const rule_task_plan& plan, const tensor_batch& batch, std::span<const int64_t> counts,
                          std::span<const kernels::channel_state> states, std::span<const double> percentiles);

}  // namespace trialstat::stats::detail

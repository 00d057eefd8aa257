// SPDX-License-Identifier: Apache-2.0
// The per-tensor statistics added for the later built-in rules (percentiles, equality counts,
// channel sums, kept values), computed by the executors for each decoded tensor whose request
// asks for them. Internal to host/stats.
#pragma once

#include "trialstat/stats/statistics_request.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/stats/tensor_batch.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/channel_sums/channel_sums_op.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats::detail {

class cuda_context;  // host/stats/cuda_context.hpp (CUDA builds)

/// @brief Append to `record` what `request` asks beyond moments/histograms/axis-0/pairwise:
/// `percentiles` (one percentile_value per requested q, request order), `equal_counts` (one per
/// requested value), `channel_sums` (one per requested axis valid for the tensor's rank — others
/// are skipped, as is a second axis naming the same dimension), and with `keep_values`
/// `record.values_data = tensor.data` (the caller keeps those bytes alive until the step
/// callback has returned).
/// @param tensor the decoded tensor (host memory; `record.shape`/`type` describe it)
/// @param which  backend of the statistics calls
/// @param cuda   the CUDA executor's context (its stream and reusable device memory); nullptr on
///               the CPU backend (host/stats/tensor_statistics.hpp)
/// @return ok; errors from the statistics (out_of_memory, cuda_*); never for an axis that does
///   not fit the tensor.
[[nodiscard]] status compute_rule_statistics(const stats::statistics_request& request,
                                             const tensor_view& tensor,
                                             stats::statistics_record& record,
                                             stats::backend which, cuda_context* cuda);

/// @brief Host buffers of compute_rule_statistics_batch, kept by its caller from batch to batch
/// (they only grow): the packed input, the downloaded outputs, and those outputs by type.
struct rule_task_buffers {
  std::vector<std::byte> packed;
  std::vector<std::byte> results;
  std::vector<int64_t> counts;
  std::vector<kernels::channel_state> states;
  std::vector<double> percentiles;
};

/// @brief compute_rule_statistics for every segment of `batch` on the CUDA backend, as task
/// launches over the whole batch (issue 25 item 3; rule_statistics_tasks.hpp): per group of
/// tensors, one staging copy of their bytes, one launch each for equality counts, channel sums
/// and percentiles on `cuda`'s stream and reusable memory, and one download and wait — not one
/// per tensor. The records get the same fields in the same order as compute_rule_statistics.
/// Without a CUDA build: invalid_argument.
/// @return ok; errors: invalid_argument (a q outside [0, 100], a shape that does not describe its
///   elements), out_of_memory, cuda_error/cuda_fatal.
[[nodiscard]] status compute_rule_statistics_batch(const tensor_batch& batch, cuda_context& cuda,
                                                   rule_task_buffers& buffers);

}  // namespace trialstat::stats::detail

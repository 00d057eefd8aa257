// SPDX-License-Identifier: Apache-2.0
#include "host/stats/rule_statistics.hpp"

#include "host/stats/rule_statistics_tasks.hpp"
#include "host/stats/tensor_statistics.hpp"
#include "trialstat/config.hpp"

#if TRIALSTAT_HAS_CUDA
#include <cstring>
#include <vector>

#include "host/stats/cuda_context.hpp"
#include "kernels/channel_sums/channel_sums_cuda.hpp"
#include "kernels/order_statistics/order_statistics_cuda.hpp"
#include "kernels/value_counts/value_counts_cuda.hpp"
#endif

#include <cstdint>
#include <span>

#include "trialstat/stats/channel_sums.hpp"
#include "trialstat/stats/order_statistics.hpp"
#include "trialstat/stats/value_counts.hpp"

namespace trialstat::stats::detail {

status compute_rule_statistics(const stats::statistics_request& request, const tensor_view& tensor,
                               stats::statistics_record& record, stats::backend which, cuda_context* cuda) {
  if (!request.percentiles.empty()) {
    auto values = compute_percentiles(tensor, request.percentiles, which, cuda);
    if (!values) return values.error_status();
    for (std::size_t i = 0; i < values->size(); ++i) {
      record.percentiles.push_back({request.percentiles[i], (*values)[i]});
    }
  }
  // The request's list is bounded by nothing but the rules' own limits: count in chunks.
  const std::span<const double> wanted(request.equal_values);
  for (std::size_t first = 0; first < wanted.size(); first += stats::max_counted_values) {
    const auto part = wanted.subspan(first, std::min(stats::max_counted_values, wanted.size() - first));
    auto counts = count_equal(tensor, part, which, cuda);
    if (!counts) return counts.error_status();
    for (std::size_t i = 0; i < part.size(); ++i) record.equal_counts.push_back({part[i], (*counts)[i]});
  }
  const auto rank = static_cast<int64_t>(tensor.shape.size());
  for (const int64_t axis : request.channel_axes) {
    if (rank == 0 || axis < -rank || axis >= rank) continue;  // not an axis of this tensor
    if (record.channel_sums_along(axis) != nullptr) continue;  // −1 and rank − 1 both asked
    auto sums = compute_channel_sums(tensor, axis, which, cuda);
    if (!sums) return sums.error_status();
    record.channel_sums.push_back(std::move(*sums));
  }
  if (request.keep_values) record.values_data = tensor.data;
  return status::success();
}

#if TRIALSTAT_HAS_CUDA
namespace {

/// One group on the device: stage, launch, download, fill.
status run_rule_task_group(const rule_task_plan& plan, const tensor_batch& batch, cuda_context& cuda,
                           rule_task_buffers& buffers) {
  std::vector<std::byte>& packed = buffers.packed;
  // The input: the batch's range in place of a copy, or the wanted tensors packed.
  const std::byte* host_input = batch.base + plan.range_first;
  if (plan.packed) {
    packed.assign(static_cast<std::size_t>(plan.input_bytes), std::byte{0});
    for (const rule_task_plan::copy& c : plan.copies) {
      if (c.bytes > 0) std::memcpy(packed.data() + c.to, batch.base + c.from, static_cast<std::size_t>(c.bytes));
    }
    host_input = packed.data();
  }
  // Empty tensors only: no bytes to copy, but the launchers want a base.
  result<const std::byte*> d_input = status(error_code::invalid_argument, "no input");
  if (plan.input_bytes > 0) {
    d_input = cuda.stage(cuda_context::input, host_input, static_cast<std::size_t>(plan.input_bytes));
  } else if (auto empty = cuda.reserve(cuda_context::input, 8)) {
    d_input = static_cast<const std::byte*>(*empty);
  } else {
    return empty.error_status();
  }
  if (!d_input) return d_input.error_status();
  // One output block: counts | channel states | percentiles.
  const std::size_t counts_bytes = align_up(static_cast<std::size_t>(plan.counts) * sizeof(int64_t), 8);
  const std::size_t states_bytes = static_cast<std::size_t>(plan.states) * sizeof(kernels::channel_state);
  const std::size_t percentile_bytes = static_cast<std::size_t>(plan.percentiles) * sizeof(double);
  const std::size_t total = counts_bytes + states_bytes + percentile_bytes;
  auto d_out = cuda.reserve(cuda_context::output, total > 0 ? total : 8);
  if (!d_out) return d_out.error_status();
  auto* d_counts = reinterpret_cast<int64_t*>(*d_out);
  auto* d_states = reinterpret_cast<kernels::channel_state*>(*d_out + counts_bytes);
  auto* d_percentiles = reinterpret_cast<double*>(*d_out + counts_bytes + states_bytes);
  // The tables: uploads into the same slots are ordered after the launches before them on the
  // stream, so each launch reads its own.
  if (!plan.equal_tasks.empty()) {
    auto d_tasks = cuda.upload(cuda_context::table, std::span<const kernels::tensor_task>(plan.equal_tasks));
    if (!d_tasks) return d_tasks.error_status();
    auto d_values = cuda.upload(cuda_context::table_b, std::span<const double>(plan.values));
    if (!d_values) return d_values.error_status();
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_count_equal_tasks(*d_input, plan.equal_tasks, *d_tasks, *d_values,
                                                                d_counts, plan.counts, cuda.stream()));
  }
  if (plan.states > 0) {
    const kernels::tensor_task* d_tasks = nullptr;
    if (!plan.channel_tasks.empty()) {
      auto uploaded = cuda.upload(cuda_context::table, std::span<const kernels::tensor_task>(plan.channel_tasks));
      if (!uploaded) return uploaded.error_status();
      d_tasks = *uploaded;
    }
    TRIALSTAT_RETURN_IF_ERROR(kernels::launch_channel_sums_tasks(*d_input, plan.channel_tasks, d_tasks, d_states,
                                                                 plan.states, cuda.stream()));
  }
  if (!plan.percentile_tasks.empty()) {
    auto d_tasks = cuda.upload(cuda_context::table, std::span<const kernels::tensor_task>(plan.percentile_tasks));
    if (!d_tasks) return d_tasks.error_status();
    auto d_q = cuda.upload(cuda_context::table_b, std::span<const double>(plan.q));
    if (!d_q) return d_q.error_status();
    TRIALSTAT_RETURN_IF_ERROR(cuda.run_two_phase([&](void* workspace, std::size_t* bytes) {
      return kernels::launch_percentiles_tasks(*d_input, plan.percentile_tasks, *d_tasks, *d_q, d_percentiles,
                                               workspace, bytes, cuda.stream());
    }));
  }
  std::vector<std::byte>& results = buffers.results;
  results.resize(total);
  if (total > 0) TRIALSTAT_RETURN_IF_ERROR(cuda.download(results.data(), *d_out, total));
  buffers.counts.resize(static_cast<std::size_t>(plan.counts));
  buffers.states.resize(static_cast<std::size_t>(plan.states));
  buffers.percentiles.resize(static_cast<std::size_t>(plan.percentiles));
  if (!buffers.counts.empty()) std::memcpy(buffers.counts.data(), results.data(), buffers.counts.size() * sizeof(int64_t));
  if (!buffers.states.empty()) {
    std::memcpy(static_cast<void*>(buffers.states.data()), results.data() + counts_bytes, states_bytes);
  }
  if (!buffers.percentiles.empty()) {
    std::memcpy(buffers.percentiles.data(), results.data() + counts_bytes + states_bytes, percentile_bytes);
  }
  fill_rule_statistics(plan, batch, buffers.counts, buffers.states, buffers.percentiles);
  return status::success();
}

}  // namespace

status compute_rule_statistics_batch(const tensor_batch& batch, cuda_context& cuda, rule_task_buffers& buffers) {
  auto groups = plan_rule_statistics(batch);
  if (!groups) return groups.error_status();
  for (const rule_task_plan& plan : *groups) {
    TRIALSTAT_RETURN_IF_ERROR(run_rule_task_group(plan, batch, cuda, buffers));
  }
  return status::success();
}
#else
status compute_rule_statistics_batch(const tensor_batch&, cuda_context&, rule_task_buffers&) {
  return status(error_code::invalid_argument, "compute_rule_statistics_batch: no CUDA backend in this build");
}
#endif

}  // namespace trialstat::stats::detail

// SPDX-License-Identifier: Apache-2.0
// The rule statistics of a batch as task tables (rule_statistics_tasks.hpp).
#include "host/stats/rule_statistics_tasks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/order_statistics/order_statistics_op.hpp"
#include "kernels/value_counts/value_counts_op.hpp"
#include "trialstat/dtype.hpp"

namespace trialstat::stats::detail {
namespace {

constexpr int64_t input_alignment = 8;  // device_batch: 8-byte-aligned bases (aligned-word loads)

int64_t aligned(int64_t bytes) { return (bytes + input_alignment - 1) / input_alignment * input_alignment; }

int64_t offset_of(const segment& s) { return static_cast<int64_t>(s.offset_bytes); }

int64_t segment_bytes(const segment& s) {
  return s.num_elements * static_cast<int64_t>(dtype_size_bytes(s.type));
}

/// Appends segment `i`'s tasks and outputs to `plan` (offset_bytes filled in later).
status plan_segment(const tensor_batch& batch, std::size_t i, rule_task_plan& plan) {
  const segment& seg = batch.segments[i];
  const statistics_request& request = *batch.requests[i];
  const statistics_record& record = *batch.records[i];
  segment_outputs out;
  out.segment = i;
  out.keep_values = request.keep_values;
  kernels::tensor_task base;
  base.num_elements = seg.num_elements;
  base.type = seg.type;
  if (!request.percentiles.empty()) {
    for (std::size_t k = 0; k < request.percentiles.size(); ++k) {
      if (!kernels::valid_percentile(request.percentiles[k])) {
        return status(error_code::invalid_argument, fmt::format("compute_percentiles: q[{}] = {} is not in [0, 100]",
                                                                k, request.percentiles[k]));
      }
    }
    kernels::tensor_task t = base;
    t.params_first = static_cast<int64_t>(plan.q.size());
    t.params_count = static_cast<int64_t>(request.percentiles.size());
    t.out_first = plan.percentiles;
    t.keys_first = plan.keys;
    plan.q.insert(plan.q.end(), request.percentiles.begin(), request.percentiles.end());
    plan.percentiles += t.params_count;
    plan.keys += seg.num_elements;
    out.percentile_task = static_cast<int64_t>(plan.percentile_tasks.size());
    plan.percentile_tasks.push_back(t);
  }
  out.equal_begin = plan.equal_outputs.size();
  const auto& wanted = request.equal_values;
  for (std::size_t first = 0; first < wanted.size(); first += kernels::values_per_pass) {
    const std::size_t count = std::min<std::size_t>(kernels::values_per_pass, wanted.size() - first);
    equal_output e;
    e.values_first = static_cast<int64_t>(plan.values.size());
    e.values_count = static_cast<int64_t>(count);
    e.out_first = plan.counts;
    kernels::tensor_task t = base;
    t.params_first = e.values_first;
    t.params_count = e.values_count;
    t.out_first = e.out_first;
    plan.values.insert(plan.values.end(), wanted.begin() + static_cast<std::ptrdiff_t>(first),
                       wanted.begin() + static_cast<std::ptrdiff_t>(first + count));
    plan.counts += e.values_count;
    plan.equal_outputs.push_back(e);
    plan.equal_tasks.push_back(t);
  }
  out.equal_end = plan.equal_outputs.size();
  out.channel_begin = plan.channel_outputs.size();
  const auto rank = static_cast<int64_t>(record.shape.size());
  for (const int64_t axis : request.channel_axes) {
    if (rank == 0 || axis < -rank || axis >= rank) continue;  // not an axis of this tensor
    const int64_t normalised = axis < 0 ? axis + rank : axis;
    const bool seen = std::any_of(plan.channel_outputs.begin() + static_cast<std::ptrdiff_t>(out.channel_begin),
                                  plan.channel_outputs.end(),
                                  [&](const channel_output& c) { return c.axis == normalised; });
    if (seen) continue;  // −1 and rank − 1 both asked
    int64_t outer = 0;
    int64_t channels = 0;
    int64_t inner = 0;
    if (!kernels::channel_layout(record.shape.data(), record.shape.size(), static_cast<std::size_t>(normalised),
                                 seg.num_elements, outer, channels, inner)) {
      return status(error_code::invalid_argument,
                    fmt::format("compute_channel_sums: shape of rank {} does not describe {} elements", rank,
                                seg.num_elements));
    }
    channel_output c{normalised, plan.states, channels, -1};
    if (channels > 0 && inner > 0) {
      c.task = static_cast<int64_t>(plan.channel_tasks.size());
      kernels::tensor_task t = base;
      t.out_first = c.out_first;
      t.channels = channels;
      t.inner = inner;
      plan.channel_tasks.push_back(t);
    }
    plan.states += channels;
    plan.channel_outputs.push_back(c);
  }
  out.channel_end = plan.channel_outputs.size();
  plan.segments.push_back(out);
  return status::success();
}

/// Where the group's tensors go on the device: the batch range whole, or packed.
void lay_out_input(const tensor_batch& batch, rule_task_plan& plan) {
  int64_t first = INT64_MAX;
  int64_t end = 0;
  int64_t wanted = 0;
  for (const segment_outputs& s : plan.segments) {
    const segment& seg = batch.segments[s.segment];
    first = std::min(first, offset_of(seg));
    end = std::max(end, offset_of(seg) + segment_bytes(seg));
    wanted += aligned(segment_bytes(seg));
  }
  const int64_t range = end - first;
  plan.packed = wanted * 2 < range;
  plan.range_first = plan.packed ? 0 : first;
  std::vector<int64_t> offset(batch.segments.size(), 0);
  int64_t to = 0;
  for (const segment_outputs& s : plan.segments) {
    const segment& seg = batch.segments[s.segment];
    if (plan.packed) {
      plan.copies.push_back({offset_of(seg), to, segment_bytes(seg)});
      offset[s.segment] = to;
      to += aligned(segment_bytes(seg));
    } else {
      offset[s.segment] = offset_of(seg) - first;
    }
  }
  plan.input_bytes = plan.packed ? to : range;
  // The tasks were appended segment by segment: give each its segment's device offset.
  for (const segment_outputs& s : plan.segments) {
    const int64_t at = offset[s.segment];
    if (s.percentile_task >= 0) plan.percentile_tasks[static_cast<std::size_t>(s.percentile_task)].offset_bytes = at;
    for (std::size_t k = s.equal_begin; k < s.equal_end; ++k) plan.equal_tasks[k].offset_bytes = at;
    for (std::size_t k = s.channel_begin; k < s.channel_end; ++k) {
      const int64_t task = plan.channel_outputs[k].task;
      if (task >= 0) plan.channel_tasks[static_cast<std::size_t>(task)].offset_bytes = at;
    }
  }
}

}  // namespace

bool has_rule_statistics(const statistics_request& request) noexcept {
  return !request.percentiles.empty() || !request.equal_values.empty() || !request.channel_axes.empty() ||
         request.keep_values;
}

result<std::vector<rule_task_plan>> plan_rule_statistics(const tensor_batch& batch, const rule_task_limits& limits) {
  std::vector<rule_task_plan> groups;
  rule_task_plan current;
  int64_t current_bytes = 0;
  for (std::size_t i = 0; i < batch.segments.size(); ++i) {
    const statistics_request* request = batch.requests[i];
    if (request == nullptr || !has_rule_statistics(*request)) continue;
    const int64_t bytes = aligned(segment_bytes(batch.segments[i]));
    const int64_t keys = request->percentiles.empty() ? 0 : batch.segments[i].num_elements;
    if (!current.empty() &&
        (current_bytes + bytes > limits.max_device_bytes || current.keys + keys > limits.max_percentile_keys)) {
      lay_out_input(batch, current);
      groups.push_back(std::move(current));
      current = rule_task_plan{};
      current_bytes = 0;
    }
    TRIALSTAT_RETURN_IF_ERROR(plan_segment(batch, i, current));
    current_bytes += bytes;
  }
  if (!current.empty()) {
    lay_out_input(batch, current);
    groups.push_back(std::move(current));
  }
  return groups;
}

void fill_rule_statistics(const rule_task_plan& plan, const tensor_batch& batch, std::span<const int64_t> counts,
                          std::span<const kernels::channel_state> states, std::span<const double> percentiles) {
  for (const segment_outputs& s : plan.segments) {
    statistics_record& record = *batch.records[s.segment];
    const statistics_request& request = *batch.requests[s.segment];
    if (s.percentile_task >= 0) {
      const kernels::tensor_task& t = plan.percentile_tasks[static_cast<std::size_t>(s.percentile_task)];
      for (int64_t j = 0; j < t.params_count; ++j) {
        record.percentiles.push_back({plan.q[static_cast<std::size_t>(t.params_first + j)],
                                      percentiles[static_cast<std::size_t>(t.out_first + j)]});
      }
    }
    for (std::size_t k = s.equal_begin; k < s.equal_end; ++k) {
      const equal_output& e = plan.equal_outputs[k];
      for (int64_t j = 0; j < e.values_count; ++j) {
        record.equal_counts.push_back({plan.values[static_cast<std::size_t>(e.values_first + j)],
                                       counts[static_cast<std::size_t>(e.out_first + j)]});
      }
    }
    for (std::size_t k = s.channel_begin; k < s.channel_end; ++k) {
      const channel_output& c = plan.channel_outputs[k];
      channel_sums sums;
      sums.axis = c.axis;
      for (int64_t j = 0; j < c.channels; ++j) {
        const kernels::channel_state& st = states[static_cast<std::size_t>(c.out_first + j)];
        sums.sum.push_back(st.sum);
        sums.count.push_back(st.count);
        sums.nan_count.push_back(st.nan_count);
        sums.pos_inf_count.push_back(st.pos_inf_count);
        sums.neg_inf_count.push_back(st.neg_inf_count);
      }
      record.channel_sums.push_back(std::move(sums));
    }
    if (request.keep_values) record.values_data = batch.base + batch.segments[s.segment].offset_bytes;
  }
}

}  // namespace trialstat::stats::detail

// SPDX-License-Identifier: Apache-2.0
// The CPU executor's history windows and the pairwise statistics against them
// (cpu_pairwise_history.hpp). The history copy of a (tensor, worker) is refreshed inside the
// pairwise pass that reads it (no separate copy of the current tensor).
#include "host/stats/cpu_pairwise_history.hpp"

#include <algorithm>

#include "kernels/pairwise/pairwise_cpu.hpp"

namespace trialstat::stats::detail {
namespace {

uint64_t history_key(trial::tensor_id tensor, trial::worker_id worker) {
  return (static_cast<uint64_t>(tensor) << 32) | worker;
}

}  // namespace

snapshot_window& pairwise_history::window_of(const stats::statistics_record& record) {
  return windows_[history_key(record.tensor, record.worker)];
}

// When the window is full, the oldest copy's buffer becomes this step's copy: if it is
// compared (same shape and dtype), its last pass copies the current bytes over it block by
// block as it reads them (compute_pairwise_cpu's overwrite), else it is copied afterwards.
status compare_with_history(const stats::statistics_request& request, const tensor_view& current,
                            stats::statistics_record& record, snapshot_window& kept) {
  const stats::allclose_params default_params{};
  const bool recycle = !kept.empty() && static_cast<int>(kept.size()) >= request.history_depth;
  bool refreshed = false;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    stats::previous_comparison comparison;
    comparison.previous_step = it->step;
    comparison.shape_matches = it->shape == record.shape && it->type == record.type;
    if (comparison.shape_matches) {
      const tensor_view previous{it->bytes.data(), it->type, it->shape, record.num_elements,
                                 memory_kind::host};
      // Extra parameter sets first: the pass with the first set may overwrite `previous`.
      comparison.allclose_violations.resize(std::max<std::size_t>(1, request.allclose.size()));
      for (std::size_t p = 1; p < request.allclose.size(); ++p) {
        auto extra = kernels::compute_pairwise_cpu(previous, current, request.allclose[p]);
        if (!extra) return extra.error_status();
        comparison.allclose_violations[p] = extra->allclose_violations;
      }
      const bool overwrite = recycle && &*it == &kept.front();
      const auto& first_params = request.allclose.empty() ? default_params : request.allclose[0];
      auto result = kernels::compute_pairwise_cpu(previous, current, first_params,
                                                  overwrite ? it->bytes.data() : nullptr);
      if (!result) return result.error_status();
      refreshed = refreshed || overwrite;
      comparison.result = *result;
      comparison.allclose_violations[0] = result->allclose_violations;
    }
    record.previous.push_back(std::move(comparison));
  }
  // Keep this step's copy, recycling the oldest buffer once the window is full.
  tensor_snapshot next;
  if (recycle) {
    next = std::move(kept.front());
    kept.pop_front();
  }
  next.step = record.step;
  next.type = record.type;
  next.shape = record.shape;
  if (!refreshed) next.bytes.assign(current.data, current.data + current.size_bytes());
  kept.push_back(std::move(next));
  return status::success();
}

}  // namespace trialstat::stats::detail

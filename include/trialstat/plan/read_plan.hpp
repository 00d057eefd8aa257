// SPDX-License-Identifier: Apache-2.0
/// @file read_plan.hpp
/// @brief What to read (DESIGN.md stage 3): per tensor, the statistics request that is the union
/// of every rule's needs (requests for the same tensor merge), the steps and the workers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "trialstat/stats/statistics_request.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::plan {

/// @brief The merged needs of all rules (or of `trialstat stats`).
class read_plan {
 public:
  read_plan() = default;
  read_plan(const read_plan& other);
  read_plan& operator=(const read_plan& other);
  read_plan(read_plan&&) noexcept = default;  // the map's nodes move with it: by_tensor_ stays valid
  read_plan& operator=(read_plan&&) noexcept = default;
  ~read_plan() = default;

  /// @brief Add a request for one tensor (merged with earlier ones).
  void request(trial::tensor_id tensor, const stats::statistics_request& what);
  /// @brief The merged request for a tensor, or nullptr if nobody asked for it. Constant time
  /// (the readers ask once or twice per entry of every step).
  [[nodiscard]] const stats::statistics_request* find(trial::tensor_id tensor) const noexcept {
    return tensor < by_tensor_.size() ? by_tensor_[tensor] : nullptr;
  }
  [[nodiscard]] const std::map<trial::tensor_id, stats::statistics_request>& requests() const noexcept {
    return requests_;
  }
  /// @brief Largest history depth over all requests.
  [[nodiscard]] int max_history_depth() const noexcept;

  /// Global step range [begin, end) to evaluate; unset = unbounded.
  std::optional<int64_t> step_begin;
  std::optional<int64_t> step_end;
  /// Workers whose files are read, sorted ascending (an MPI rank's share of the trial,
  /// host/distributed); empty = every worker. Records of other workers are not produced.
  std::vector<trial::worker_id> workers;

  /// @brief Whether `worker`'s records are produced (`workers` empty or listing it).
  [[nodiscard]] bool reads_worker(trial::worker_id worker) const noexcept;

 private:
  void index_requests();
  std::map<trial::tensor_id, stats::statistics_request> requests_;
  /// requests_ by tensor id (nullptr: none), pointing into requests_' nodes.
  std::vector<const stats::statistics_request*> by_tensor_;
};

/// @brief Call `on_record(const trial::record_location&)` for each record of `entry` that
/// `request` needs read, in this order: the raw tensor's record when the request needs it decoded
/// (`needs_raw()`, or `wall_time`); then every saved reduction's record with `saved_reductions`,
/// or else, for a `wall_time` request of an entry without a raw record, the first saved
/// reduction's (its wall time). The one definition of "what a request reads", shared by the step
/// reader, the live completeness check, the read-ahead size estimate and the MPI partition.
template <typename Function>
void for_each_needed_record(const trial::tensor_entry& entry,
                            const stats::statistics_request& request, Function&& on_record) {
  if (entry.raw && (request.needs_raw() || request.wall_time)) on_record(*entry.raw);
  if (request.saved_reductions) {
    for (const auto& reduction : entry.reductions) on_record(reduction.location);
  } else if (request.wall_time && !entry.raw && !entry.reductions.empty()) {
    on_record(entry.reductions.front().location);
  }
}

}  // namespace trialstat::plan

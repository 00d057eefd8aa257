// SPDX-License-Identifier: Apache-2.0
// The read plan: per tensor, the merged statistics request of every rule (or `trialstat stats`),
// the step range and the workers read.
#include "trialstat/plan/read_plan.hpp"

#include <algorithm>

namespace trialstat::plan {

void read_plan::request(trial::tensor_id tensor, const stats::statistics_request& what) {
  auto [it, inserted] = requests_.try_emplace(tensor, what);
  if (inserted) {
    it->second.normalise();
  } else {
    it->second.merge(what);
  }
}

const stats::statistics_request* read_plan::find(trial::tensor_id tensor) const {
  const auto it = requests_.find(tensor);
  return it == requests_.end() ? nullptr : &it->second;
}

bool read_plan::reads_worker(trial::worker_id worker) const noexcept {
  return workers.empty() || std::binary_search(workers.begin(), workers.end(), worker);
}

int read_plan::max_history_depth() const noexcept {
  int depth = 0;
  for (const auto& [tensor, request] : requests_) depth = std::max(depth, request.history_depth);
  return depth;
}

}  // namespace trialstat::plan

// SPDX-License-Identifier: Apache-2.0
// The read plan: per tensor, the merged statistics request of every rule (or `trialstat stats`),
// the step range and the workers read.
#include "trialstat/plan/read_plan.hpp"

#include <algorithm>

namespace trialstat::plan {

read_plan::read_plan(const read_plan& other)
    : step_begin(other.step_begin), step_end(other.step_end), workers(other.workers), requests_(other.requests_) {
  index_requests();
}

read_plan& read_plan::operator=(const read_plan& other) {
  if (this != &other) {
    step_begin = other.step_begin;
    step_end = other.step_end;
    workers = other.workers;
    requests_ = other.requests_;
    index_requests();
  }
  return *this;
}

void read_plan::index_requests() {
  by_tensor_.clear();
  for (const auto& [tensor, request] : requests_) {
    if (by_tensor_.size() <= tensor) by_tensor_.resize(static_cast<std::size_t>(tensor) + 1, nullptr);
    by_tensor_[tensor] = &request;
  }
}

void read_plan::request(trial::tensor_id tensor, const stats::statistics_request& what) {
  auto [it, inserted] = requests_.try_emplace(tensor, what);
  if (inserted) {
    it->second.normalise();
    if (by_tensor_.size() <= tensor) by_tensor_.resize(static_cast<std::size_t>(tensor) + 1, nullptr);
    by_tensor_[tensor] = &it->second;
  } else {
    it->second.merge(what);
  }
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

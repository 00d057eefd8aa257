// SPDX-License-Identifier: Apache-2.0
// Test support: N ranks as N threads of one process, over ordered in-process queues.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

#include "trialstat/distributed/world.hpp"

namespace trialstat::distributed::testing_support {

/// Ordered queues between in-process ranks.
class thread_network {
 public:
  explicit thread_network(int ranks) : ranks_(ranks), queues_(static_cast<std::size_t>(ranks * ranks)) {}
  int size() const { return ranks_; }
  void put(int from, int to, std::vector<std::byte> m) {
    std::lock_guard lock(mutex_);
    queues_[static_cast<std::size_t>(from * ranks_ + to)].push_back(std::move(m));
    ready_.notify_all();
  }
  std::vector<std::byte> take(int from, int to) {
    std::unique_lock lock(mutex_);
    auto& q = queues_[static_cast<std::size_t>(from * ranks_ + to)];
    ready_.wait(lock, [&] { return !q.empty(); });
    auto m = std::move(q.front());
    q.pop_front();
    return m;
  }

 private:
  int ranks_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<std::deque<std::vector<std::byte>>> queues_;
};

class thread_transport final : public transport {
 public:
  thread_transport(thread_network& net, int rank) : net_(net), rank_(rank) {}
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return net_.size(); }
  status send(int to, std::vector<std::byte> message) override {
    net_.put(rank_, to, std::move(message));
    return status::success();
  }
  result<std::vector<std::byte>> receive(int from) override { return net_.take(from, rank_); }
  status flush() override { return status::success(); }

 private:
  thread_network& net_;
  int rank_;
};

}  // namespace trialstat::distributed::testing_support

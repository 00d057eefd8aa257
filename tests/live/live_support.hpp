// SPDX-License-Identifier: Apache-2.0
// Helpers for the live-trial tests: deterministic tensors for one worker step, an event log the
// watcher fills from its thread and a writer thread waits on (with timeouts, never unbounded).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "tests/support/files.hpp"
#include "trialstat/live/watch_trial.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat::testing {

/// What one worker writes at one step (float32 tensors, values from a seeded generator).
struct step_content {
  bool nan_in_relu = false;      ///< `relu_output` gets NaN elements
  bool inf_in_trunc = false;     ///< `trunc_tensor` gets a +Inf element
};

/// Write tensors fc.weight [8,4], gradient/fc.weight [8,4], relu_output [4,8], trunc_tensor
/// [64] for `step` (TRAIN mode, mode step = step) through `w`. Values are N(0, 0.1) from
/// seed (step, worker): finite, non-vanishing gradients (mean |g| ~ 0.08).
inline status write_worker_step(writer::trial_writer& w, int64_t step, const step_content& c,
                                uint64_t seed) {
  uint64_t worker_salt = 0;
  for (const char ch : w.worker()) worker_salt = worker_salt * 131u + static_cast<unsigned char>(ch);
  std::mt19937_64 rng(seed * 1000003u + static_cast<uint64_t>(step) * 7919u + worker_salt);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  const auto tensor = [&](std::string_view name, std::vector<int64_t> shape, auto&& poison) {
    int64_t n = 1;
    for (const int64_t d : shape) n *= d;
    std::vector<float> values(static_cast<std::size_t>(n));
    for (float& v : values) v = normal(rng);
    poison(values);
    const tensor_view view{reinterpret_cast<const std::byte*>(values.data()), dtype::float32,
                           shape, n, memory_kind::host};
    return w.add_tensor(name, view);
  };
  const auto none = [](std::vector<float>&) {};
  TRIALSTAT_RETURN_IF_ERROR(w.begin_step(step, mode::train, step));
  TRIALSTAT_RETURN_IF_ERROR(tensor("fc.weight", {8, 4}, none));
  TRIALSTAT_RETURN_IF_ERROR(tensor("gradient/fc.weight", {8, 4}, none));
  TRIALSTAT_RETURN_IF_ERROR(tensor("relu_output", {4, 8}, [&](std::vector<float>& v) {
    if (c.nan_in_relu) v[3] = v[17] = std::numeric_limits<float>::quiet_NaN();
  }));
  TRIALSTAT_RETURN_IF_ERROR(tensor("trunc_tensor", {64}, [&](std::vector<float>& v) {
    if (c.inf_in_trunc) v[10] = std::numeric_limits<float>::infinity();
  }));
  return w.end_step();
}

/// Events collected from the watcher's thread; other threads wait for one with a timeout.
class event_log {
 public:
  void add(const live::watch_event& e) {
    {
      std::lock_guard lock(mutex_);
      events_.push_back(e);
      if (on_add_) on_add_(e);
    }
    changed_.notify_all();
  }
  /// Wait until an event satisfies `pred` (true) or `timeout` passes (false).
  bool wait_for(const std::function<bool(const live::watch_event&)>& pred,
                std::chrono::milliseconds timeout = std::chrono::seconds(8)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] {
      for (const auto& e : events_) {
        if (pred(e)) return true;
      }
      return false;
    });
  }
  std::vector<live::watch_event> snapshot() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  /// Called under the log's lock for every new event (from the watcher's thread).
  void set_on_add(std::function<void(const live::watch_event&)> f) {
    std::lock_guard lock(mutex_);
    on_add_ = std::move(f);
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<live::watch_event> events_;
  std::function<void(const live::watch_event&)> on_add_;
};

}  // namespace trialstat::testing

// SPDX-License-Identifier: Apache-2.0
/// @file live_writer.hpp
/// @brief The statistics store's writer for live trials (`trialstat watch --store`, issue 26):
/// the rows of each step the watch evaluates, committed step by step, so that a `rules` run in
/// another process during training is served every step the watch has done and reads only the
/// newer ones. A live stream visits every step from the first in order, so its pairwise
/// comparisons are those of a whole run and its rows serve one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/store/store_source.hpp"

namespace trialstat::store {

/// @brief Writes rows as a rule session's steps complete. The store is opened at the first step;
/// a store that cannot be opened or written is one warning (`store_source_options::warn`), and
/// the watch goes on without it.
class live_writer {
 public:
  /// @param options  `path`, `warn` and `max_store_bytes` are used; rows commit every step
  explicit live_writer(store_source_options options);
  ~live_writer();
  live_writer(const live_writer&) = delete;
  live_writer& operator=(const live_writer&) = delete;

  /// @brief The observer to hand to the watch (refers to this object: keep it alive).
  [[nodiscard]] pipeline::step_observer observer();
  /// @brief Rows written so far (`store_run_summary::written`).
  [[nodiscard]] const store_run_summary& summary() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace trialstat::store

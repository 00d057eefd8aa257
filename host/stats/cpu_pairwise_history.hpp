// SPDX-License-Identifier: Apache-2.0
// The CPU executor's copies of earlier steps (host memory) and the pairwise statistics against
// them: a window of up to `history_depth` copies per (tensor, worker), newest last. Internal to
// host/stats (cpu_executor.cpp, cpu_tensor_statistics.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "trialstat/dtype.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/stats/statistics_request.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats::detail {

/// @brief A previous saved step's copy of one tensor: its step, dtype, shape and element bytes.
struct tensor_snapshot {
  int64_t step = 0;
  dtype type = dtype::invalid;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};

/// @brief The kept copies of one (tensor, worker), oldest first.
using snapshot_window = std::deque<tensor_snapshot>;

/// @brief Every (tensor, worker)'s window. Not thread-safe: look windows up on one thread; a
/// window found here stays at its address (node-based map) while others are added, so distinct
/// windows may then be compared on different threads.
class pairwise_history {
 public:
  /// @brief The window of `record`'s (tensor, worker), created empty on first use.
  /// Throws std::bad_alloc only.
  [[nodiscard]] snapshot_window& window_of(const stats::statistics_record& record);

 private:
  std::unordered_map<uint64_t, snapshot_window> windows_;
};

/// @brief Pairwise statistics of `current` against every copy in `kept`, newest first, appended
/// to `record.previous` (one previous_comparison per copy; shape_matches false and no result when
/// the shape or dtype differs); one allclose count per parameter set of `request.allclose`
/// (at least one: the defaults). Then this step's copy is kept, the oldest dropped beyond
/// `request.history_depth` — its buffer reused: when it is compared, the comparison with the
/// first parameter set copies the current bytes over it as it reads them.
/// @param current the tensor of `record` (host memory, record.num_elements elements)
/// @return ok; errors of compute_pairwise_cpu (out_of_memory); out_of_memory for the copy.
[[nodiscard]] status compare_with_history(const stats::statistics_request& request,
                                          const tensor_view& current,
                                          stats::statistics_record& record, snapshot_window& kept);

}  // namespace trialstat::stats::detail

// SPDX-License-Identifier: Apache-2.0
/// @file tensor_batch.hpp
/// @brief Decoded tensors of one event file (or several) held in one staging buffer, each with
/// the request to fulfil and the record to fill: the input of a statistics executor
/// (stats/statistics_executor.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "trialstat/stats/segment.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/stats/statistics_request.hpp"
#include "trialstat/status.hpp"

namespace trialstat::stats {

/// @brief [n] tensors of one staging buffer: segment i's elements fill `*records[i]` with what
/// `*requests[i]` asks (the merged request of the record's tensor; never null).
struct tensor_batch {
  const std::byte* base = nullptr;                  ///< staging buffer (host; pinned when CUDA runs)
  std::vector<segment> segments;                    ///< [n] element bytes of each tensor in `base`
  std::vector<statistics_record*> records;          ///< [n] the record each segment fills
  std::vector<const statistics_request*> requests;  ///< [n] what to compute for each segment

  void clear() {
    segments.clear();
    records.clear();
    requests.clear();
  }

  /// @brief ok when `segments`, `records` and `requests` have one entry each per tensor and no
  /// record or request is null; else invalid_argument naming `executor` and the first bad entry.
  [[nodiscard]] status check(const char* executor) const;
};

}  // namespace trialstat::stats

// SPDX-License-Identifier: Apache-2.0
// The executors' input check: one segment, one record and one request per tensor.
#include "trialstat/stats/tensor_batch.hpp"

#include <string>

namespace trialstat::stats {

status tensor_batch::check(const char* executor) const {
  const std::size_t n = segments.size();
  if (records.size() != n || requests.size() != n) {
    return status(error_code::invalid_argument,
                  std::string(executor) + ": " + std::to_string(n) + " segments but " +
                      std::to_string(records.size()) + " records and " +
                      std::to_string(requests.size()) + " requests");
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (records[i] == nullptr || requests[i] == nullptr) {
      return status(error_code::invalid_argument,
                    std::string(executor) + ": segment " + std::to_string(i) + " has no " +
                        (records[i] == nullptr ? "record" : "request"));
    }
  }
  return status::success();
}

}  // namespace trialstat::stats

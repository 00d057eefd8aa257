// SPDX-License-Identifier: Apache-2.0
/// @file cpu_validate.hpp
/// @brief Argument checks shared by the twins' entry points and the host dispatch layer.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "kernels/common/element_op.hpp"
#include "trialstat/stats/segment.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief Check a segment table: non-negative element counts, a non-null base when there is
/// data, and real dtypes. `what` names the call in messages.
[[nodiscard]] inline status validate_segments(const std::byte* base,
                                              std::span<const stats::segment> segments,
                                              const char* what) {
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const auto& s = segments[i];
    if (s.num_elements < 0) {
      return status(error_code::invalid_argument,
                    std::string(what) + ": segment " + std::to_string(i) +
                        " has a negative element count (" + std::to_string(s.num_elements) + ")");
    }
    if (!is_supported_dtype(s.type)) {
      return status(error_code::unsupported_dtype,
                    std::string(what) + ": segment " + std::to_string(i) + " has dtype " +
                        std::string(dtype_name(s.type)) + " (" +
                        std::string(dtype_proto_name(s.type)) +
                        "); statistics need a real numeric dtype");
    }
    if (s.num_elements > 0 && base == nullptr) {
      return status(error_code::invalid_argument,
                    std::string(what) + ": segment " + std::to_string(i) + " has " +
                        std::to_string(s.num_elements) + " elements but the buffer is null");
    }
  }
  return status::success();
}

}  // namespace trialstat::kernels

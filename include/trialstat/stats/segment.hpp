// SPDX-License-Identifier: Apache-2.0
/// @file segment.hpp
/// @brief The unit of work of every statistic: one tensor's elements inside a batch buffer
/// (segmented reductions run over many segments of one buffer in one launch).
#pragma once

#include <cstdint>

#include "trialstat/dtype.hpp"

namespace trialstat::stats {

/// @brief One tensor inside a batch buffer: `num_elements` elements of `type` starting
/// `offset_bytes` after the buffer's base. Segments may be unaligned and may not overlap.
struct segment {
  uint64_t offset_bytes = 0;
  int64_t num_elements = 0;
  dtype type = dtype::float32;
};

}  // namespace trialstat::stats

// SPDX-License-Identifier: Apache-2.0
/// @file selftest_data.hpp
/// @brief The generated batches of `stats::run_selftest` (internal to host/stats).
///
/// Not shared with tests/reference/reference_stats.hpp (`make_tensor_bytes`), which is
/// test-only code the library cannot link, and which draws random data per mode: the selftest
/// needs fixed edge cases laid out per dtype (the dtype's own subnormals, the histogram's and
/// the log-scale histogram's edges one bit pattern either side) in one unaligned batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trialstat/dtype.hpp"
#include "trialstat/stats/segment.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats::detail {

/// @brief Tensors of one batch buffer, each with a shape and a case name, plus a perturbed
/// copy of the buffer (same layout) for the pairwise statistics and the executor's second step.
struct selftest_batch {
  std::string label;                          ///< dtype name, "tiny" or "large"
  std::vector<std::byte> bytes;               ///< ≥ 8 bytes of padding after the last element
  std::vector<std::byte> perturbed;           ///< same size; empty for "large"
  std::vector<segment> segments;              ///< [n] at unaligned offsets
  std::vector<std::vector<int64_t>> shapes;   ///< [n] rank 1 or [rows, 7]
  std::vector<std::string> names;             ///< [n] "specials", "bin_edges", ...
  bool per_tensor = true;                     ///< run the per-tensor statistics over it

  [[nodiscard]] tensor_view view(std::size_t i, bool from_perturbed = false) const {
    const auto& data = from_perturbed ? perturbed : bytes;
    return tensor_view{data.data() + segments[i].offset_bytes, segments[i].type, shapes[i],
                       segments[i].num_elements, memory_kind::host};
  }
  [[nodiscard]] int64_t total_elements() const noexcept {
    int64_t n = 0;
    for (const auto& s : segments) n += s.num_elements;
    return n;
  }
};

/// @brief The real dtypes, in the order the selftest reports them.
[[nodiscard]] const std::vector<dtype>& selftest_dtypes();

/// @brief One dtype's cases (specials, bin_edges, log_edges, bits, normal, one_element),
/// deterministic in `seed`.
[[nodiscard]] selftest_batch make_dtype_batch(dtype type, uint64_t seed);

/// @brief 600 float32/bfloat16 tensors of 0–16 elements (specials mixed in), in one batch.
[[nodiscard]] selftest_batch make_tiny_batch(uint64_t seed);

/// @brief One uint8 tensor of `num_elements` (a pattern with every byte value). Throws
/// std::bad_alloc when the memory is not there (the caller checks first).
[[nodiscard]] selftest_batch make_large_batch(int64_t num_elements);

}  // namespace trialstat::stats::detail

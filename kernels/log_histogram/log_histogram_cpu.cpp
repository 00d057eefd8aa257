// SPDX-License-Identifier: Apache-2.0
// CPU twin of the log-scale histogram: per 64 Ki-element chunk, convert each 1 Ki block to
// float64, find every value's cell (log_histogram_op.hpp) into 32-bit chunk-local counters,
// then add the non-zero counters to the segment's row with relaxed atomic adds (exact).
#include "kernels/log_histogram/log_histogram_cpu.hpp"

#include <algorithm>
#include <atomic>
#include <string>

#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/log_histogram/log_histogram_op.hpp"

namespace trialstat::kernels {
namespace {

constexpr log_histogram_edge_table host_edges = make_log_histogram_edges();

template <dtype D>
void count_chunk(const unsigned char* bytes, int64_t begin, int64_t count, int64_t* row) {
  alignas(64) double buf[cpu_block_elements];
  uint32_t local[log_histogram_num_cells] = {};  // ≤ 65536 elements per chunk: no overflow
  for (int64_t b = 0; b < count; b += cpu_block_elements) {
    const int64_t n = std::min(count - b, cpu_block_elements);
    const unsigned char* src = bytes + (begin + b) * element_size_v<D>;
    for (int64_t i = 0; i < n; ++i) buf[i] = load_as_double<D, false>(src, i);
    for (int64_t i = 0; i < n; ++i) ++local[log_histogram_cell(host_edges.edge, buf[i])];
  }
  for (int c = 0; c < log_histogram_num_cells; ++c) {
    if (local[c] != 0) {
      std::atomic_ref<int64_t>(row[c]).fetch_add(static_cast<int64_t>(local[c]),
                                                 std::memory_order_relaxed);
    }
  }
}

}  // namespace

status compute_log_histograms_cpu(const std::byte* base, std::span<const stats::segment> segments,
                                  std::span<int64_t> cells) noexcept {
  if (cells.size() != segments.size() * static_cast<std::size_t>(log_histogram_num_cells)) {
    return status(error_code::invalid_argument,
                  "compute_log_histograms: " + std::to_string(cells.size()) + " cells for " +
                      std::to_string(segments.size()) + " segments (need " +
                      std::to_string(log_histogram_num_cells) + " per segment)");
  }
  TRIALSTAT_RETURN_IF_ERROR(validate_segments(base, segments, "compute_log_histograms"));
  try {
    const cpu_work_plan plan = plan_cpu_chunks(segments);
    cpu_parallel_for(static_cast<int64_t>(plan.items.size()), [&](int64_t i) {
      const cpu_work_item& item = plan.items[static_cast<std::size_t>(i)];
      const auto s = static_cast<std::size_t>(item.segment);
      const auto* bytes = reinterpret_cast<const unsigned char*>(base) + segments[s].offset_bytes;
      int64_t* row = cells.data() + s * static_cast<std::size_t>(log_histogram_num_cells);
      visit_real_dtype(segments[s].type, [&](auto tag) {
        count_chunk<decltype(tag)::value>(bytes, item.begin, item.count, row);
      });
    });
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_log_histograms: cannot plan " + std::to_string(segments.size()) +
                      " segments");
  }
  return status::success();
}

}  // namespace trialstat::kernels

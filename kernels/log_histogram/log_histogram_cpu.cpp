// SPDX-License-Identifier: Apache-2.0
// CPU twin of the log-scale histogram. Per 64 Ki-element chunk, the lane body
// (log_histogram_lanes_cpu.hpp, compiled per ISA) turns each block into counter labels with the
// table lookups of log_histogram_op.hpp (index from the bits, first rank, one comparison with
// the exact bound, then the rank's label; float32, float16 and bfloat16 by the 13-bit label
// table of log_histogram_labels_cpu.hpp, the same entries re-indexed and re-encoded), counts
// them into four interleaved 32-bit sub-histograms, then adds the non-zero counters to the
// segment's row — mapped from label to cell — with relaxed atomic adds (chunks of one segment
// may run on different threads; integers: exact in any order).
#include "kernels/log_histogram/log_histogram_cpu.hpp"

#include "kernels/common/cpu_simd.hpp"  // first: turns FP contraction off for this file

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <string>

#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/log_histogram/log_histogram_labels_cpu.hpp"
#include "kernels/log_histogram/log_histogram_op.hpp"
#include "kernels/log_histogram/log_histogram_top_bits32.hpp"

namespace trialstat::kernels {
namespace {

constexpr log_histogram_tables host_tables = make_log_histogram_tables();
constexpr log_histogram_lookup host_lookup{host_tables.rank32, host_tables.first_rank,
                                           host_tables.next_lower};
constexpr log_histogram_label_table32 host_labels32 =
    make_log_histogram_label_table32(make_log_histogram_top_table32(host_tables));
constexpr int log_histogram_sub_histograms = 4;
/// Labels in groups of 8 for the flush (the last group padded with zero totals).
constexpr int log_histogram_label_groups = (log_histogram_num_labels + 7) / 8;

}  // namespace
}  // namespace trialstat::kernels

#define TRIALSTAT_CPU_KERNEL_BODY "kernels/log_histogram/log_histogram_lanes_cpu.hpp"
#include "kernels/common/cpu_regions.hpp"

namespace trialstat::kernels {
namespace {

/// Chunks of at most this many elements are counted and flushed by walking their labels instead
/// of every counter (a 1 KiB tensor touches a few dozen of the 1555).
constexpr int64_t sparse_flush_elements = 512;

/// Per-thread counters (by label, log_histogram_labels_cpu.hpp), zero between uses.
struct label_scratch {
  alignas(64) uint32_t counters[log_histogram_sub_histograms * log_histogram_num_labels] = {};
};

/// The cell of every label (log_cell_of_label as a table: looked up at every flush).
const std::array<uint16_t, log_histogram_num_labels> cell_of_label = [] {
  std::array<uint16_t, log_histogram_num_labels> cells{};
  for (int label = 0; label < log_histogram_num_labels; ++label) {
    cells[static_cast<std::size_t>(label)] = static_cast<uint16_t>(log_cell_of_label(label));
  }
  return cells;
}();

/// One segment's cells: the bins, then the extra cells (contiguous in a batch's row, apart for
/// segment_log_histogram_cpu).
struct cell_row {
  int64_t* bins;
  int64_t* extra;
  int64_t& operator[](int cell) const {
    return cell < log_histogram_num_bins ? bins[cell] : extra[cell - log_histogram_num_bins];
  }
};

/// Adds `count` elements of `label` into the row: with a relaxed atomic add when other threads
/// may add into the same row (compute_log_histograms_cpu's chunks of one segment), else plainly.
template <bool SharedRow>
void add_to_row(const cell_row& row, int label, uint32_t count) {
  if (count == 0) return;
  int64_t& cell = row[cell_of_label[static_cast<std::size_t>(label)]];
  if constexpr (SharedRow) {
    std::atomic_ref<int64_t>(cell).fetch_add(static_cast<int64_t>(count), std::memory_order_relaxed);
  } else {
    cell += static_cast<int64_t>(count);
  }
}

/// The label the lanes give element `index` of a D tensor (the sparse flush's walk).
template <dtype D>
int label_of_element(const unsigned char* bytes, int64_t index) {
  if constexpr (log_histogram_uses_float32<D>) {
    const float f = load_as_float32<D, false>(bytes, index);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return log_histogram_label32(host_labels32, bits);
  } else {
    return log_label_of_rank(log_histogram_rank_of_element<D, false>(host_lookup, bytes, index));
  }
}

template <bool SharedRow>
void count_chunk(const unsigned char* bytes, dtype type, int64_t begin, int64_t count,
                 const cell_row& row) {
  static thread_local label_scratch scratch;
  uint32_t* c = scratch.counters;
  if (count <= sparse_flush_elements) {
    // A small chunk: its labels once (the scalar functions the lanes spell), counted into the
    // first sub-histogram (runs are short next to the work per tensor), then flushed and
    // re-zeroed by walking the labels — not the 1555 counters.
    int32_t labels[sparse_flush_elements];
    visit_real_dtype(type, [&](auto tag) {
      constexpr dtype D = decltype(tag)::value;
      for (int64_t i = 0; i < count; ++i) labels[i] = label_of_element<D>(bytes, begin + i);
    });
    for (int64_t i = 0; i < count; ++i) ++c[labels[i]];
    for (int64_t i = 0; i < count; ++i) {
      add_to_row<SharedRow>(row, labels[i], c[labels[i]]);  // once: the first visit zeroes it
      c[labels[i]] = 0;
    }
    return;
  }
  const auto count_labels_isa = TRIALSTAT_CPU_SELECT(count_labels);
  const int64_t padding = count_labels_isa(host_lookup, host_labels32, bytes, type, begin, count, c);
  c[log_label_nan] -= static_cast<uint32_t>(padding);  // the NaN padding of the last block
  // The totals and the zeroing in one pass over lanes, then the row's cells of the non-zero
  // totals (a few hundred at most), skipping zero groups of 8.
  alignas(64) uint32_t totals[log_histogram_label_groups * 8];
  TRIALSTAT_CPU_SELECT(take_totals)(c, totals);
  for (int group = 0; group < log_histogram_label_groups; ++group) {
    const uint32_t* t = totals + group * 8;
    if ((t[0] | t[1] | t[2] | t[3] | t[4] | t[5] | t[6] | t[7]) == 0) continue;
    for (int k = 0; k < 8; ++k) add_to_row<SharedRow>(row, group * 8 + k, t[k]);
  }
}
}  // namespace

void segment_log_histogram_cpu(const std::byte* base, const stats::segment& seg, int64_t* bins,
                               int64_t* extra_cells) noexcept {
  const auto* bytes = reinterpret_cast<const unsigned char*>(base) + seg.offset_bytes;
  const cell_row row{bins, extra_cells};
  for (int64_t begin = 0; begin < seg.num_elements; begin += cpu_chunk_elements) {
    count_chunk<false>(bytes, seg.type, begin, std::min(cpu_chunk_elements, seg.num_elements - begin), row);
  }
}

void log_histogram_ranks32_cpu(const uint32_t* bits, int64_t n, int32_t* ranks) noexcept {
  TRIALSTAT_CPU_SELECT(labels_of_f32)(host_labels32, bits, n, ranks);
  for (int64_t i = 0; i < n; ++i) ranks[i] = log_rank_of_label(ranks[i]);
}

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
    int64_t work = 0;
    for (const auto& s : segments) work += s.num_elements;
    cpu_parallel_for(static_cast<int64_t>(plan.items.size()), work, [&](int64_t i) {
      const cpu_work_item& item = plan.items[static_cast<std::size_t>(i)];
      const auto s = static_cast<std::size_t>(item.segment);
      const auto* bytes = reinterpret_cast<const unsigned char*>(base) + segments[s].offset_bytes;
      int64_t* row = cells.data() + s * static_cast<std::size_t>(log_histogram_num_cells);
      count_chunk<true>(bytes, segments[s].type, item.begin, item.count,
                        cell_row{row, row + log_histogram_num_bins});
    });
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_log_histograms: cannot plan " + std::to_string(segments.size()) +
                      " segments");
  }
  return status::success();
}

}  // namespace trialstat::kernels

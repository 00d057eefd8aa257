// SPDX-License-Identifier: Apache-2.0
// CPU twin of the log-scale histogram. Per 64 Ki-element chunk, the lane body
// (log_histogram_lanes_cpu.hpp, compiled per ISA) turns each 1 Ki block into ranks with the
// table lookups of log_histogram_op.hpp (index from the bits, first rank, one comparison with
// the exact bound; float32, float16 and bfloat16 by the 13-bit table of
// log_histogram_top_bits32.hpp, the same entries re-indexed), counts them into four interleaved 32-bit sub-histograms, then adds the
// non-zero counters to the segment's row — mapped from rank to cell — with relaxed atomic adds
// (chunks of one segment may run on different threads; integers: exact in any order).
#include "kernels/log_histogram/log_histogram_cpu.hpp"

#include "kernels/common/cpu_simd.hpp"  // first: turns FP contraction off for this file

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/log_histogram/log_histogram_op.hpp"
#include "kernels/log_histogram/log_histogram_top_bits32.hpp"

namespace trialstat::kernels {
namespace {

constexpr log_histogram_tables host_tables = make_log_histogram_tables();
constexpr log_histogram_lookup host_lookup{host_tables.rank32, host_tables.first_rank,
                                           host_tables.next_lower};
constexpr log_histogram_top_table32 host_top32 = make_log_histogram_top_table32(host_tables);
constexpr int log_histogram_sub_histograms = 4;

}  // namespace
}  // namespace trialstat::kernels

#define TRIALSTAT_CPU_KERNEL_BODY "kernels/log_histogram/log_histogram_lanes_cpu.hpp"
#include "kernels/common/cpu_regions.hpp"

namespace trialstat::kernels {
namespace {

/// Chunks of at most this many elements are flushed by walking their elements' ranks instead
/// of every counter (a 1 KiB tensor touches a few dozen of the 1553).
constexpr int64_t sparse_flush_elements = 512;

/// Per-thread counters (the CPU ranks: the shared ones and the −Inf alias), zero between uses.
struct rank_scratch {
  alignas(64) uint32_t counters[log_histogram_sub_histograms * log_histogram_num_cpu_ranks] = {};
};

void add_to_row(int64_t* row, int rank, uint32_t count) {
  if (count == 0) return;
  std::atomic_ref<int64_t>(row[log_cell_of_cpu_rank(rank)])
      .fetch_add(static_cast<int64_t>(count), std::memory_order_relaxed);
}

void count_chunk(const unsigned char* bytes, dtype type, int64_t begin, int64_t count,
                 int64_t* row) {
  static thread_local rank_scratch scratch;
  uint32_t* c = scratch.counters;
  const auto count_ranks_isa = TRIALSTAT_CPU_SELECT(count_ranks);
  const int64_t padding = count_ranks_isa(host_lookup, host_top32, bytes, type, begin, count, c);
  c[log_rank_nan] -= static_cast<uint32_t>(padding);  // the NaN padding of the last block
  constexpr int stride = log_histogram_num_cpu_ranks;
  if (count <= sparse_flush_elements) {
    // Walk the elements again (cheap next to 4 × 1554 counters): flush and re-zero the ranks
    // they hit (the scalar ranks: −Inf by its alias is flushed last). The padding ranks are
    // NaN, already taken off.
    const auto flush = [&](int rank) {
      uint32_t total = 0;  // mod 2^32: the padding was taken off sub-histogram 0 only
      for (int k = 0; k < log_histogram_sub_histograms; ++k) {
        total += c[k * stride + rank];
        c[k * stride + rank] = 0;
      }
      add_to_row(row, rank, total);
    };
    visit_real_dtype(type, [&](auto tag) {
      constexpr dtype D = decltype(tag)::value;
      for (int64_t i = 0; i < count; ++i) {
        flush(log_histogram_rank_of_element<D, false>(host_lookup, bytes, begin + i));
      }
    });
    flush(log_rank_nan);
    flush(log_rank_neg_inf_alias);
    return;
  }
  for (int r = 0; r < stride; ++r) {
    uint32_t total = 0;  // mod 2^32 (≤ 65536 elements per chunk; see the padding above)
    for (int k = 0; k < log_histogram_sub_histograms; ++k) total += c[k * stride + r];
    add_to_row(row, r, total);
  }
  std::memset(c, 0, sizeof scratch.counters);
}

}  // namespace

void segment_log_histogram_cpu(const std::byte* base, const stats::segment& seg,
                               int64_t* cells) noexcept {
  const auto* bytes = reinterpret_cast<const unsigned char*>(base) + seg.offset_bytes;
  for (int64_t begin = 0; begin < seg.num_elements; begin += cpu_chunk_elements) {
    count_chunk(bytes, seg.type, begin, std::min(cpu_chunk_elements, seg.num_elements - begin), cells);
  }
}

void log_histogram_ranks32_cpu(const uint32_t* bits, int64_t n, int32_t* ranks) noexcept {
  TRIALSTAT_CPU_SELECT(ranks_of_f32)(host_top32, bits, n, ranks);
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
      count_chunk(bytes, segments[s].type, item.begin, item.count, row);
    });
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_log_histograms: cannot plan " + std::to_string(segments.size()) +
                      " segments");
  }
  return status::success();
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
// How an executor with bounded buffers walks a tensor_batch (internal to host/pipeline):
//  - every segment becomes one piece, or — when its bytes exceed what one device buffer holds —
//    several pieces of whole elements, each a multiple of 16 bytes except the last (so a piece
//    keeps the alignment its segment had);
//  - pieces, in ascending host offset, are packed greedily into groups whose host byte span
//    (gaps between segments included: one copy per group) fits the device buffer, with at most
//    `max_pieces` pieces and `max_result_bytes` of results per group;
//  - partial results of a split segment merge exactly (counts, extremes) or stably (Chan's
//    moments merge): the helpers below are the only merge code, shared by the CUDA executor
//    and the CPU tests that check it.
// Pure host code: no CUDA, no allocation beyond the output vectors' capacity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/stats/segment.hpp"
#include "trialstat/stats/pairwise.hpp"
#include "trialstat/status.hpp"

namespace trialstat::stats::detail {

/// Elements [element_begin, element_begin + element_count) of segment `segment`.
struct batch_piece {
  uint32_t segment = 0;        ///< index into the batch's segment table
  uint32_t piece_index = 0;    ///< 0-based position within its segment
  uint32_t piece_count = 1;    ///< pieces of its segment (1: the whole segment)
  int64_t element_begin = 0;
  int64_t element_count = 0;
  uint64_t offset_bytes = 0;   ///< host offset (from the batch base) of element_begin
  uint64_t size_bytes = 0;     ///< element_count × element size
  [[nodiscard]] bool whole() const noexcept { return piece_count == 1; }
};

/// Pieces copied to the device together: pieces[first, first + count), host bytes
/// [host_begin, host_end) (host_begin rounded down so that base + host_begin is 16-aligned when
/// the base allows it).
struct piece_group {
  uint32_t first = 0;
  uint32_t count = 0;
  uint64_t host_begin = 0;
  uint64_t host_end = 0;
  [[nodiscard]] uint64_t span_bytes() const noexcept { return host_end - host_begin; }
};

/// Bounds of one group.
struct split_limits {
  uint64_t max_span_bytes = uint64_t{32} << 20;  ///< ≥ 64: the device input buffer
  uint32_t max_pieces = 16384;                   ///< ≥ 1: segment-table capacity
  uint64_t max_result_bytes = 0;                 ///< 0: unlimited; a lone piece may exceed it
};

/// Alignment kept by pieces and group starts (bytes).
inline constexpr uint64_t piece_alignment_bytes = 16;

/// Largest piece: max_span_bytes − 16, rounded down to a multiple of 16 (so that a piece plus
/// the alignment slack of its group start fits the span).
[[nodiscard]] uint64_t max_piece_bytes(const split_limits& limits) noexcept;

/// Pieces of every segment, ordered by (offset_bytes, segment). Errors: invalid_argument for
/// limits too small, negative element counts or dtypes without a size.
[[nodiscard]] status split_segments(std::span<const stats::segment> segments,
                                    const split_limits& limits, std::vector<batch_piece>& out);

/// Greedy groups over `pieces` (in their order). `result_bytes` is empty or gives each piece's
/// result bytes; `base_address` is the batch base's address (for the 16-byte start rounding).
void group_pieces(std::span<const batch_piece> pieces, std::span<const uint64_t> result_bytes,
                  uintptr_t base_address, const split_limits& limits,
                  std::vector<piece_group>& out);

/// A rectangle of a C-order [batch, nodes] tensor: rows [row_begin, row_begin + num_rows) ×
/// nodes [node_begin, node_begin + num_nodes); contiguous in memory (whole rows, or one row).
struct axis0_region {
  int64_t row_begin = 0;
  int64_t num_rows = 0;
  int64_t node_begin = 0;
  int64_t num_nodes = 0;
  [[nodiscard]] int64_t element_begin(int64_t nodes) const noexcept {
    return row_begin * nodes + node_begin;
  }
};

/// The ≤ 3 contiguous rectangles (partial first row, whole rows, partial last row) covering
/// elements [begin, begin + count) of a [batch, nodes] tensor. Returns how many were written.
[[nodiscard]] int axis0_regions(int64_t nodes, int64_t begin, int64_t count,
                                axis0_region (&out)[3]) noexcept;

/// Where a batch's bytes live (cudaPointerGetAttributes' memory type, without CUDA headers).
enum class source_memory : uint8_t {
  pageable,     ///< ordinary host memory (cudaMemoryTypeUnregistered, or no CUDA answer)
  host_pinned,  ///< page-locked or registered host memory (cudaMemoryTypeHost)
  device,       ///< cudaMalloc memory (cudaMemoryTypeDevice)
  managed,      ///< cudaMallocManaged memory (cudaMemoryTypeManaged)
};

/// How an executor takes a batch from `kind` memory: `direct` (one async copy per group
/// straight from it: pinned memory) or staged through a pinned buffer (pageable memory).
/// Device and managed memory are rejected with invalid_argument naming the memory type: the
/// batch bytes are also read on the host (rule statistics, validation), which device memory
/// cannot serve, and a managed buffer would be migrated back and forth under the kernels.
[[nodiscard]] status plan_batch_source(source_memory kind, bool& direct);

/// Pairwise results of two disjoint ranges: sums add, maxima, counts add (kernels::merge_pairwise:
/// a poisoned part gives the poisoned record).
[[nodiscard]] stats::pairwise merge_pairwise(const stats::pairwise& a,
                                             const stats::pairwise& b) noexcept;

/// acc[i] += part[i] for i < part.size() (acc.size() ≥ part.size()); a poisoned cell (−1) on
/// either side leaves −1 (kernels::merge_counts), never −k.
void add_counts(std::span<int64_t> acc, std::span<const int64_t> part) noexcept;

}  // namespace trialstat::stats::detail

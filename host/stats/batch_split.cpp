// SPDX-License-Identifier: Apache-2.0
#include "host/stats/batch_split.hpp"

#include <algorithm>
#include <string>

#include "kernels/pairwise/pairwise_op.hpp"
#include "trialstat/dtype.hpp"

namespace trialstat::stats::detail {

uint64_t max_piece_bytes(const split_limits& limits) noexcept {
  if (limits.max_span_bytes < 2 * piece_alignment_bytes) return 0;
  return (limits.max_span_bytes - piece_alignment_bytes) / piece_alignment_bytes *
         piece_alignment_bytes;
}

status split_segments(std::span<const stats::segment> segments, const split_limits& limits,
                      std::vector<batch_piece>& out) {
  out.clear();
  const uint64_t piece_bytes = max_piece_bytes(limits);
  if (piece_bytes < piece_alignment_bytes || limits.max_pieces == 0) {
    return status(error_code::invalid_argument,
                  "split_segments: buffers of " + std::to_string(limits.max_span_bytes) +
                      " bytes / " + std::to_string(limits.max_pieces) + " pieces are too small");
  }
  if (segments.size() > UINT32_MAX) {
    return status(error_code::invalid_argument, "split_segments: too many segments");
  }
  bool sorted = true;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const stats::segment& s = segments[i];
    const auto size = static_cast<uint64_t>(dtype_size_bytes(s.type));
    if (s.num_elements < 0 || size == 0) {
      return status(error_code::invalid_argument,
                    "split_segments: segment " + std::to_string(i) +
                        (s.num_elements < 0 ? " has a negative element count"
                                            : " has a dtype without an element size"));
    }
    const auto n = static_cast<uint64_t>(s.num_elements);
    const uint64_t bytes = n * size;
    if (bytes <= piece_bytes) {
      out.push_back({static_cast<uint32_t>(i), 0, 1, 0, s.num_elements, s.offset_bytes, bytes});
    } else {
      // Whole elements, a multiple of 16 bytes per piece (element sizes are 1, 2, 4 or 8).
      const uint64_t per_piece = piece_bytes / size;
      const uint64_t count = (n + per_piece - 1) / per_piece;
      for (uint64_t k = 0; k < count; ++k) {
        const uint64_t begin = k * per_piece;
        const uint64_t elements = std::min(per_piece, n - begin);
        out.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(k),
                       static_cast<uint32_t>(count), static_cast<int64_t>(begin),
                       static_cast<int64_t>(elements), s.offset_bytes + begin * size,
                       elements * size});
      }
    }
    if (i > 0 && s.offset_bytes < segments[i - 1].offset_bytes) sorted = false;
  }
  if (!sorted) {
    std::sort(out.begin(), out.end(), [](const batch_piece& a, const batch_piece& b) {
      if (a.offset_bytes != b.offset_bytes) return a.offset_bytes < b.offset_bytes;
      if (a.segment != b.segment) return a.segment < b.segment;
      return a.piece_index < b.piece_index;
    });
  }
  return status::success();
}

namespace {

/// Group start for a piece at `offset`: rounded down so that base + start is 16-aligned, when
/// that stays inside the buffer.
uint64_t aligned_start(uint64_t offset, uintptr_t base_address) noexcept {
  const uint64_t misalignment = (base_address + offset) % piece_alignment_bytes;
  return misalignment <= offset ? offset - misalignment : offset;
}

}  // namespace

void group_pieces(std::span<const batch_piece> pieces, std::span<const uint64_t> result_bytes,
                  uintptr_t base_address, const split_limits& limits,
                  std::vector<piece_group>& out) {
  out.clear();
  piece_group current;
  uint64_t current_results = 0;
  bool open = false;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const batch_piece& p = pieces[i];
    const uint64_t results = result_bytes.empty() ? 0 : result_bytes[i];
    if (open) {
      const uint64_t end = std::max(current.host_end, p.offset_bytes + p.size_bytes);
      const uint64_t begin = std::min(current.host_begin, aligned_start(p.offset_bytes, base_address));
      const bool fits = end - begin <= limits.max_span_bytes && current.count < limits.max_pieces &&
                        (limits.max_result_bytes == 0 ||
                         current_results + results <= limits.max_result_bytes);
      if (fits) {
        current.count += 1;
        current.host_begin = begin;
        current.host_end = end;
        current_results += results;
        continue;
      }
      out.push_back(current);
    }
    current = piece_group{static_cast<uint32_t>(i), 1, aligned_start(p.offset_bytes, base_address),
                          p.offset_bytes + p.size_bytes};
    current_results = results;
    open = true;
  }
  if (open) out.push_back(current);
}

int axis0_regions(int64_t nodes, int64_t begin, int64_t count, axis0_region (&out)[3]) noexcept {
  if (nodes <= 0 || count <= 0) return 0;
  int n = 0;
  int64_t row = begin / nodes;
  int64_t node = begin % nodes;
  int64_t left = count;
  if (node != 0) {  // partial first row
    const int64_t take = std::min(left, nodes - node);
    out[n++] = {row, 1, node, take};
    left -= take;
    ++row;
  }
  if (left >= nodes) {  // whole rows
    const int64_t rows = left / nodes;
    out[n++] = {row, rows, 0, nodes};
    left -= rows * nodes;
    row += rows;
  }
  if (left > 0) out[n++] = {row, 1, 0, left};  // partial last row
  return n;
}

status plan_batch_source(source_memory kind, bool& direct) {
  direct = false;
  switch (kind) {
    case source_memory::pageable: return status::success();
    case source_memory::host_pinned: direct = true; return status::success();
    case source_memory::device:
    case source_memory::managed: break;
  }
  return status(error_code::invalid_argument,
                std::string("cuda executor: the batch's bytes are in CUDA ") +
                    (kind == source_memory::device ? "device (cudaMalloc)" : "managed (cudaMallocManaged)") +
                    " memory; tensor_batch.base must point to host memory (pageable, pinned or "
                    "registered), which the executor copies to the device itself");
}

stats::pairwise merge_pairwise(const stats::pairwise& a, const stats::pairwise& b) noexcept {
  stats::pairwise r;
  kernels::store_pairwise(kernels::merge_pairwise(kernels::load_pairwise(a), kernels::load_pairwise(b)), &r);
  return r;
}

void add_counts(std::span<int64_t> acc, std::span<const int64_t> part) noexcept {
  for (std::size_t i = 0; i < part.size() && i < acc.size(); ++i) {
    acc[i] = kernels::merge_counts(acc[i], part[i]);
  }
}

}  // namespace trialstat::stats::detail

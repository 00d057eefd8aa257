// SPDX-License-Identifier: Apache-2.0
/// @file chunk_plan.hpp
/// @brief The arithmetic of the segmented CUDA launchers, host and device, without CUDA headers
/// so that the CPU tests run it (tests/kernels/chunk_plan_test.cpp): every segment of a batch is
/// cut into chunks of `chunk_elements` elements (the last one shorter); an exclusive scan of the
/// per-segment chunk counts gives each segment's first chunk; a persistent grid walks the global
/// chunk numbers, finds each chunk's segment by binary search over that scan and its element
/// range from the difference. The chunk size is chosen per launch (`choose_chunk_elements`) from
/// the batch's size and the device's resident blocks, so that a few large tensors still give
/// every resident block work.
///
/// Index arithmetic is int64 throughout: a segment of 2^31 or more elements, chunk numbers past
/// 2^31 and element offsets chunk × chunk_elements stay exact (checked up to 2^62 elements).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/common/element_op.hpp"
#include "trialstat/stats/segment.hpp"

namespace trialstat::kernels {

/// @brief Largest chunk: 64 Ki elements (the fixed size before launches chose it).
inline constexpr int64_t max_chunk_elements = 65536;

/// @brief Chunks of a segment of `n` elements: ceil(n / chunk_elements), 0 for n ≤ 0. No
/// overflow for any n (no n + chunk − 1).
TRIALSTAT_HD_INLINE int64_t chunks_of(int64_t n, int64_t chunk_elements) {
  return n > 0 ? n / chunk_elements + (n % chunk_elements != 0 ? 1 : 0) : 0;
}

/// @brief Upper bound on the chunks of a batch of `num_segments` segments holding at most
/// `max_total_elements` elements: Σ ceil(n_i / C) ≤ Σ n_i / C + num_segments (+1 spare). Sizes
/// the per-chunk partials of a workspace.
TRIALSTAT_HD_INLINE int64_t max_chunks(int64_t max_total_elements, int64_t num_segments,
                                       int64_t chunk_elements) {
  return max_total_elements / chunk_elements + num_segments + 1;
}

/// @brief Segment owning global chunk `chunk`: the last s with starts[s] ≤ chunk, where
/// `starts` is the exclusive scan of the chunk counts ([n + 1], starts[n] = total) and
/// 0 ≤ chunk < starts[n]. Segments without chunks (empty) share their start with the next one
/// and are never returned.
TRIALSTAT_HD_INLINE int64_t find_segment(const int64_t* starts, int64_t n, int64_t chunk) {
  int64_t lo = 0;
  int64_t hi = n;  // invariant: starts[lo] ≤ chunk < starts[hi]
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (starts[mid] <= chunk) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// @brief Elements [begin, end) of a segment.
struct element_range {
  int64_t begin;
  int64_t end;
};

/// @brief Elements of global chunk `chunk` inside its segment, whose first chunk is
/// `first_chunk` and which holds `num_elements` elements.
TRIALSTAT_HD_INLINE element_range chunk_range(int64_t chunk, int64_t first_chunk,
                                              int64_t num_elements, int64_t chunk_elements) {
  const int64_t begin = (chunk - first_chunk) * chunk_elements;
  const int64_t left = num_elements - begin;
  return {begin, begin + (left < chunk_elements ? left : chunk_elements)};
}

/// @brief Chunk size of one launch: large enough that per-chunk overhead (a block reduction, a
/// partial record, one merge step) stays small, small enough that the batch gives every
/// resident block about `waves` chunks. A multiple of `granule` (the kernels' tile) in
/// [granule, max_chunk_elements]. With 132 SMs × 8 resident blocks, a 4 Mi-element tensor gets
/// 2048-element chunks (2048 chunks, was 64 of 64 Ki); batches of ≥ 138 Mi elements keep 64 Ki.
/// @param max_total_elements bound on the batch's elements (the workspace's sizing bound)
/// @param resident_blocks    blocks the persistent grid keeps resident (≥ 1)
/// @param granule            the kernels' tile (elements), dividing max_chunk_elements
[[nodiscard]] inline int64_t choose_chunk_elements(int64_t max_total_elements,
                                                   int64_t resident_blocks, int64_t granule,
                                                   int64_t waves = 2) {
  if (granule <= 0 || max_chunk_elements % granule != 0) return max_chunk_elements;
  const int64_t blocks = resident_blocks > 0 ? resident_blocks : 1;
  const int64_t target_chunks = blocks * (waves > 0 ? waves : 1);
  const int64_t per_chunk = max_total_elements > 0 ? max_total_elements / target_chunks : 0;
  int64_t chunk = per_chunk / granule * granule;
  if (chunk < granule) chunk = granule;
  if (chunk > max_chunk_elements) chunk = max_chunk_elements;
  // A power-of-two multiple of the granule, so that a chunk is whole tiles and whole warps.
  int64_t pow2 = granule;
  while (pow2 * 2 <= chunk) pow2 *= 2;
  return pow2;
}

/// @brief The grid of a multi-tensor launch (kernels/common/tensor_task.hpp): tasks along y
/// (at most 65535 rows; kernels stride over the rest), each task's elements along x. Rows share
/// the resident blocks, so x = resident_blocks / rows, at least 1 and at most the blocks the
/// largest task can use (ceil(largest / threads_per_block)). One large tensor gets every
/// resident block; 10,000 tiny ones a block each.
struct task_grid_shape {
  int64_t x = 1;
  int64_t y = 1;
};
[[nodiscard]] inline task_grid_shape choose_task_grid(int64_t resident_blocks, int64_t largest_task_elements,
                                                      int64_t num_tasks, int64_t threads_per_block) {
  constexpr int64_t max_rows = 65535;
  task_grid_shape g;
  g.y = num_tasks < 1 ? 1 : (num_tasks < max_rows ? num_tasks : max_rows);
  const int64_t per_row = (resident_blocks > 0 ? resident_blocks : 1) / g.y;
  const int64_t threads = threads_per_block > 0 ? threads_per_block : 1;
  const int64_t useful = largest_task_elements > 0 ? chunks_of(largest_task_elements, threads) : 1;
  g.x = per_row < 1 ? 1 : per_row;
  if (g.x > useful) g.x = useful;
  return g;
}

/// @brief The host form of the device chunk plan (count kernel + cub::DeviceScan): `starts`
/// [n + 1] = exclusive scan of chunks_of(n_i), starts[n] = total chunks. For tests and host
/// consumers; the device computes the same numbers.
inline void host_chunk_starts(std::span<const stats::segment> segments, int64_t chunk_elements,
                              std::vector<int64_t>& starts) {
  starts.assign(segments.size() + 1, 0);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    starts[i + 1] = starts[i] + chunks_of(segments[i].num_elements, chunk_elements);
  }
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
/// @file segmented_cuda.cuh
/// @brief Device-side machinery shared by the segmented launchers (internal, CUDA only):
/// chunk planning on the device (every segment is cut into chunks; an exclusive scan of the
/// per-segment chunk counts gives each segment's first chunk, so a persistent grid can walk all
/// chunks of a batch without the host knowing the segment sizes; the arithmetic is host-tested
/// in chunk_plan.hpp), the workspace carver of the two-phase launchers, per-segment
/// dtype/alignment dispatch, and warp shuffles of structs.
#pragma once

#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>
#include <cub/warp/warp_reduce.cuh>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/cuda_batch.hpp"
#include "kernels/common/chunk_plan.hpp"
#include "kernels/common/element_op.hpp"
#include "trialstat/detail/cuda_check.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels::cuda_detail {

/// Threads per block of the segmented kernels.
inline constexpr int block_threads = 256;
/// Elements one thread holds in registers per step (a tile = block_threads × items_per_thread
/// elements). 8 keeps the moments kernel at ≤ 128 registers without spills (2 blocks per SM).
inline constexpr int items_per_thread = 8;
inline constexpr int64_t tile_elements = int64_t{block_threads} * items_per_thread;
static_assert(max_chunk_elements % tile_elements == 0, "a chunk is whole tiles");

/// @brief Bump allocator over a workspace: with a null base it only measures.
class workspace_carver {
 public:
  explicit workspace_carver(void* base) : base_(static_cast<std::byte*>(base)) {}
  template <class T>
  T* take(std::size_t count) {
    T* p = base_ != nullptr ? reinterpret_cast<T*>(base_ + used_) : nullptr;
    used_ += workspace_align(count * sizeof(T));
    return p;
  }
  [[nodiscard]] std::size_t used() const { return used_; }

 private:
  std::byte* base_;
  std::size_t used_ = 0;
};

/// @brief The chunk plan of a batch inside a workspace (arithmetic: chunk_plan.hpp).
struct chunk_plan {
  int64_t chunk_elements = max_chunk_elements;  ///< chosen per launch (choose_chunk_elements)
  int64_t capacity = 0;         ///< partials the workspace holds: max_chunks(...) of the batch
  int64_t* d_counts = nullptr;  ///< [n + 1]
  int64_t* d_starts = nullptr;  ///< [n + 1] exclusive scan: first chunk of segment i; [n] = total
  void* d_scan_temp = nullptr;
  std::size_t scan_temp_bytes = 0;
};

/// @brief Choose the chunk size of `batch` (a multiple of `granule` elements, from its size
/// and the blocks a persistent grid of `per_sm` blocks per SM keeps resident), size the
/// partials (`capacity`) and carve the plan's arrays out of `carver` (measuring when its base
/// is null). The query and the launch compute the same plan for the same batch and device.
status carve_chunk_plan(workspace_carver& carver, const device_batch& batch, int64_t granule,
                        int per_sm, chunk_plan& plan);

/// @brief Enqueue the planning (count + scan) on `stream`.
status enqueue_chunk_plan(const device_batch& batch, const chunk_plan& plan, cudaStream_t stream);

/// @brief Blocks a persistent grid keeps resident on the current device: `per_sm` × SMs.
status resident_blocks(int per_sm, int64_t& blocks);

/// @brief Blocks for a persistent grid on the current device: `per_sm` × SMs, at most `work`.
status persistent_grid(int per_sm, int64_t work, int& grid);

/// @brief The grid of a multi-tensor launch on the current device (choose_task_grid with
/// `per_sm` × SMs resident blocks).
status task_grid(int per_sm, int64_t largest_task_elements, int64_t num_tasks, dim3& grid);

/// @brief Call `f(dtype_tag<D>{}, std::bool_constant<Aligned>{})` for a segment starting at
/// `bytes` (block-uniform, so no divergence). Returns false for unsupported dtypes.
template <class F>
__device__ __forceinline__ bool dispatch_segment(dtype type, const unsigned char* bytes, F&& f) {
  return visit_real_dtype(type, [&](auto tag) {
    constexpr dtype D = decltype(tag)::value;
    if constexpr (element_size_v<D> == 1) {
      f(tag, std::true_type{});
    } else {
      if (is_element_aligned<D>(bytes)) {
        f(tag, std::true_type{});
      } else {
        f(tag, std::false_type{});
      }
    }
  });
}

/// @brief Order-preserving warp reduction of a struct (cub::WarpReduce, shuffle-based for a
/// 32-thread warp: lane i's value is merged before lane i + offset's, so non-commutative merges
/// such as Chan's stay in lane order; fixed tree, deterministic). Lane 0 ends with the merge
/// over lanes 0..31. Every lane of the warp must call it.
template <class T, class Merge>
__device__ __forceinline__ T warp_merge(T value, Merge merge) {
  using warp_reduce = cub::WarpReduce<T>;
  // The shuffle specialisation (power-of-two warps, the only one used here) keeps no state in
  // its TempStorage (an empty type), so a local one serves.
  static_assert(sizeof(typename warp_reduce::TempStorage) <= 1,
                "cub::WarpReduce<T> is expected to use shuffles (no shared temp storage)");
  typename warp_reduce::TempStorage temp;
  return warp_reduce(temp).Reduce(value, merge);
}

}  // namespace trialstat::kernels::cuda_detail

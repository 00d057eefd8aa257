// SPDX-License-Identifier: Apache-2.0
/// @file segmented_cuda.cuh
/// @brief Device-side machinery shared by the segmented launchers (internal, CUDA only):
/// chunk planning (every segment is cut into `chunk_elements` chunks; an exclusive scan of the
/// per-segment chunk counts gives each segment's first chunk, so a persistent grid can walk all
/// chunks of a batch without the host knowing the segment sizes), the workspace carver of the
/// two-phase launchers, per-segment dtype/alignment dispatch, and warp shuffles of structs.
#pragma once

#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/cuda_batch.hpp"
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
/// Elements per chunk (the unit of work of one block): 64 Ki.
inline constexpr int64_t chunk_elements = 65536;
static_assert(chunk_elements % tile_elements == 0, "a chunk is whole tiles");

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

/// @brief Upper bound on the chunks of a batch: Σ ceil(n_i / C) ≤ Σ n_i / C + num_segments.
inline int64_t max_chunks(const device_batch& b) {
  return b.max_total_elements / chunk_elements + b.num_segments + 1;
}

/// @brief The chunk plan of a batch inside a workspace.
struct chunk_plan {
  int64_t* d_counts = nullptr;  ///< [n + 1]
  int64_t* d_starts = nullptr;  ///< [n + 1] exclusive scan: first chunk of segment i; [n] = total
  void* d_scan_temp = nullptr;
  std::size_t scan_temp_bytes = 0;
};

/// @brief Carve a chunk plan for `num_segments` out of `carver` (measuring when base is null).
status carve_chunk_plan(workspace_carver& carver, int64_t num_segments, chunk_plan& plan);

/// @brief Enqueue the planning (count + scan) on `stream`.
status enqueue_chunk_plan(const device_batch& batch, const chunk_plan& plan, cudaStream_t stream);

/// @brief Blocks for a persistent grid on the current device: `per_sm` × SMs, at most `work`.
status persistent_grid(int per_sm, int64_t work, int& grid);

/// @brief Segment owning global chunk `chunk`: the last s with starts[s] ≤ chunk (segments with
/// no chunk share their start with the next one and are skipped by the search).
__device__ __forceinline__ int64_t find_segment(const int64_t* starts, int64_t n, int64_t chunk) {
  int64_t lo = 0;
  int64_t hi = n;  // invariant: starts[lo] ≤ chunk < starts[hi] (starts[n] = total)
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

/// @brief __shfl_down_sync of a trivially copyable struct, word by word.
template <class T>
__device__ __forceinline__ T shfl_down_struct(const T& value, int offset) {
  static_assert(sizeof(T) % sizeof(uint32_t) == 0, "pad the struct to 32-bit words");
  constexpr int words = sizeof(T) / sizeof(uint32_t);
  uint32_t in[words];
  uint32_t out[words];
  std::memcpy(in, &value, sizeof(T));
#pragma unroll
  for (int w = 0; w < words; ++w) out[w] = __shfl_down_sync(0xffffffffu, in[w], offset);
  T result;
  std::memcpy(&result, out, sizeof(T));
  return result;
}

/// @brief Fixed-order warp tree: lane 0 ends with merge over lanes 0..31 (lane i's value
/// before lane i + offset's). Every lane of the warp must call it.
template <class T, class Merge>
__device__ __forceinline__ T warp_merge(T value, Merge merge) {
  const int lane = static_cast<int>(threadIdx.x % 32);
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2) {
    const T other = shfl_down_struct(value, offset);
    if (lane + offset < 32) value = merge(value, other);
  }
  return value;
}

}  // namespace trialstat::kernels::cuda_detail

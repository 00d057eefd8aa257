// SPDX-License-Identifier: Apache-2.0
// CUDA moments: plan chunks (segmented_cuda.cuh; the chunk size, ≤ 64 Ki elements, is chosen
// per launch from the batch and the device), one persistent kernel in which each block reduces
// one chunk at a time, then one warp per segment merges its chunks.
//
// Inside a chunk, thread t owns elements t, t + 256, ... of each 2048-element tile (coalesced).
// Per tile a thread holds its 8 values in registers, forms their two-pass record (centre of the
// 8, then the corrected Σ(x − centre)²) and Chan-merges it into its running record; the block
// then reduces the 256 thread records with cub::BlockReduce (fixed order: deterministic).
#include "kernels/moments/moments_cuda.hpp"

#include <cub/block/block_reduce.cuh>

#include "kernels/common/segmented_cuda.cuh"
#include "kernels/moments/moments_op.hpp"

namespace trialstat::kernels {
namespace {

using namespace cuda_detail;

/// This thread's record over its elements of [begin, end) of a D segment with shift K.
template <dtype D, bool Aligned>
__device__ moments_state thread_chunk_moments(const unsigned char* bytes, int64_t begin,
                                              int64_t end, double shift) {
  moments_state acc = moments_identity();
  for (int64_t tile = begin; tile < end; tile += tile_elements) {
    double v[items_per_thread];
    bool valid[items_per_thread];
#pragma unroll
    for (int j = 0; j < items_per_thread; ++j) {
      const int64_t i = tile + static_cast<int64_t>(j) * block_threads + threadIdx.x;
      valid[j] = i < end;
      v[j] = valid[j] ? load_as_double<D, Aligned>(bytes, i) : 0.0;
    }
    moments_state group = moments_identity();
    double shifted_sum = 0.0;
#pragma unroll
    for (int j = 0; j < items_per_thread; ++j) {
      if (valid[j]) {
        group.count += 1;
        accumulate_first_pass(group, shifted_sum, v[j], shift);
      }
    }
    if (group.count == 0) break;  // past the end for this thread: later tiles are too
    if (group.finite_count() > 0) {
      const double centre = block_centre(group, shifted_sum);
      deviation_sums dev{0.0, 0.0};
#pragma unroll
      for (int j = 0; j < items_per_thread; ++j) {
        if (valid[j]) accumulate_deviation(dev, v[j], shift, centre);
      }
      finish_block(group, centre, dev);
    }
    acc = merge_moments(acc, group);
  }
  return acc;
}

// At least 2 resident blocks per SM (≤ 128 registers, no spills with 8 items per thread).
__global__ void __launch_bounds__(block_threads, 2)
    moments_chunks_kernel(device_batch batch, const int64_t* __restrict__ starts,
                          int64_t capacity, int64_t chunk_elements,
                          moments_state* __restrict__ partials) {
  using block_reduce = cub::BlockReduce<moments_state, block_threads>;
  __shared__ typename block_reduce::TempStorage temp;
  const int64_t total = starts[batch.num_segments];
  if (total > capacity) return;  // the merge kernel poisons the records
  for (int64_t chunk = blockIdx.x; chunk < total; chunk += gridDim.x) {
    const int64_t s = find_segment(starts, batch.num_segments, chunk);
    const stats::segment seg = batch.d_segments[s];
    const element_range range = chunk_range(chunk, starts[s], seg.num_elements, chunk_elements);
    const int64_t begin = range.begin;
    const int64_t end = range.end;
    const auto* bytes = reinterpret_cast<const unsigned char*>(batch.d_base) + seg.offset_bytes;
    moments_state mine = moments_identity();
    const bool supported = dispatch_segment(seg.type, bytes, [&](auto tag, auto aligned) {
      constexpr dtype D = decltype(tag)::value;
      constexpr bool A = decltype(aligned)::value;
      const double shift = moments_shift<D, A>(bytes, seg.num_elements);
      mine = thread_chunk_moments<D, A>(bytes, begin, end, shift);
    });
    const moments_state total_state = block_reduce(temp).Reduce(mine, merge_moments_fn{});
    if (threadIdx.x == 0) partials[chunk] = supported ? total_state : moments_poison();
    __syncthreads();  // temp storage is reused by the next chunk
  }
}

__global__ void __launch_bounds__(block_threads)
    moments_merge_kernel(int64_t num_segments, const int64_t* __restrict__ starts,
                         int64_t capacity, const moments_state* __restrict__ partials,
                         stats::moments* __restrict__ out) {
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (warp >= num_segments) return;  // whole warps exit together
  const int64_t total = starts[num_segments];
  moments_state acc = moments_identity();
  if (total <= capacity) {
    for (int64_t c = starts[warp] + lane; c < starts[warp + 1]; c += 32) {
      acc = merge_moments(acc, partials[c]);
    }
  }
  acc = warp_merge(acc, merge_moments_fn{});
  // merge_moments keeps a poisoned chunk's poison (count −1), so one bad chunk poisons its record.
  if (lane == 0) store_moments(total <= capacity ? acc : moments_poison(), &out[warp]);
}

/// Persistent-grid blocks per SM of the chunk kernel.
constexpr int chunk_blocks_per_sm = 8;

status carve(workspace_carver& carver, const device_batch& batch, chunk_plan& plan,
             moments_state*& partials, int64_t& capacity) {
  TRIALSTAT_RETURN_IF_ERROR(
      carve_chunk_plan(carver, batch, tile_elements, chunk_blocks_per_sm, plan));
  capacity = plan.capacity;
  partials = carver.take<moments_state>(static_cast<std::size_t>(capacity));
  return status::success();
}

}  // namespace

status launch_moments(const device_batch& batch, stats::moments* d_out, void* d_workspace,
                      std::size_t* workspace_bytes, cudaStream_t stream) noexcept {
  if (workspace_bytes == nullptr || batch.num_segments < 0 || batch.max_total_elements < 0) {
    return status(error_code::invalid_argument,
                  "launch_moments: null workspace size or negative batch sizes");
  }
  workspace_carver carver(d_workspace);
  chunk_plan plan;
  moments_state* partials = nullptr;
  int64_t capacity = 0;
  TRIALSTAT_RETURN_IF_ERROR(carve(carver, batch, plan, partials, capacity));
  if (d_workspace == nullptr) {
    *workspace_bytes = carver.used();
    return status::success();
  }
  if (*workspace_bytes < carver.used()) {
    return status(error_code::invalid_argument,
                  "launch_moments: workspace of " + std::to_string(*workspace_bytes) +
                      " bytes, " + std::to_string(carver.used()) + " needed");
  }
  if (batch.num_segments == 0) return status::success();
  if (d_out == nullptr || batch.d_segments == nullptr) {
    return status(error_code::invalid_argument, "launch_moments: null segments or output");
  }
  TRIALSTAT_RETURN_IF_ERROR(enqueue_chunk_plan(batch, plan, stream));
  int grid = 0;
  TRIALSTAT_RETURN_IF_ERROR(persistent_grid(chunk_blocks_per_sm, capacity, grid));
  moments_chunks_kernel<<<grid, block_threads, 0, stream>>>(batch, plan.d_starts, capacity,
                                                            plan.chunk_elements, partials);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  const int64_t merge_blocks = (batch.num_segments * 32 + block_threads - 1) / block_threads;
  moments_merge_kernel<<<static_cast<unsigned>(merge_blocks), block_threads, 0, stream>>>(
      batch.num_segments, plan.d_starts, capacity, partials, d_out);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
// CUDA histogram: plan chunks, then a persistent kernel in which each block counts one chunk at
// a time into per-warp shared-memory sub-histograms (fewer collisions on hot bins; lanes of a
// warp with the same bin add once, __match_any_sync), adds them and
// flushes the non-zero bins to the segment's int64 row with atomics. Bins too many for shared
// memory count straight into global memory. Counts are exact, so the result is deterministic.
#include "kernels/histogram/histogram_cuda.hpp"

#include "kernels/common/result_poison.hpp"
#include "kernels/common/segmented_cuda.cuh"
#include "kernels/histogram/histogram_op.hpp"

namespace trialstat::kernels {
namespace {

using namespace cuda_detail;

/// Shared memory for sub-histograms (static limit without opting in to more).
constexpr int smem_budget_bytes = 32 * 1024;
constexpr int warps_per_block = block_threads / 32;

/// Count elements [begin, end) of a D segment: into `hist` (shared, `bins` counters of this
/// warp's copy) when non-null, else into the global row with 64-bit atomics.
template <dtype D, bool Aligned>
__device__ void count_chunk(const unsigned char* bytes, int64_t begin, int64_t end,
                            const histogram_params& p, uint32_t* hist,
                            unsigned long long* global_row) {
  constexpr int unroll = 4;
  for (int64_t base = begin; base < end; base += int64_t{block_threads} * unroll) {
    double v[unroll];
    bool valid[unroll];
#pragma unroll
    for (int k = 0; k < unroll; ++k) {
      const int64_t i = base + static_cast<int64_t>(k) * block_threads + threadIdx.x;
      valid[k] = i < end;
      v[k] = valid[k] ? load_as_double<D, Aligned>(bytes, i) : 0.0;
    }
#pragma unroll
    for (int k = 0; k < unroll; ++k) {
      // Warp-aggregated: the lanes of a warp holding the same bin (skewed data: mostly zeros,
      // ReLU outputs) add their count once, from their lowest lane, instead of serialising on
      // one counter. The loop is block-uniform, so all 32 lanes are here together.
      const bool keep = valid[k] && histogram_keeps(p, v[k]);
      const int bin = keep ? histogram_bin(p, v[k]) : -1;
      const unsigned peers = __match_any_sync(0xffffffffu, bin);
      const int lane = static_cast<int>(threadIdx.x % 32);
      if (keep && lane == __ffs(static_cast<int>(peers)) - 1) {
        const auto count = static_cast<unsigned>(__popc(peers));
        if (hist != nullptr) {
          atomicAdd(&hist[bin], count);
        } else {
          atomicAdd(&global_row[bin], static_cast<unsigned long long>(count));
        }
      }
    }
  }
}

__global__ void __launch_bounds__(block_threads)
    histogram_chunks_kernel(device_batch batch, const int64_t* __restrict__ starts,
                            int64_t capacity, int64_t chunk_elements,
                            const stats::moments* __restrict__ moments,
                            int bins, int copies, unsigned long long* __restrict__ counts) {
  extern __shared__ uint32_t sub_hist[];  // [copies × bins], empty when copies == 0
  const int64_t total = starts[batch.num_segments];
  if (total > capacity) {  // the batch outgrew the workspace: poison every count with −1
    const int64_t cells = batch.num_segments * bins;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x; i < cells;
         i += static_cast<int64_t>(gridDim.x) * block_threads) {
      counts[i] = ~0ULL;
    }
    return;
  }
  const int warp = static_cast<int>(threadIdx.x / 32);
  for (int64_t chunk = blockIdx.x; chunk < total; chunk += gridDim.x) {
    const int64_t s = find_segment(starts, batch.num_segments, chunk);
    const stats::segment seg = batch.d_segments[s];
    const stats::moments m = moments[s];
    unsigned long long* row = counts + s * bins;
    const auto* bytes = reinterpret_cast<const unsigned char*>(batch.d_base) + seg.offset_bytes;
    if (is_poisoned(m) || !is_supported_dtype(seg.type)) {
      // Poisoned range or a dtype the device cannot read: the row becomes poison (every chunk of
      // the segment writes the same −1s and none adds), so the host rejects it.
      for (int bin = threadIdx.x; bin < bins; bin += block_threads) row[bin] = ~0ULL;
      continue;  // block-uniform
    }
    const int64_t finite = m.count - m.nan_count - m.pos_inf_count - m.neg_inf_count;
    if (finite <= 0 || !(m.min <= m.max)) continue;  // block-uniform
    const histogram_params p = make_histogram_params(m.min, m.max, bins);
    const element_range range = chunk_range(chunk, starts[s], seg.num_elements, chunk_elements);
    const int64_t begin = range.begin;
    const int64_t end = range.end;
    if (copies > 0) {
      for (int i = threadIdx.x; i < copies * bins; i += block_threads) sub_hist[i] = 0u;
      __syncthreads();
    }
    uint32_t* mine = copies > 0 ? sub_hist + (warp % copies) * bins : nullptr;
    dispatch_segment(seg.type, bytes, [&](auto tag, auto aligned) {
      count_chunk<decltype(tag)::value, decltype(aligned)::value>(bytes, begin, end, p, mine,
                                                                   row);
    });
    if (copies > 0) {
      __syncthreads();
      for (int bin = threadIdx.x; bin < bins; bin += block_threads) {
        unsigned long long sum = 0;
        for (int c = 0; c < copies; ++c) sum += sub_hist[c * bins + bin];
        if (sum != 0) atomicAdd(&row[bin], sum);
      }
      __syncthreads();  // the next chunk zeroes sub_hist again
    }
  }
}

/// Shared sub-histograms of a launch and its chunk granule.
struct histogram_launch_shape {
  int copies = 0;              ///< per-warp shared copies (0: count into global memory)
  std::size_t smem_bytes = 0;
  int64_t granule = tile_elements;
};

/// Each chunk zeroes and flushes copies × bins shared counters: a chunk holds at least 4 times
/// as many elements (a power of two ≥ the tile, ≤ 64 Ki), so that overhead stays small.
histogram_launch_shape histogram_shape(int bins) {
  histogram_launch_shape shape;
  const int64_t per_copy_bytes = int64_t{bins} * static_cast<int64_t>(sizeof(uint32_t));
  shape.copies = static_cast<int>(smem_budget_bytes / per_copy_bytes);
  if (shape.copies > warps_per_block) shape.copies = warps_per_block;
  shape.smem_bytes = static_cast<std::size_t>(shape.copies) * static_cast<std::size_t>(per_copy_bytes);
  const int64_t counters = int64_t{shape.copies} * bins;
  while (shape.granule < 4 * counters && shape.granule < max_chunk_elements) shape.granule *= 2;
  return shape;
}

}  // namespace

status launch_histograms(const device_batch& batch, const stats::moments* d_moments, int bins,
                         int64_t* d_counts, void* d_workspace, std::size_t* workspace_bytes,
                         cudaStream_t stream) noexcept {
  if (workspace_bytes == nullptr || batch.num_segments < 0 || batch.max_total_elements < 0) {
    return status(error_code::invalid_argument,
                  "launch_histograms: null workspace size or negative batch sizes");
  }
  if (bins < 1 || bins > (1 << 24)) {
    return status(error_code::invalid_argument,
                  "launch_histograms: bins must be in [1, 2^24], got " + std::to_string(bins));
  }
  const histogram_launch_shape shape = histogram_shape(bins);
  workspace_carver carver(d_workspace);
  chunk_plan plan;
  TRIALSTAT_RETURN_IF_ERROR(carve_chunk_plan(carver, batch, shape.granule, 8, plan));
  const int64_t capacity = plan.capacity;
  if (d_workspace == nullptr) {
    *workspace_bytes = carver.used();
    return status::success();
  }
  if (*workspace_bytes < carver.used()) {
    return status(error_code::invalid_argument,
                  "launch_histograms: workspace of " + std::to_string(*workspace_bytes) +
                      " bytes, " + std::to_string(carver.used()) + " needed");
  }
  if (batch.num_segments == 0) return status::success();
  if (d_counts == nullptr || d_moments == nullptr || batch.d_segments == nullptr) {
    return status(error_code::invalid_argument,
                  "launch_histograms: null segments, moments or counts");
  }
  TRIALSTAT_CUDA_TRY(cudaMemsetAsync(
      d_counts, 0,
      static_cast<std::size_t>(batch.num_segments) * static_cast<std::size_t>(bins) *
          sizeof(int64_t),
      stream));
  TRIALSTAT_RETURN_IF_ERROR(enqueue_chunk_plan(batch, plan, stream));
  int grid = 0;
  TRIALSTAT_RETURN_IF_ERROR(persistent_grid(8, capacity, grid));
  histogram_chunks_kernel<<<grid, block_threads, shape.smem_bytes, stream>>>(
      batch, plan.d_starts, capacity, plan.chunk_elements, d_moments, bins, shape.copies,
      reinterpret_cast<unsigned long long*>(d_counts));
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
// CUDA log-scale histogram: plan chunks (segmented_cuda.cuh), then a persistent kernel. Each
// block copies the lookup tables of log_histogram_op.hpp (the host's table, built and verified
// at compile time: 3488 float32 entries, 3488 first ranks and the float64 bounds) from constant memory into
// shared memory once, then per chunk (32 or 64 Ki elements, chosen per launch) counts ranks
// into 4 shared sub-histograms (8 warps share them in pairs, fewer collisions on the hot bins
// near 0) and flushes the non-zero counters, mapped from rank to cell, to the segment's row
// with 64-bit atomics.
#include "kernels/log_histogram/log_histogram_cuda.hpp"

#include "kernels/common/segmented_cuda.cuh"
#include "kernels/log_histogram/log_histogram_op.hpp"

namespace trialstat::kernels {
namespace {

using namespace cuda_detail;

__constant__ log_histogram_tables d_log_tables = make_log_histogram_tables();

constexpr int sub_histograms = 4;
constexpr std::size_t shared_bytes =
    sizeof(log_histogram_tables) +
    sizeof(uint32_t) * static_cast<std::size_t>(sub_histograms) * log_histogram_num_ranks;
static_assert(sizeof(log_histogram_tables) % alignof(uint32_t) == 0, "the counters after it stay aligned");
// Above the default 48 KiB of dynamic shared memory: the launcher raises the kernel's limit.
static_assert(shared_bytes <= 96 * 1024, "fits sm_70+'s opt-in shared memory per block");

/// Each chunk zeroes and flushes sub_histograms × cells shared counters: a chunk holds at least
/// 4 times as many elements (a power of two ≥ the tile, ≤ 64 Ki).
constexpr int64_t log_chunk_granule = [] {
  int64_t g = tile_elements;
  while (g < 4 * int64_t{sub_histograms} * log_histogram_num_cells && g < max_chunk_elements) g *= 2;
  return g;
}();

template <dtype D, bool Aligned>
__device__ void count_chunk(const unsigned char* bytes, int64_t begin, int64_t end,
                            const log_histogram_lookup& lookup, uint32_t* hist) {
  constexpr int unroll = 4;
  for (int64_t base = begin; base < end; base += int64_t{block_threads} * unroll) {
    int rank[unroll];
#pragma unroll
    for (int k = 0; k < unroll; ++k) {
      const int64_t i = base + static_cast<int64_t>(k) * block_threads + threadIdx.x;
      rank[k] = i < end ? log_histogram_rank_of_element<D, Aligned>(lookup, bytes, i) : -1;
    }
#pragma unroll
    for (int k = 0; k < unroll; ++k) {
      // Warp-aggregated (as histogram_cuda.cu): lanes with the same rank add once. The loop is
      // block-uniform, so all 32 lanes are here together.
      const int cell = rank[k];
      const bool valid = cell >= 0;
      const unsigned peers = __match_any_sync(0xffffffffu, cell);
      if (valid && static_cast<int>(threadIdx.x % 32) == __ffs(static_cast<int>(peers)) - 1) {
        atomicAdd(&hist[cell], static_cast<unsigned>(__popc(peers)));
      }
    }
  }
}

__global__ void __launch_bounds__(block_threads)
    log_histogram_chunks_kernel(device_batch batch, const int64_t* __restrict__ starts,
                                int64_t capacity, int64_t chunk_elements,
                                unsigned long long* __restrict__ cells) {
  extern __shared__ double shared[];
  auto* tables = reinterpret_cast<log_histogram_tables*>(shared);
  auto* sub = reinterpret_cast<uint32_t*>(tables + 1);
  const int64_t total = starts[batch.num_segments];
  if (total > capacity) {  // the batch outgrew the workspace: poison every cell with −1
    const int64_t n = batch.num_segments * log_histogram_num_cells;  // every cell of every row
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * block_threads) {
      cells[i] = ~0ULL;
    }
    return;
  }
  {
    constexpr int words = sizeof(log_histogram_tables) / sizeof(uint32_t);
    const auto* from = reinterpret_cast<const uint32_t*>(&d_log_tables);
    auto* to = reinterpret_cast<uint32_t*>(tables);
    for (int i = threadIdx.x; i < words; i += block_threads) to[i] = from[i];
  }
  const log_histogram_lookup lookup{tables->rank32, tables->first_rank, tables->next_lower};
  uint32_t* mine = sub + (threadIdx.x / 32 % sub_histograms) * log_histogram_num_ranks;
  for (int64_t chunk = blockIdx.x; chunk < total; chunk += gridDim.x) {
    for (int i = threadIdx.x; i < sub_histograms * log_histogram_num_ranks; i += block_threads) {
      sub[i] = 0u;
    }
    __syncthreads();  // tables loaded (first chunk) and counters zeroed
    const int64_t s = find_segment(starts, batch.num_segments, chunk);
    const stats::segment seg = batch.d_segments[s];
    const element_range range = chunk_range(chunk, starts[s], seg.num_elements, chunk_elements);
    const int64_t begin = range.begin;
    const int64_t end = range.end;
    const auto* bytes = reinterpret_cast<const unsigned char*>(batch.d_base) + seg.offset_bytes;
    const bool supported = dispatch_segment(seg.type, bytes, [&](auto tag, auto aligned) {
      count_chunk<decltype(tag)::value, decltype(aligned)::value>(bytes, begin, end, lookup, mine);
    });
    __syncthreads();
    unsigned long long* row = cells + s * log_histogram_num_cells;
    for (int r = threadIdx.x; r < log_histogram_num_ranks; r += block_threads) {
      const int c = log_cell_of_rank(r);  // ranks and cells are both 0 … num_cells − 1
      if (!supported) {  // block-uniform; every chunk of the segment writes the same poison
        row[c] = ~0ULL;
        continue;
      }
      unsigned long long sum = 0;
#pragma unroll
      for (int k = 0; k < sub_histograms; ++k) sum += sub[k * log_histogram_num_ranks + r];
      if (sum != 0) atomicAdd(&row[c], sum);
    }
    __syncthreads();  // the next chunk zeroes the counters again
  }
}

}  // namespace

status launch_log_histograms(const device_batch& batch, int64_t* d_cells, void* d_workspace,
                             std::size_t* workspace_bytes, cudaStream_t stream) noexcept {
  if (workspace_bytes == nullptr || batch.num_segments < 0 || batch.max_total_elements < 0) {
    return status(error_code::invalid_argument,
                  "launch_log_histograms: null workspace size or negative batch sizes");
  }
  workspace_carver carver(d_workspace);
  chunk_plan plan;
  TRIALSTAT_RETURN_IF_ERROR(carve_chunk_plan(carver, batch, log_chunk_granule, 4, plan));
  const int64_t capacity = plan.capacity;
  if (d_workspace == nullptr) {
    *workspace_bytes = carver.used();
    return status::success();
  }
  if (*workspace_bytes < carver.used()) {
    return status(error_code::invalid_argument,
                  "launch_log_histograms: workspace of " + std::to_string(*workspace_bytes) +
                      " bytes, " + std::to_string(carver.used()) + " needed");
  }
  if (batch.num_segments == 0) return status::success();
  if (d_cells == nullptr || batch.d_segments == nullptr) {
    return status(error_code::invalid_argument, "launch_log_histograms: null segments or cells");
  }
  TRIALSTAT_CUDA_TRY(cudaMemsetAsync(
      d_cells, 0,
      static_cast<std::size_t>(batch.num_segments) * log_histogram_num_cells * sizeof(int64_t),
      stream));
  TRIALSTAT_RETURN_IF_ERROR(enqueue_chunk_plan(batch, plan, stream));
  TRIALSTAT_CUDA_TRY(cudaFuncSetAttribute(log_histogram_chunks_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(shared_bytes)));
  int grid = 0;
  TRIALSTAT_RETURN_IF_ERROR(persistent_grid(4, capacity, grid));
  log_histogram_chunks_kernel<<<grid, block_threads, shared_bytes, stream>>>(
      batch, plan.d_starts, capacity, plan.chunk_elements,
      reinterpret_cast<unsigned long long*>(d_cells));
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

status copy_log_histogram_device_tables(log_histogram_tables* h_tables) noexcept {
  if (h_tables == nullptr) {
    return status(error_code::invalid_argument, "copy_log_histogram_device_tables: null output");
  }
  TRIALSTAT_CUDA_TRY(cudaMemcpyFromSymbol(h_tables, d_log_tables, sizeof(log_histogram_tables)));
  return status::success();
}

}  // namespace trialstat::kernels

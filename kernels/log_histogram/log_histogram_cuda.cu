// SPDX-License-Identifier: Apache-2.0
// CUDA log-scale histogram: plan chunks (segmented_cuda.cuh), then a persistent kernel. Each
// block copies the 1549-edge table from constant memory into shared memory once, then per
// chunk (32 or 64 Ki elements, chosen per launch) counts cells into 4 shared sub-histograms (8 warps share them in pairs,
// fewer collisions on the hot bins near 0) and flushes the non-zero cells to the segment's row
// with 64-bit atomics.
#include "kernels/log_histogram/log_histogram_cuda.hpp"

#include "kernels/common/segmented_cuda.cuh"
#include "kernels/log_histogram/log_histogram_op.hpp"

namespace trialstat::kernels {
namespace {

using namespace cuda_detail;

__constant__ log_histogram_edge_table d_log_edges = make_log_histogram_edges();

constexpr int sub_histograms = 4;
constexpr std::size_t shared_bytes =
    sizeof(double) * log_histogram_num_edges +
    sizeof(uint32_t) * static_cast<std::size_t>(sub_histograms) * log_histogram_num_cells;
static_assert(shared_bytes <= 48 * 1024, "fits the default dynamic shared memory limit");

/// Each chunk zeroes and flushes sub_histograms × cells shared counters: a chunk holds at least
/// 4 times as many elements (a power of two ≥ the tile, ≤ 64 Ki).
constexpr int64_t log_chunk_granule = [] {
  int64_t g = tile_elements;
  while (g < 4 * int64_t{sub_histograms} * log_histogram_num_cells && g < max_chunk_elements) g *= 2;
  return g;
}();

template <dtype D, bool Aligned>
__device__ void count_chunk(const unsigned char* bytes, int64_t begin, int64_t end,
                            const double* edges, uint32_t* hist) {
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
      // Warp-aggregated (as histogram_cuda.cu): lanes with the same cell add once. The loop is
      // block-uniform, so all 32 lanes are here together.
      const int cell = valid[k] ? log_histogram_cell(edges, v[k]) : -1;
      const unsigned peers = __match_any_sync(0xffffffffu, cell);
      if (valid[k] && static_cast<int>(threadIdx.x % 32) == __ffs(static_cast<int>(peers)) - 1) {
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
  double* edges = shared;
  auto* sub = reinterpret_cast<uint32_t*>(shared + log_histogram_num_edges);
  const int64_t total = starts[batch.num_segments];
  if (total > capacity) {  // the batch outgrew the workspace: poison every cell with −1
    const int64_t n = batch.num_segments * log_histogram_num_cells;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * block_threads) {
      cells[i] = ~0ULL;
    }
    return;
  }
  for (int i = threadIdx.x; i < log_histogram_num_edges; i += block_threads) {
    edges[i] = d_log_edges.edge[i];
  }
  uint32_t* mine = sub + (threadIdx.x / 32 % sub_histograms) * log_histogram_num_cells;
  for (int64_t chunk = blockIdx.x; chunk < total; chunk += gridDim.x) {
    for (int i = threadIdx.x; i < sub_histograms * log_histogram_num_cells; i += block_threads) {
      sub[i] = 0u;
    }
    __syncthreads();  // edges loaded (first chunk) and counters zeroed
    const int64_t s = find_segment(starts, batch.num_segments, chunk);
    const stats::segment seg = batch.d_segments[s];
    const element_range range = chunk_range(chunk, starts[s], seg.num_elements, chunk_elements);
    const int64_t begin = range.begin;
    const int64_t end = range.end;
    const auto* bytes = reinterpret_cast<const unsigned char*>(batch.d_base) + seg.offset_bytes;
    const bool supported = dispatch_segment(seg.type, bytes, [&](auto tag, auto aligned) {
      count_chunk<decltype(tag)::value, decltype(aligned)::value>(bytes, begin, end, edges, mine);
    });
    __syncthreads();
    unsigned long long* row = cells + s * log_histogram_num_cells;
    for (int c = threadIdx.x; c < log_histogram_num_cells; c += block_threads) {
      if (!supported) {  // block-uniform; every chunk of the segment writes the same poison
        row[c] = ~0ULL;
        continue;
      }
      unsigned long long sum = 0;
#pragma unroll
      for (int k = 0; k < sub_histograms; ++k) sum += sub[k * log_histogram_num_cells + c];
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
  int grid = 0;
  TRIALSTAT_RETURN_IF_ERROR(persistent_grid(4, capacity, grid));
  log_histogram_chunks_kernel<<<grid, block_threads, shared_bytes, stream>>>(
      batch, plan.d_starts, capacity, plan.chunk_elements,
      reinterpret_cast<unsigned long long*>(d_cells));
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

status copy_log_histogram_device_edges(double* h_edges) noexcept {
  if (h_edges == nullptr) {
    return status(error_code::invalid_argument, "copy_log_histogram_device_edges: null output");
  }
  TRIALSTAT_CUDA_TRY(cudaMemcpyFromSymbol(h_edges, d_log_edges,
                                          sizeof(double) * log_histogram_num_edges));
  return status::success();
}

}  // namespace trialstat::kernels

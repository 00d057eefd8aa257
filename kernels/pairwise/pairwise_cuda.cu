// SPDX-License-Identifier: Apache-2.0
// CUDA pairwise statistics: chunks planned over the `previous` segments; each block reduces one
// chunk of element pairs at a time (thread-sequential accumulation, cub::BlockReduce across the
// block), then one warp per pair merges its chunks in a fixed order.
#include "kernels/pairwise/pairwise_cuda.hpp"

#include <cub/block/block_reduce.cuh>

#include "kernels/common/segmented_cuda.cuh"
#include "kernels/pairwise/pairwise_op.hpp"

namespace trialstat::kernels {
namespace {

using namespace cuda_detail;

struct pairwise_args {
  double rtol;
  double atol;
  bool equal_nan;
};

/// Typed loader: both tensors have dtype D. Aligned: both start aligned (plain loads); else
/// aligned words and a funnel shift per element (load_bits_unaligned, also right for an aligned
/// side) — payloads of real event files sit at arbitrary offsets, so this is the common case
/// there, and it needs no per-element dtype switch.
template <dtype D, bool Aligned>
struct typed_pair_loader {
  __device__ __forceinline__ double a(const unsigned char* p, int64_t i) const {
    return load_as_double<D, Aligned>(p, i);
  }
  __device__ __forceinline__ double b(const unsigned char* p, int64_t i) const {
    return load_as_double<D, Aligned>(p, i);
  }
};

/// Mixed dtypes (a tensor whose dtype changed between steps): a per-element dtype switch with
/// unaligned loads. Uniform across the block, so it costs instructions, not divergence; it
/// keeps the number of kernel instantiations linear in the dtypes.
struct generic_pair_loader {
  dtype type_a;
  dtype type_b;
  __device__ static double load(dtype t, const unsigned char* p, int64_t i) {
    double v = 0.0;
    visit_real_dtype(t, [&](auto tag) { v = load_as_double<decltype(tag)::value, false>(p, i); });
    return v;
  }
  __device__ __forceinline__ double a(const unsigned char* p, int64_t i) const {
    return load(type_a, p, i);
  }
  __device__ __forceinline__ double b(const unsigned char* p, int64_t i) const {
    return load(type_b, p, i);
  }
};

/// This thread's pairs in [begin, end).
template <class Loader>
__device__ pairwise_state thread_chunk_pairwise(const Loader& loader, const unsigned char* a_bytes,
                                                const unsigned char* b_bytes, int64_t begin,
                                                int64_t end, const pairwise_args& args) {
  pairwise_state acc = pairwise_identity();
  constexpr int unroll = 4;
  for (int64_t base = begin; base < end; base += int64_t{block_threads} * unroll) {
    double a[unroll];
    double b[unroll];
    bool valid[unroll];
#pragma unroll
    for (int k = 0; k < unroll; ++k) {
      const int64_t i = base + static_cast<int64_t>(k) * block_threads + threadIdx.x;
      valid[k] = i < end;
      a[k] = valid[k] ? loader.a(a_bytes, i) : 0.0;
      b[k] = valid[k] ? loader.b(b_bytes, i) : 0.0;
    }
#pragma unroll
    for (int k = 0; k < unroll; ++k) {
      if (valid[k]) accumulate_pair(acc, a[k], b[k], args.rtol, args.atol, args.equal_nan);
    }
  }
  return acc;
}

__global__ void __launch_bounds__(block_threads)
    pairwise_chunks_kernel(device_batch previous, device_batch current,
                           const int64_t* __restrict__ starts, int64_t capacity,
                           int64_t chunk_elements, pairwise_args args,
                           pairwise_state* __restrict__ partials) {
  using block_reduce = cub::BlockReduce<pairwise_state, block_threads>;
  __shared__ typename block_reduce::TempStorage temp;
  const int64_t total = starts[previous.num_segments];
  if (total > capacity) return;
  for (int64_t chunk = blockIdx.x; chunk < total; chunk += gridDim.x) {
    const int64_t s = find_segment(starts, previous.num_segments, chunk);
    const stats::segment sa = previous.d_segments[s];
    const stats::segment sb = current.d_segments[s];
    const element_range range = chunk_range(chunk, starts[s], sa.num_elements, chunk_elements);
    const int64_t begin = range.begin;
    const int64_t end = range.end;
    const auto* a_bytes = reinterpret_cast<const unsigned char*>(previous.d_base) + sa.offset_bytes;
    const auto* b_bytes = reinterpret_cast<const unsigned char*>(current.d_base) + sb.offset_bytes;
    pairwise_state mine = pairwise_identity();
    bool supported = sa.num_elements == sb.num_elements && is_supported_dtype(sa.type) &&
                     is_supported_dtype(sb.type);
    if (supported) {
      bool typed = false;
      if (sa.type == sb.type) {
        visit_real_dtype(sa.type, [&](auto tag) {
          constexpr dtype D = decltype(tag)::value;
          if (is_element_aligned<D>(a_bytes) && is_element_aligned<D>(b_bytes)) {
            mine = thread_chunk_pairwise(typed_pair_loader<D, true>{}, a_bytes, b_bytes, begin,
                                         end, args);
          } else {
            mine = thread_chunk_pairwise(typed_pair_loader<D, false>{}, a_bytes, b_bytes, begin,
                                         end, args);
          }
          typed = true;
        });
      }
      if (!typed) {
        mine = thread_chunk_pairwise(generic_pair_loader{sa.type, sb.type}, a_bytes, b_bytes,
                                     begin, end, args);
      }
    }
    const pairwise_state block_total = block_reduce(temp).Reduce(mine, merge_pairwise_fn{});
    if (threadIdx.x == 0) partials[chunk] = supported ? block_total : pairwise_poison();
    __syncthreads();
  }
}

__global__ void __launch_bounds__(block_threads)
    pairwise_merge_kernel(int64_t num_pairs, const int64_t* __restrict__ starts, int64_t capacity,
                          const pairwise_state* __restrict__ partials,
                          stats::pairwise* __restrict__ out) {
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (warp >= num_pairs) return;
  const int64_t total = starts[num_pairs];
  pairwise_state acc = pairwise_identity();
  if (total <= capacity) {
    for (int64_t c = starts[warp] + lane; c < starts[warp + 1]; c += 32) {
      acc = merge_pairwise(acc, partials[c]);
    }
  }
  acc = warp_merge(acc, merge_pairwise_fn{});
  if (lane == 0) {
    if (total > capacity) acc = pairwise_poison();  // merge_pairwise keeps a chunk's poison
    store_pairwise(acc, &out[warp]);
  }
}

}  // namespace

status launch_pairwise(const device_batch& previous, const device_batch& current,
                       const stats::allclose_params& params, stats::pairwise* d_out,
                       void* d_workspace, std::size_t* workspace_bytes,
                       cudaStream_t stream) noexcept {
  if (workspace_bytes == nullptr || previous.num_segments < 0 ||
      previous.max_total_elements < 0) {
    return status(error_code::invalid_argument,
                  "launch_pairwise: null workspace size or negative batch sizes");
  }
  if (previous.num_segments != current.num_segments) {
    return status(error_code::invalid_argument,
                  "launch_pairwise: " + std::to_string(previous.num_segments) +
                      " previous segments but " + std::to_string(current.num_segments) +
                      " current segments");
  }
  workspace_carver carver(d_workspace);
  chunk_plan plan;
  TRIALSTAT_RETURN_IF_ERROR(carve_chunk_plan(carver, previous, tile_elements, 8, plan));
  const int64_t capacity = plan.capacity;
  pairwise_state* partials = carver.take<pairwise_state>(static_cast<std::size_t>(capacity));
  if (d_workspace == nullptr) {
    *workspace_bytes = carver.used();
    return status::success();
  }
  if (*workspace_bytes < carver.used()) {
    return status(error_code::invalid_argument,
                  "launch_pairwise: workspace of " + std::to_string(*workspace_bytes) +
                      " bytes, " + std::to_string(carver.used()) + " needed");
  }
  if (previous.num_segments == 0) return status::success();
  if (d_out == nullptr || previous.d_segments == nullptr || current.d_segments == nullptr) {
    return status(error_code::invalid_argument, "launch_pairwise: null segments or output");
  }
  TRIALSTAT_RETURN_IF_ERROR(enqueue_chunk_plan(previous, plan, stream));
  int grid = 0;
  TRIALSTAT_RETURN_IF_ERROR(persistent_grid(8, capacity, grid));
  const pairwise_args args{params.rtol, params.atol, params.equal_nan};
  pairwise_chunks_kernel<<<grid, block_threads, 0, stream>>>(
      previous, current, plan.d_starts, capacity, plan.chunk_elements, args, partials);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  const int64_t merge_blocks = (previous.num_segments * 32 + block_threads - 1) / block_threads;
  pairwise_merge_kernel<<<static_cast<unsigned>(merge_blocks), block_threads, 0, stream>>>(
      previous.num_segments, plan.d_starts, capacity, partials, d_out);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
// CUDA per-channel sums: a persistent grid walks the elements; element i belongs to channel
// (i / inner) % channels. When all 32 lanes of a warp hold the same channel (inner ≥ 32 makes
// that the common case, e.g. NCHW images) the warp reduces first and lane 0 adds once; otherwise
// each lane adds its own element. Adds go to shared-memory accumulators (≤ 512 channels) that
// are flushed to the output once per block, or straight to the output.
#include "kernels/channel_sums/channel_sums_cuda.hpp"

#include <string>

#include "kernels/common/segmented_cuda.cuh"

namespace trialstat::kernels {
namespace {

using namespace cuda_detail;

constexpr int64_t max_shared_channels = 512;

struct channel_pointers {
  double* sum;
  unsigned long long* count;
  unsigned long long* nan_count;
  unsigned long long* pos_inf_count;
  unsigned long long* neg_inf_count;
};

__device__ __forceinline__ void add_state(const channel_pointers& p, int64_t c,
                                          const channel_state& s) {
  if (s.count == 0) return;
  if (s.sum != 0.0) atomicAdd(&p.sum[c], s.sum);
  atomicAdd(&p.count[c], static_cast<unsigned long long>(s.count));
  if (s.nan_count != 0) atomicAdd(&p.nan_count[c], static_cast<unsigned long long>(s.nan_count));
  if (s.pos_inf_count != 0) {
    atomicAdd(&p.pos_inf_count[c], static_cast<unsigned long long>(s.pos_inf_count));
  }
  if (s.neg_inf_count != 0) {
    atomicAdd(&p.neg_inf_count[c], static_cast<unsigned long long>(s.neg_inf_count));
  }
}

/// The output (a channel_state array) as separate field pointers for atomics.
__device__ __forceinline__ channel_pointers global_pointers(channel_state* states, int64_t c0) {
  // channel_state is {double, int64 ×4}: address each field of element c0 and stride by the
  // struct size through the helpers below.
  return channel_pointers{&states[c0].sum, reinterpret_cast<unsigned long long*>(&states[c0].count),
                          reinterpret_cast<unsigned long long*>(&states[c0].nan_count),
                          reinterpret_cast<unsigned long long*>(&states[c0].pos_inf_count),
                          reinterpret_cast<unsigned long long*>(&states[c0].neg_inf_count)};
}

__device__ __forceinline__ void add_state_global(channel_state* states, int64_t c,
                                                 const channel_state& s) {
  add_state(global_pointers(states, c), 0, s);
}

__global__ void __launch_bounds__(block_threads)
    channel_sums_kernel(const std::byte* data, dtype type, int64_t n, int64_t channels,
                        int64_t inner, channel_state* states) {
  __shared__ double s_sum[max_shared_channels];
  __shared__ unsigned long long s_count[max_shared_channels];
  __shared__ unsigned long long s_nan[max_shared_channels];
  __shared__ unsigned long long s_pinf[max_shared_channels];
  __shared__ unsigned long long s_ninf[max_shared_channels];
  const bool use_shared = channels <= max_shared_channels;
  if (use_shared) {
    for (int64_t c = threadIdx.x; c < channels; c += blockDim.x) {
      s_sum[c] = 0.0;
      s_count[c] = s_nan[c] = s_pinf[c] = s_ninf[c] = 0ULL;
    }
    __syncthreads();
  }
  const channel_pointers shared{s_sum, s_count, s_nan, s_pinf, s_ninf};
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * block_threads;
  // Every lane of a warp runs the same number of iterations (warp-uniform trip count), so the
  // shuffles below always see the full warp.
  const int64_t warp_first =
      static_cast<int64_t>(blockIdx.x) * block_threads + (threadIdx.x - lane);
  dispatch_segment(type, bytes, [&](auto tag, auto aligned) {
    constexpr dtype D = decltype(tag)::value;
    constexpr bool A = decltype(aligned)::value;
    for (int64_t base = warp_first; base < n; base += stride) {
      const int64_t i = base + lane;
      const bool valid = i < n;
      channel_state mine = channel_identity();
      int64_t c = -1;
      if (valid) {
        c = (i / inner) % channels;
        accumulate_channel(mine, load_as_double<D, A>(bytes, i));
      }
      const int64_t c0 = __shfl_sync(0xffffffffu, c, 0);
      if (__all_sync(0xffffffffu, !valid || c == c0)) {
        const channel_state total = warp_merge(mine, [](const channel_state& a,
                                                        const channel_state& b) {
          return merge_channel(a, b);
        });
        if (lane == 0) {
          if (use_shared) {
            add_state(shared, c0, total);
          } else {
            add_state_global(states, c0, total);
          }
        }
      } else if (valid) {
        if (use_shared) {
          add_state(shared, c, mine);
        } else {
          add_state_global(states, c, mine);
        }
      }
    }
  });
  if (use_shared) {
    __syncthreads();
    for (int64_t c = threadIdx.x; c < channels; c += blockDim.x) {
      const channel_state s{s_sum[c], static_cast<int64_t>(s_count[c]),
                            static_cast<int64_t>(s_nan[c]), static_cast<int64_t>(s_pinf[c]),
                            static_cast<int64_t>(s_ninf[c])};
      add_state_global(states, c, s);
    }
  }
}

}  // namespace

status launch_channel_sums(const std::byte* d_data, dtype type, int64_t outer, int64_t channels,
                           int64_t inner, channel_state* d_states, cudaStream_t stream) noexcept {
  if (outer < 0 || channels < 0 || inner < 0) {
    return status(error_code::invalid_argument, "launch_channel_sums: negative extents");
  }
  if (!is_supported_dtype(type)) {
    return status(error_code::unsupported_dtype, "launch_channel_sums: dtype " +
                                                     std::string(dtype_name(type)) +
                                                     " is not a real numeric type");
  }
  if (channels == 0) return status::success();
  const int64_t n = outer * channels * inner;
  if (d_states == nullptr || (n > 0 && d_data == nullptr)) {
    return status(error_code::invalid_argument, "launch_channel_sums: null data or output");
  }
  TRIALSTAT_CUDA_TRY(cudaMemsetAsync(
      d_states, 0, static_cast<std::size_t>(channels) * sizeof(channel_state), stream));
  if (n == 0) return status::success();
  int grid = 0;
  TRIALSTAT_RETURN_IF_ERROR(persistent_grid(4, (n + block_threads - 1) / block_threads, grid));
  channel_sums_kernel<<<grid, block_threads, 0, stream>>>(d_data, type, n, channels, inner,
                                                          d_states);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

}  // namespace trialstat::kernels

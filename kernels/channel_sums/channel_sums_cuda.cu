// SPDX-License-Identifier: Apache-2.0
// CUDA per-channel sums: a persistent grid walks the elements; element i belongs to channel
// (i / inner) % channels. When all 32 lanes of a warp hold the same channel (inner ≥ 32 makes
// that the common case, e.g. NCHW images) the warp reduces first and lane 0 adds once; otherwise
// each lane adds its own element. Adds go to shared-memory accumulators (≤ 512 channels) that
// are flushed to the output once per block, or straight to the output.
#include "kernels/channel_sums/channel_sums_cuda.hpp"

#include <string>

#include "kernels/common/segmented_cuda.cuh"
#include "kernels/common/tensor_task.hpp"

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

/// Shared-memory accumulators of one block (channels ≤ max_shared_channels).
struct shared_channels {
  double sum[max_shared_channels];
  unsigned long long count[max_shared_channels];
  unsigned long long nan_count[max_shared_channels];
  unsigned long long pos_inf_count[max_shared_channels];
  unsigned long long neg_inf_count[max_shared_channels];
};

/// One tensor's channel sums with this block as block `block` of `blocks` (block-uniform
/// arguments: every thread of the block calls it, it synchronises the block).
__device__ __forceinline__ void channel_sums_block(const std::byte* data, dtype type, int64_t n, int64_t channels,
                                                   int64_t inner, channel_state* states, shared_channels& sh,
                                                   int64_t block, int64_t blocks) {
  const bool use_shared = channels <= max_shared_channels;
  if (use_shared) {
    for (int64_t c = threadIdx.x; c < channels; c += blockDim.x) {
      sh.sum[c] = 0.0;
      sh.count[c] = sh.nan_count[c] = sh.pos_inf_count[c] = sh.neg_inf_count[c] = 0ULL;
    }
    __syncthreads();
  }
  const channel_pointers shared{sh.sum, sh.count, sh.nan_count, sh.pos_inf_count, sh.neg_inf_count};
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t stride = blocks * block_threads;
  // Every lane of a warp runs the same number of iterations (warp-uniform trip count), so the
  // shuffles below always see the full warp.
  const int64_t warp_first = block * block_threads + (threadIdx.x - lane);
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
      const channel_state st{sh.sum[c], static_cast<int64_t>(sh.count[c]), static_cast<int64_t>(sh.nan_count[c]),
                             static_cast<int64_t>(sh.pos_inf_count[c]), static_cast<int64_t>(sh.neg_inf_count[c])};
      add_state_global(states, c, st);
    }
    __syncthreads();  // the accumulators are reused by the block's next task
  }
}

__global__ void __launch_bounds__(block_threads)
    channel_sums_kernel(const std::byte* data, dtype type, int64_t n, int64_t channels,
                        int64_t inner, channel_state* states) {
  __shared__ shared_channels sh;
  channel_sums_block(data, type, n, channels, inner, states, sh, blockIdx.x, gridDim.x);
}

/// Tasks along y (a block row per task, striding over the tasks), elements along x.
__global__ void __launch_bounds__(block_threads)
    channel_sums_tasks_kernel(const std::byte* base, const tensor_task* tasks, int64_t num_tasks,
                              channel_state* states) {
  __shared__ shared_channels sh;
  for (int64_t t = blockIdx.y; t < num_tasks; t += gridDim.y) {
    const tensor_task task = tasks[t];
    if (task.channels <= 0 || task.inner <= 0) continue;  // block-uniform
    channel_sums_block(base + task.offset_bytes, task.type, task.num_elements, task.channels, task.inner,
                       states + task.out_first, sh, blockIdx.x, gridDim.x);
  }
}

}  // namespace

status launch_channel_sums_tasks(const std::byte* d_base, std::span<const tensor_task> tasks,
                                 const tensor_task* d_tasks, channel_state* d_states, int64_t num_states,
                                 cudaStream_t stream) noexcept {
  int64_t largest = 0;
  for (const tensor_task& t : tasks) {
    const bool layout = t.channels > 0 && t.inner > 0 && t.num_elements >= 0 &&
                        t.num_elements % (t.channels * t.inner) == 0;
    if (!layout || t.out_first < 0 || t.out_first + t.channels > num_states) {
      return status(error_code::invalid_argument,
                    "launch_channel_sums_tasks: a task whose elements are not [outer, channels, inner] or whose "
                    "channels end past " + std::to_string(num_states));
    }
    if (!is_supported_dtype(t.type)) {
      return status(error_code::unsupported_dtype, "launch_channel_sums_tasks: dtype " +
                                                       std::string(dtype_name(t.type)) + " is not a real numeric type");
    }
    largest = t.num_elements > largest ? t.num_elements : largest;
  }
  if (num_states == 0) return status::success();
  if (d_states == nullptr || (!tasks.empty() && (d_tasks == nullptr || d_base == nullptr))) {
    return status(error_code::invalid_argument, "launch_channel_sums_tasks: null base, tasks or output");
  }
  TRIALSTAT_CUDA_TRY(
      cudaMemsetAsync(d_states, 0, static_cast<std::size_t>(num_states) * sizeof(channel_state), stream));
  if (tasks.empty() || largest == 0) return status::success();
  dim3 grid;
  TRIALSTAT_RETURN_IF_ERROR(task_grid(4, largest, static_cast<int64_t>(tasks.size()), grid));
  channel_sums_tasks_kernel<<<grid, block_threads, 0, stream>>>(d_base, d_tasks, static_cast<int64_t>(tasks.size()),
                                                                d_states);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

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

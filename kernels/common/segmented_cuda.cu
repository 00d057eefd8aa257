// SPDX-License-Identifier: Apache-2.0
// Chunk planning shared by the segmented launchers (see segmented_cuda.cuh).
#include "kernels/common/segmented_cuda.cuh"

namespace trialstat::kernels::cuda_detail {
namespace {

// counts[i] = chunks_of(n_i) for i < n; counts[n] = 0, so that the exclusive scan's last entry
// is the total number of chunks.
__global__ void count_chunks_kernel(const stats::segment* segments, int64_t n,
                                    int64_t chunk_elements, int64_t* counts) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    counts[i] = chunks_of(segments[i].num_elements, chunk_elements);
  } else if (i == n) {
    counts[i] = 0;
  }
}

}  // namespace

status carve_chunk_plan(workspace_carver& carver, const device_batch& batch, int64_t granule,
                        int per_sm, chunk_plan& plan) {
  int64_t blocks = 1;
  TRIALSTAT_RETURN_IF_ERROR(resident_blocks(per_sm, blocks));
  plan.chunk_elements = choose_chunk_elements(batch.max_total_elements, blocks, granule);
  plan.capacity = max_chunks(batch.max_total_elements, batch.num_segments, plan.chunk_elements);
  const auto items = static_cast<std::size_t>(batch.num_segments + 1);
  plan.d_counts = carver.take<int64_t>(items);
  plan.d_starts = carver.take<int64_t>(items);
  std::size_t temp_bytes = 0;
  TRIALSTAT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes,
                                                   static_cast<const int64_t*>(nullptr),
                                                   static_cast<int64_t*>(nullptr),
                                                   static_cast<int64_t>(items)));
  plan.scan_temp_bytes = temp_bytes;
  plan.d_scan_temp = carver.take<std::byte>(temp_bytes);
  return status::success();
}

status enqueue_chunk_plan(const device_batch& batch, const chunk_plan& plan, cudaStream_t stream) {
  const int64_t items = batch.num_segments + 1;
  const auto blocks = static_cast<unsigned>((items + block_threads - 1) / block_threads);
  count_chunks_kernel<<<blocks, block_threads, 0, stream>>>(batch.d_segments, batch.num_segments,
                                                            plan.chunk_elements, plan.d_counts);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  std::size_t temp_bytes = plan.scan_temp_bytes;
  TRIALSTAT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(plan.d_scan_temp, temp_bytes,
                                                   static_cast<const int64_t*>(plan.d_counts),
                                                   plan.d_starts, items, stream));
  return status::success();
}

status resident_blocks(int per_sm, int64_t& blocks) {
  int device = 0;
  int sms = 0;
  TRIALSTAT_CUDA_TRY(cudaGetDevice(&device));
  TRIALSTAT_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  blocks = static_cast<int64_t>(per_sm > 0 ? per_sm : 1) * (sms > 0 ? sms : 1);
  return status::success();
}

status persistent_grid(int per_sm, int64_t work, int& grid) {
  int64_t wanted = 1;
  TRIALSTAT_RETURN_IF_ERROR(resident_blocks(per_sm, wanted));
  grid = static_cast<int>(work < wanted ? (work > 0 ? work : 1) : wanted);
  return status::success();
}

status task_grid(int per_sm, int64_t largest_task_elements, int64_t num_tasks, dim3& grid) {
  int64_t resident = 1;
  TRIALSTAT_RETURN_IF_ERROR(resident_blocks(per_sm, resident));
  const task_grid_shape shape = choose_task_grid(resident, largest_task_elements, num_tasks, block_threads);
  grid = dim3(static_cast<unsigned>(shape.x), static_cast<unsigned>(shape.y), 1);
  return status::success();
}

}  // namespace trialstat::kernels::cuda_detail

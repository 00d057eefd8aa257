// SPDX-License-Identifier: Apache-2.0
// Chunk planning shared by the segmented launchers (see segmented_cuda.cuh).
#include "kernels/common/segmented_cuda.cuh"

namespace trialstat::kernels::cuda_detail {
namespace {

// counts[i] = ceil(n_i / chunk_elements) for i < n; counts[n] = 0, so that the exclusive scan's
// last entry is the total number of chunks.
__global__ void count_chunks_kernel(const stats::segment* segments, int64_t n, int64_t* counts) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const int64_t elements = segments[i].num_elements;
    counts[i] = elements > 0 ? (elements + chunk_elements - 1) / chunk_elements : 0;
  } else if (i == n) {
    counts[i] = 0;
  }
}

}  // namespace

status carve_chunk_plan(workspace_carver& carver, int64_t num_segments, chunk_plan& plan) {
  const auto items = static_cast<std::size_t>(num_segments + 1);
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
                                                            plan.d_counts);
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  std::size_t temp_bytes = plan.scan_temp_bytes;
  TRIALSTAT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(plan.d_scan_temp, temp_bytes,
                                                   static_cast<const int64_t*>(plan.d_counts),
                                                   plan.d_starts, items, stream));
  return status::success();
}

status persistent_grid(int per_sm, int64_t work, int& grid) {
  int device = 0;
  int sms = 0;
  TRIALSTAT_CUDA_TRY(cudaGetDevice(&device));
  TRIALSTAT_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int64_t wanted = static_cast<int64_t>(per_sm) * (sms > 0 ? sms : 1);
  grid = static_cast<int>(work < wanted ? (work > 0 ? work : 1) : wanted);
  return status::success();
}

}  // namespace trialstat::kernels::cuda_detail

// SPDX-License-Identifier: Apache-2.0
// CUDA per-node axis-0 counts: thread j of the grid's x extent owns node j and walks the rows
// of its y slice (consecutive threads read consecutive bytes of a row: coalesced). With more
// than one slice, slices add their counts with 64-bit atomics (exact).
#include "kernels/axis_counts/axis_counts_cuda.hpp"

#include <string>

#include "kernels/axis_counts/axis_counts_op.hpp"
#include "kernels/common/segmented_cuda.cuh"

namespace trialstat::kernels {
namespace {

using namespace cuda_detail;

template <dtype D, bool Aligned>
__device__ int64_t count_node(const unsigned char* bytes, int64_t nodes, int64_t node,
                              int64_t row_begin, int64_t row_end, const axis0_test& t) {
  int64_t hits = 0;
  for (int64_t r = row_begin; r < row_end; ++r) {
    hits += axis0_hit(t, load_as_double<D, Aligned>(bytes, r * nodes + node)) ? 1 : 0;
  }
  return hits;
}

__global__ void __launch_bounds__(block_threads)
    axis0_counts_kernel(const std::byte* data, dtype type, int64_t batch, int64_t nodes,
                        int64_t rows_per_slice, axis0_test t, unsigned long long* counts) {
  const int64_t node = static_cast<int64_t>(blockIdx.x) * block_threads + threadIdx.x;
  if (node >= nodes) return;
  const int64_t row_begin = static_cast<int64_t>(blockIdx.y) * rows_per_slice;
  const int64_t row_end = row_begin + rows_per_slice < batch ? row_begin + rows_per_slice : batch;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  int64_t hits = 0;
  dispatch_segment(type, bytes, [&](auto tag, auto aligned) {
    hits = count_node<decltype(tag)::value, decltype(aligned)::value>(bytes, nodes, node,
                                                                      row_begin, row_end, t);
  });
  if (gridDim.y == 1) {
    counts[node] = static_cast<unsigned long long>(hits);
  } else if (hits != 0) {
    atomicAdd(&counts[node], static_cast<unsigned long long>(hits));
  }
}

}  // namespace

status launch_axis0_counts(const std::byte* d_data, dtype type, int64_t batch, int64_t nodes,
                           const stats::axis0_predicate& predicate, int64_t* d_counts,
                           cudaStream_t stream) noexcept {
  if (batch < 0 || nodes < 0) {
    return status(error_code::invalid_argument, "launch_axis0_counts: negative batch or nodes");
  }
  if (!is_supported_dtype(type)) {
    return status(error_code::unsupported_dtype,
                  "launch_axis0_counts: dtype " + std::string(dtype_name(type)) +
                      " is not a real numeric type");
  }
  if (nodes == 0) return status::success();
  if (d_counts == nullptr || (batch > 0 && d_data == nullptr)) {
    return status(error_code::invalid_argument, "launch_axis0_counts: null data or counts");
  }
  const int64_t x_blocks = (nodes + block_threads - 1) / block_threads;
  if (x_blocks > 0x7fffffff) {
    return status(error_code::invalid_argument, "launch_axis0_counts: too many nodes");
  }
  // Enough blocks to fill the device: split rows when the node extent alone is too narrow.
  int wanted = 0;
  TRIALSTAT_RETURN_IF_ERROR(persistent_grid(8, int64_t{1} << 40, wanted));
  int64_t slices = (wanted + x_blocks - 1) / x_blocks;
  const int64_t min_rows_per_slice = 64;
  const int64_t max_slices = (batch + min_rows_per_slice - 1) / min_rows_per_slice;
  if (slices > max_slices) slices = max_slices;
  if (slices > 65535) slices = 65535;
  if (slices < 1) slices = 1;
  const int64_t rows_per_slice = batch > 0 ? (batch + slices - 1) / slices : 0;
  if (slices > 1 || batch == 0) {
    TRIALSTAT_CUDA_TRY(cudaMemsetAsync(d_counts, 0,
                                       static_cast<std::size_t>(nodes) * sizeof(int64_t), stream));
  }
  if (batch == 0) return status::success();
  const dim3 grid(static_cast<unsigned>(x_blocks), static_cast<unsigned>(slices));
  axis0_counts_kernel<<<grid, block_threads, 0, stream>>>(
      d_data, type, batch, nodes, rows_per_slice, make_axis0_test(predicate),
      reinterpret_cast<unsigned long long*>(d_counts));
  TRIALSTAT_CUDA_CHECK_LAUNCH(stream);
  return status::success();
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
// CPU twin of the per-channel sums. Tasks are (row group g, channel c): rows o of the group, in
// order, contribute their `inner` contiguous elements of channel c. A row group holds about
// cpu_chunk_elements elements per channel, so the partial results number about n / 64 Ki.
#include "kernels/channel_sums/channel_sums_cpu.hpp"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "kernels/channel_sums/channel_sums_op.hpp"
#include "kernels/common/cpu_parallel.hpp"

namespace trialstat::kernels {
namespace {

struct merge_channel_fn {
  channel_state operator()(const channel_state& a, const channel_state& b) const {
    return merge_channel(a, b);
  }
};

template <dtype D>
channel_state sum_task(const unsigned char* bytes, int64_t channels, int64_t inner, int64_t c,
                       int64_t row_begin, int64_t row_end) {
  ordered_tree_merger<channel_state, merge_channel_fn> merger{merge_channel_fn{}};
  channel_state block = channel_identity();
  int64_t in_block = 0;
  for (int64_t o = row_begin; o < row_end; ++o) {
    const int64_t base = (o * channels + c) * inner;
    for (int64_t i = 0; i < inner; ++i) {
      accumulate_channel(block, load_as_double<D, false>(bytes, base + i));
      if (++in_block == cpu_block_elements) {
        merger.push(block);
        block = channel_identity();
        in_block = 0;
      }
    }
  }
  if (in_block > 0) merger.push(block);
  return merger.finish(channel_identity());
}

}  // namespace

result<stats::channel_sums> compute_channel_sums_cpu(const tensor_view& tensor, int64_t axis,
                                                     int64_t outer, int64_t channels,
                                                     int64_t inner) noexcept {
  try {
    stats::channel_sums out;
    out.axis = axis;
    const auto c_size = static_cast<std::size_t>(channels);
    out.sum.assign(c_size, 0.0);
    out.count.assign(c_size, 0);
    out.nan_count.assign(c_size, 0);
    out.pos_inf_count.assign(c_size, 0);
    out.neg_inf_count.assign(c_size, 0);
    if (channels == 0 || outer == 0 || inner == 0) return out;
    const int64_t rows_per_group = std::max<int64_t>(1, cpu_chunk_elements / inner);
    const int64_t groups = (outer + rows_per_group - 1) / rows_per_group;
    std::vector<channel_state> partial(static_cast<std::size_t>(groups * channels));
    const auto* bytes = reinterpret_cast<const unsigned char*>(tensor.data);
    visit_real_dtype(tensor.type, [&](auto tag) {
      constexpr dtype D = decltype(tag)::value;
      cpu_parallel_for(groups * channels, [&](int64_t task) {
        const int64_t g = task / channels;
        const int64_t c = task % channels;
        const int64_t row_begin = g * rows_per_group;
        const int64_t row_end = std::min(outer, row_begin + rows_per_group);
        partial[static_cast<std::size_t>(task)] =
            sum_task<D>(bytes, channels, inner, c, row_begin, row_end);
      });
    });
    cpu_parallel_for(channels, [&](int64_t c) {
      ordered_tree_merger<channel_state, merge_channel_fn> merger{merge_channel_fn{}};
      for (int64_t g = 0; g < groups; ++g) merger.push(partial[static_cast<std::size_t>(g * channels + c)]);
      const channel_state s = merger.finish(channel_identity());
      const auto i = static_cast<std::size_t>(c);
      out.sum[i] = s.sum;
      out.count[i] = s.count;
      out.nan_count[i] = s.nan_count;
      out.pos_inf_count[i] = s.pos_inf_count;
      out.neg_inf_count[i] = s.neg_inf_count;
    });
    return out;
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory, "compute_channel_sums: cannot allocate partial sums for " +
                                                 std::to_string(channels) + " channels");
  }
}

}  // namespace trialstat::kernels

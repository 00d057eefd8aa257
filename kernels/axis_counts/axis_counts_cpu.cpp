// SPDX-License-Identifier: Apache-2.0
// CPU twin of the per-node axis-0 counts. Rows are read contiguously (C order): a block of
// nodes of one row is converted to float64 and its hits are added to the node counters.
// Wide tensors split the nodes between threads; narrow-and-tall ones split the batch and add
// per-thread rows of counters at the end (integers: the result is exact in any order).
#include "kernels/axis_counts/axis_counts_cpu.hpp"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "kernels/axis_counts/axis_counts_op.hpp"
#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/cpu_validate.hpp"

namespace trialstat::kernels {
namespace {

constexpr int64_t node_block = 1024;

/// counts[j - node_begin] += hits of rows [row_begin, row_end), nodes [node_begin, node_end).
template <dtype D>
void count_rect(const unsigned char* bytes, int64_t nodes, int64_t row_begin, int64_t row_end,
                int64_t node_begin, int64_t node_end, const axis0_test& t, int64_t* counts) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const unsigned char* row = bytes + (r * nodes + node_begin) * element_size_v<D>;
    const int64_t width = node_end - node_begin;
    for (int64_t j = 0; j < width; ++j) {
      counts[j] += axis0_hit(t, load_as_double<D, false>(row, j)) ? 1 : 0;
    }
  }
}

void count_rect_any(const tensor_view& v, int64_t nodes, int64_t row_begin, int64_t row_end,
                    int64_t node_begin, int64_t node_end, const axis0_test& t, int64_t* counts) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data);
  visit_real_dtype(v.type, [&](auto tag) {
    count_rect<decltype(tag)::value>(bytes, nodes, row_begin, row_end, node_begin, node_end, t,
                                     counts);
  });
}

}  // namespace

result<stats::axis0_counts> count_along_axis0_cpu(const tensor_view& tensor,
                                                  const stats::axis0_predicate& predicate) noexcept {
  int64_t batch = 0;
  int64_t nodes = 0;
  if (!axis0_layout(tensor.shape.data(), tensor.shape.size(), tensor.num_elements, batch, nodes)) {
    return status(error_code::invalid_argument,
                  "count_along_axis0: shape of rank " + std::to_string(tensor.shape.size()) +
                      " does not describe " + std::to_string(tensor.num_elements) + " elements");
  }
  const stats::segment seg{0, tensor.num_elements, tensor.type};
  TRIALSTAT_RETURN_IF_ERROR(validate_segments(tensor.data, {&seg, 1}, "count_along_axis0"));
  try {
    stats::axis0_counts out;
    out.batch = batch;
    out.per_node.assign(static_cast<std::size_t>(nodes), 0);
    if (batch == 0 || nodes == 0) return out;
    const axis0_test t = make_axis0_test(predicate);
    const int64_t node_blocks = (nodes + node_block - 1) / node_block;
    // Enough node blocks to keep the team busy, or too few rows to be worth splitting: split
    // nodes. Otherwise split rows into fixed groups with private counters.
    // At most 64 row groups of ≥ 256 rows: partial counters stay below 64 × 16 Ki × 8 bytes.
    const int64_t row_groups = std::min<int64_t>(64, (batch + 255) / 256);
    const int64_t rows_per_group = (batch + row_groups - 1) / row_groups;
    if (node_blocks >= 16 || row_groups <= 1) {
      cpu_parallel_for(node_blocks, [&](int64_t k) {
        const int64_t begin = k * node_block;
        const int64_t end = std::min(nodes, begin + node_block);
        count_rect_any(tensor, nodes, 0, batch, begin, end, t, out.per_node.data() + begin);
      });
    } else {
      std::vector<int64_t> partial(static_cast<std::size_t>(row_groups * nodes), 0);
      cpu_parallel_for(row_groups, [&](int64_t g) {
        const int64_t r0 = g * rows_per_group;
        const int64_t r1 = std::min(batch, r0 + rows_per_group);
        count_rect_any(tensor, nodes, r0, r1, 0, nodes, t, partial.data() + g * nodes);
      });
      for (int64_t g = 0; g < row_groups; ++g) {
        for (int64_t j = 0; j < nodes; ++j) out.per_node[static_cast<std::size_t>(j)] += partial[static_cast<std::size_t>(g * nodes + j)];
      }
    }
    return out;
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "count_along_axis0: cannot allocate " + std::to_string(nodes) + " counters");
  }
}

}  // namespace trialstat::kernels

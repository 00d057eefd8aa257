// SPDX-License-Identifier: Apache-2.0
// CPU twin of the pairwise statistics: per block, convert both tensors to float64 once, then one
// pass of accumulate_pair over 4 independent lanes; blocks and chunks merge pairwise in order.
#include "kernels/pairwise/pairwise_cpu.hpp"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/pairwise/pairwise_op.hpp"

namespace trialstat::kernels {
namespace {

constexpr int lanes = 4;

template <dtype D>
void convert_block(const unsigned char* bytes, int64_t begin, int64_t n, double* buf) {
  const unsigned char* src = bytes + begin * element_size_v<D>;
  for (int64_t i = 0; i < n; ++i) buf[i] = load_as_double<D, false>(src, i);
}

void convert_any(const tensor_view& t, int64_t begin, int64_t n, double* buf) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(t.data);
  visit_real_dtype(t.type, [&](auto tag) { convert_block<decltype(tag)::value>(bytes, begin, n, buf); });
}

pairwise_state chunk_pairwise(const tensor_view& previous, const tensor_view& current,
                              int64_t begin, int64_t count, const stats::allclose_params& p) {
  alignas(64) double a[cpu_block_elements];
  alignas(64) double b[cpu_block_elements];
  ordered_tree_merger<pairwise_state, merge_pairwise_fn, 24> merger{merge_pairwise_fn{}};
  for (int64_t off = 0; off < count; off += cpu_block_elements) {
    const int64_t n = std::min(count - off, cpu_block_elements);
    convert_any(previous, begin + off, n, a);
    convert_any(current, begin + off, n, b);
    pairwise_state lane[lanes];
    for (auto& l : lane) l = pairwise_identity();
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) {
      for (int j = 0; j < lanes; ++j) {
        accumulate_pair(lane[j], a[i + j], b[i + j], p.rtol, p.atol, p.equal_nan);
      }
    }
    for (; i < n; ++i) accumulate_pair(lane[0], a[i], b[i], p.rtol, p.atol, p.equal_nan);
    merger.push(merge_pairwise(merge_pairwise(lane[0], lane[1]), merge_pairwise(lane[2], lane[3])));
  }
  return merger.finish(pairwise_identity());
}

}  // namespace

result<stats::pairwise> compute_pairwise_cpu(const tensor_view& previous,
                                             const tensor_view& current,
                                             const stats::allclose_params& params) noexcept {
  if (previous.num_elements != current.num_elements) {
    return status(error_code::invalid_argument,
                  "compute_pairwise: previous has " + std::to_string(previous.num_elements) +
                      " elements but current has " + std::to_string(current.num_elements));
  }
  const stats::segment segs[2] = {{0, previous.num_elements, previous.type},
                                  {0, current.num_elements, current.type}};
  TRIALSTAT_RETURN_IF_ERROR(validate_segments(previous.data, {segs, 1}, "compute_pairwise (previous)"));
  TRIALSTAT_RETURN_IF_ERROR(validate_segments(current.data, {segs + 1, 1}, "compute_pairwise (current)"));
  try {
    const cpu_work_plan plan = plan_cpu_chunks({segs, 1});
    std::vector<pairwise_state> partial(plan.items.size());
    cpu_parallel_for(static_cast<int64_t>(plan.items.size()), [&](int64_t i) {
      const cpu_work_item& item = plan.items[static_cast<std::size_t>(i)];
      partial[static_cast<std::size_t>(i)] =
          chunk_pairwise(previous, current, item.begin, item.count, params);
    });
    ordered_tree_merger<pairwise_state, merge_pairwise_fn> merger{merge_pairwise_fn{}};
    for (const auto& s : partial) merger.push(s);
    const pairwise_state s = merger.finish(pairwise_identity());
    stats::pairwise r;
    r.count = s.count;
    r.diff_sum_squares = s.diff_sum_squares;
    r.diff_max_abs = s.diff_max_abs;
    r.previous_sum_squares = s.previous_sum_squares;
    r.allclose_violations = s.violations;
    return r;
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory, "compute_pairwise: cannot allocate the work list");
  }
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
// CPU twin of the moments statistic: the lane body (moments_lanes_cpu.hpp, compiled per ISA)
// computes chunks; this file splits batches into chunks (cpu_parallel.hpp), runs them serially
// or on the OpenMP team, and merges each segment's chunks pairwise in order (ordered_tree_merger),
// so sums carry O(log n) rounding error like numpy's pairwise sum and results do not depend on
// the thread count or the ISA.
#include "kernels/moments/moments_cpu.hpp"

#include "kernels/common/cpu_simd.hpp"  // first: turns FP contraction off for this file

#include <cfloat>
#include <cstring>
#include <new>
#include <vector>

#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/moments/moments_op.hpp"

#define TRIALSTAT_CPU_KERNEL_BODY "kernels/moments/moments_lanes_cpu.hpp"
#include "kernels/common/cpu_regions.hpp"

namespace trialstat::kernels {
namespace {

moments_state chunk_moments_of(const std::byte* base, const stats::segment& seg, int64_t begin,
                               int64_t count) {
  return TRIALSTAT_CPU_SELECT(chunk_moments)(reinterpret_cast<const unsigned char*>(base) +
                                                 seg.offset_bytes,
                                             seg.type, seg.num_elements, begin, count);
}

}  // namespace

stats::moments segment_moments_cpu(const std::byte* base, const stats::segment& seg) noexcept {
  moments_state state = moments_identity();
  if (seg.num_elements > 0 && seg.num_elements <= cpu_chunk_elements) {
    state = chunk_moments_of(base, seg, 0, seg.num_elements);
  } else if (seg.num_elements > 0) {
    // The chunks in order, merged as the parallel path merges them.
    ordered_tree_merger<moments_state, merge_moments_fn> merger{merge_moments_fn{}};
    for (int64_t begin = 0; begin < seg.num_elements; begin += cpu_chunk_elements) {
      const int64_t left = seg.num_elements - begin;
      merger.push(chunk_moments_of(base, seg, begin, left < cpu_chunk_elements ? left : cpu_chunk_elements));
    }
    state = merger.finish(moments_identity());
  }
  stats::moments out;
  store_moments(state, &out);
  return out;
}

status compute_moments_cpu(const std::byte* base, std::span<const stats::segment> segments,
                           std::span<stats::moments> out) noexcept {
  if (out.size() != segments.size()) {
    return status(error_code::invalid_argument,
                  "compute_moments: " + std::to_string(segments.size()) + " segments but " +
                      std::to_string(out.size()) + " output records");
  }
  TRIALSTAT_RETURN_IF_ERROR(validate_segments(base, segments, "compute_moments"));
  const int64_t work = total_elements(segments);
  const auto num_chunks = [&] {
    int64_t chunks = 0;
    for (const auto& s : segments) chunks += (s.num_elements + cpu_chunk_elements - 1) / cpu_chunk_elements;
    return chunks;
  }();
  if (!cpu_should_parallelise(num_chunks, work)) {
    for (std::size_t s = 0; s < segments.size(); ++s) {
      out[s] = segment_moments_cpu(base, segments[s]);
    }
    return status::success();
  }
  try {
    const cpu_work_plan plan = plan_cpu_chunks(segments);
    std::vector<moments_state> partial(plan.items.size());
    cpu_parallel_for(static_cast<int64_t>(plan.items.size()), work, [&](int64_t i) {
      const cpu_work_item& item = plan.items[static_cast<std::size_t>(i)];
      partial[static_cast<std::size_t>(i)] = chunk_moments_of(
          base, segments[static_cast<std::size_t>(item.segment)], item.begin, item.count);
    });
    for (std::size_t s = 0; s < segments.size(); ++s) {
      ordered_tree_merger<moments_state, merge_moments_fn> merger{merge_moments_fn{}};
      for (int64_t i = plan.first[s]; i < plan.first[s + 1]; ++i) {
        merger.push(partial[static_cast<std::size_t>(i)]);
      }
      store_moments(merger.finish(moments_identity()), &out[s]);
    }
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_moments: cannot allocate the work list for " +
                      std::to_string(segments.size()) + " segments");
  }
  return status::success();
}

}  // namespace trialstat::kernels

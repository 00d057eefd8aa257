// SPDX-License-Identifier: Apache-2.0
// CPU twin of the pairwise statistics: per block of cpu_block_elements, one pass of
// accumulate_pair (pairwise_op.hpp) over 8 logical lanes (pairwise_lanes_cpu.hpp, compiled per
// ISA: bit-identical results); blocks and chunks merge pairwise in order. float32/float32 and
// float64/float64 pairs are read straight from their bytes; other combinations are converted
// to float64 per block first. Optionally the pass also copies `current` over `previous` block
// by block (the caller's history buffer), which saves re-reading `current` for that copy.
#include "kernels/pairwise/pairwise_cpu.hpp"

#include "kernels/common/cpu_simd.hpp"  // first: turns FP contraction off for this file

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/pairwise/pairwise_op.hpp"

namespace trialstat::kernels {
namespace {

/// Which loop a pair of dtypes takes.
enum class pairwise_kind : int { f32, f64, converted };

/// What one chunk of a pairwise pass reads and writes.
struct pairwise_chunk_args {
  const unsigned char* a;  ///< previous
  const unsigned char* b;  ///< current
  dtype a_type, b_type;
  pairwise_kind kind;
  int64_t element_bytes;  ///< of b (and of a when overwriting)
  stats::allclose_params params;
  unsigned char* overwrite;  ///< non-null: copy b over this (a's buffer) block by block
};

/// out[0 .. n) = elements [begin, begin + n) of a `type` tensor as float64.
void convert_to_float64(const unsigned char* bytes, dtype type, int64_t begin, int64_t n,
                        double* out) {
  visit_real_dtype(type, [&](auto tag) {
    constexpr dtype D = decltype(tag)::value;
    const unsigned char* src = bytes + begin * element_size_v<D>;
    for (int64_t i = 0; i < n; ++i) out[i] = load_as_double<D, false>(src, i);
  });
}

}  // namespace
}  // namespace trialstat::kernels

#define TRIALSTAT_CPU_KERNEL_BODY "kernels/pairwise/pairwise_lanes_cpu.hpp"
#include "kernels/common/cpu_regions.hpp"

namespace trialstat::kernels {

result<stats::pairwise> compute_pairwise_cpu(const tensor_view& previous,
                                             const tensor_view& current,
                                             const stats::allclose_params& params,
                                             std::byte* overwrite_previous) noexcept {
  if (previous.num_elements != current.num_elements) {
    return status(error_code::invalid_argument,
                  "compute_pairwise: previous has " + std::to_string(previous.num_elements) +
                      " elements but current has " + std::to_string(current.num_elements));
  }
  const stats::segment segs[2] = {{0, previous.num_elements, previous.type},
                                  {0, current.num_elements, current.type}};
  TRIALSTAT_RETURN_IF_ERROR(validate_segments(previous.data, {segs, 1}, "compute_pairwise (previous)"));
  TRIALSTAT_RETURN_IF_ERROR(validate_segments(current.data, {segs + 1, 1}, "compute_pairwise (current)"));
  if (overwrite_previous != nullptr && previous.type != current.type) {
    return status(error_code::invalid_argument,
                  "compute_pairwise: overwriting previous needs equal dtypes, got " +
                      std::string(dtype_name(previous.type)) + " and " +
                      std::string(dtype_name(current.type)));
  }
  pairwise_chunk_args w;
  w.a = reinterpret_cast<const unsigned char*>(previous.data);
  w.b = reinterpret_cast<const unsigned char*>(current.data);
  w.a_type = previous.type;
  w.b_type = current.type;
  w.kind = previous.type == dtype::float32 && current.type == dtype::float32 ? pairwise_kind::f32
           : previous.type == dtype::float64 && current.type == dtype::float64
               ? pairwise_kind::f64
               : pairwise_kind::converted;
  w.element_bytes = supported_element_size(current.type);
  w.params = params;
  w.overwrite = reinterpret_cast<unsigned char*>(overwrite_previous);
  const int64_t n = current.num_elements;
  const int64_t num_chunks = (n + cpu_chunk_elements - 1) / cpu_chunk_elements;
  const auto chunk = TRIALSTAT_CPU_SELECT(chunk_pairwise);
  pairwise_state s = pairwise_identity();
  if (!cpu_should_parallelise(num_chunks, 2 * n)) {
    ordered_tree_merger<pairwise_state, merge_pairwise_fn> merger{merge_pairwise_fn{}};
    for (int64_t begin = 0; begin < n; begin += cpu_chunk_elements) {
      merger.push(chunk(w, begin, std::min(cpu_chunk_elements, n - begin)));
    }
    s = merger.finish(pairwise_identity());
  } else {
    try {
      std::vector<pairwise_state> partial(static_cast<std::size_t>(num_chunks));
      cpu_parallel_for(num_chunks, 2 * n, [&](int64_t i) {
        const int64_t begin = i * cpu_chunk_elements;
        partial[static_cast<std::size_t>(i)] =
            chunk(w, begin, std::min(cpu_chunk_elements, n - begin));
      });
      ordered_tree_merger<pairwise_state, merge_pairwise_fn> merger{merge_pairwise_fn{}};
      for (const auto& p : partial) merger.push(p);
      s = merger.finish(pairwise_identity());
    } catch (const std::bad_alloc&) {
      return status(error_code::out_of_memory, "compute_pairwise: cannot allocate the work list");
    }
  }
  stats::pairwise r;
  store_pairwise(s, &r);
  return r;
}

}  // namespace trialstat::kernels

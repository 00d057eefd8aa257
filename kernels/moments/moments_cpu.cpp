// SPDX-License-Identifier: Apache-2.0
// CPU twin of the moments statistic. Per block of cpu_block_elements: convert to float64 once
// (into an L1-resident buffer), one laned pass for counts/extremes/sums, one laned pass for the
// corrected two-pass m2 around the block mean; blocks and chunks are merged pairwise in order
// (ordered_tree_merger), so sums carry O(log n) rounding error like numpy's pairwise sum.
#include "kernels/moments/moments_cpu.hpp"

#include <cfloat>
#include <cstring>
#include <new>
#include <vector>

#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/moments/moments_op.hpp"

namespace trialstat::kernels {
namespace {

// Explicit SIMD (GCC/Clang vector extensions, 2 doubles = one SSE2 register; wider builds split
// or widen them): strict IEEE forbids the compiler from reassociating a scalar accumulator, so
// the lanes are spelled out. Each lane sums ≤ cpu_block_elements/2 values sequentially, which
// bounds the in-block rounding error by 512·ε·Σ|x|; blocks then merge pairwise.
using vec_d = double __attribute__((vector_size(16)));
using vec_i = int64_t __attribute__((vector_size(16)));
constexpr int lanes = 2;

inline vec_d load_vec(const double* p) {
  vec_d v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// First pass over `n` converted values; buf is padded with NaN to a multiple of `lanes` and the
/// padding is removed from the NaN count afterwards (NaN touches nothing else). max|x| over the
/// finite values is max(|min|, |max|); the negative count is finite − positive − zero.
moments_state first_pass(const double* buf, int64_t n, int64_t padded, double shift,
                         double& shifted_sum) {
  const double inf = positive_infinity();
  vec_i c_nan = {0, 0}, c_pinf = {0, 0}, c_ninf = {0, 0}, c_zero = {0, 0}, c_pos = {0, 0};
  vec_d mn = {inf, inf}, mx = {-inf, -inf}, s = {0, 0}, sa = {0, 0}, sq = {0, 0}, ss = {0, 0};
  for (int64_t i = 0; i < padded; i += lanes) {
    const vec_d x = load_vec(buf + i);
    const vec_d ax = x < 0.0 ? -x : x;
    const vec_i finite = ax <= DBL_MAX;
    c_nan -= x != x;
    c_pinf -= x == inf;
    c_ninf -= x == -inf;
    c_zero -= x == 0.0;
    c_pos -= finite & (x > 0.0);
    const vec_d lo = finite ? x : inf;
    const vec_d hi = finite ? x : -inf;
    const vec_d xf = finite ? x : 0.0;
    mn = lo < mn ? lo : mn;
    mx = hi > mx ? hi : mx;
    s += xf;
    sa += finite ? ax : 0.0;
    sq += xf * xf;
    ss += finite ? x - shift : 0.0;
  }
  moments_state st = moments_identity();
  st.count = n;
  st.nan_count = c_nan[0] + c_nan[1] - (padded - n);
  st.pos_inf_count = c_pinf[0] + c_pinf[1];
  st.neg_inf_count = c_ninf[0] + c_ninf[1];
  st.zero_count = c_zero[0] + c_zero[1];
  st.positive_count = c_pos[0] + c_pos[1];
  st.negative_count = st.finite_count() - st.positive_count - st.zero_count;
  st.min = mn[1] < mn[0] ? mn[1] : mn[0];
  st.max = mx[1] > mx[0] ? mx[1] : mx[0];
  if (st.finite_count() > 0) {
    const double amin = abs_value(st.min);
    const double amax = abs_value(st.max);
    st.max_abs = amax > amin ? amax : amin;
  }
  st.sum = s[0] + s[1];
  st.sum_abs = sa[0] + sa[1];
  st.sum_squares = sq[0] + sq[1];
  shifted_sum = ss[0] + ss[1];
  return st;
}

/// Σd and Σd², d = (x − K) − centre, over the finite values of the (NaN-padded) block.
deviation_sums second_pass(const double* buf, int64_t padded, double shift, double centre) {
  vec_d d = {0, 0}, d2 = {0, 0};
  for (int64_t i = 0; i < padded; i += lanes) {
    const vec_d x = load_vec(buf + i);
    const vec_d ax = x < 0.0 ? -x : x;
    const vec_d dev = ax <= DBL_MAX ? (x - shift) - centre : 0.0;
    d += dev;
    d2 += dev * dev;
  }
  return {d[0] + d[1], d2[0] + d2[1]};
}

/// Moments of elements [begin, begin + count) of a D segment: blocks merged pairwise in order.
template <dtype D>
moments_state chunk_moments(const unsigned char* bytes, int64_t begin, int64_t count,
                            double shift) {
  alignas(64) double buf[cpu_block_elements + lanes];
  ordered_tree_merger<moments_state, merge_moments_fn, 24> merger{merge_moments_fn{}};
  for (int64_t b = 0; b < count; b += cpu_block_elements) {
    const int64_t n = count - b < cpu_block_elements ? count - b : cpu_block_elements;
    const unsigned char* p = bytes + (begin + b) * element_size_v<D>;
    for (int64_t i = 0; i < n; ++i) buf[i] = load_as_double<D, false>(p, i);
    const int64_t padded = (n + lanes - 1) / lanes * lanes;
    for (int64_t i = n; i < padded; ++i) buf[i] = __builtin_nan("");
    double shifted_sum = 0.0;
    moments_state st = first_pass(buf, n, padded, shift, shifted_sum);
    if (st.finite_count() > 0) {
      const double centre = block_centre(st, shifted_sum);
      finish_block(st, centre, second_pass(buf, padded, shift, centre));
    }
    merger.push(st);
  }
  return merger.finish(moments_identity());
}

moments_state chunk_moments_any(const std::byte* base, const stats::segment& seg, int64_t begin,
                                int64_t count) {
  moments_state st = moments_identity();
  const auto* bytes = reinterpret_cast<const unsigned char*>(base) + seg.offset_bytes;
  visit_real_dtype(seg.type, [&](auto tag) {
    constexpr dtype D = decltype(tag)::value;
    const double shift = moments_shift<D, false>(bytes, seg.num_elements);
    st = chunk_moments<D>(bytes, begin, count, shift);
  });
  return st;
}

}  // namespace

status compute_moments_cpu(const std::byte* base, std::span<const stats::segment> segments,
                           std::span<stats::moments> out) noexcept {
  if (out.size() != segments.size()) {
    return status(error_code::invalid_argument,
                  "compute_moments: " + std::to_string(segments.size()) + " segments but " +
                      std::to_string(out.size()) + " output records");
  }
  TRIALSTAT_RETURN_IF_ERROR(validate_segments(base, segments, "compute_moments"));
  try {
    const cpu_work_plan plan = plan_cpu_chunks(segments);
    std::vector<moments_state> partial(plan.items.size());
    cpu_parallel_for(static_cast<int64_t>(plan.items.size()), [&](int64_t i) {
      const cpu_work_item& item = plan.items[static_cast<std::size_t>(i)];
      partial[static_cast<std::size_t>(i)] =
          chunk_moments_any(base, segments[static_cast<std::size_t>(item.segment)], item.begin,
                            item.count);
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

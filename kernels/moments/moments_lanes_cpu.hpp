// SPDX-License-Identifier: Apache-2.0
/// @file moments_lanes_cpu.hpp
/// @brief Body of the moments CPU twin over 8 lanes, compiled once per ISA by
/// kernels/common/cpu_regions.hpp from moments_cpu.cpp (no include guard, no includes).
///
/// Per block of cpu_block_elements (L1-resident): one pass for counts/extremes/sums
/// (accumulate_first_pass, moments_op.hpp) that also sums y = x − K and y² over finite values;
/// block_centre / finish_block complete the block; blocks merge pairwise in order. Element i of
/// a block goes to lane i mod 8; the last partial group of 8 is padded with NaN, which only the
/// NaN count sees (and the padding is taken off it).
///
/// m2 of a block: finish_block's corrected formula m2 = Σd² − (Σd)²/n holds for deviations d
/// from any centre, so the one-pass sums of y (centre 0, i.e. K) serve as long as the block is
/// well conditioned around K: with S1 = Σy and S2 = Σy² (each lane summing ≤ 128 terms, then
/// 8 lanes: relative error ≤ 131ε), the error of S2 − S1²/n is ≤ ~400ε·S2 (Cauchy-Schwarz
/// bounds the S1 term), i.e. ≤ 400ε·(1 + n·ȳ²/m2) relative to m2. When n·ȳ² ≤ 8·m2 that is
/// ≤ 3600ε ≈ 4e-13, within the kernel tests' 1e-12; otherwise (K far from this block's values)
/// the block takes the second pass around its own centre (accumulate_deviation), as before.
///
/// Fast path: a block is first accumulated as if every value were finite (no selects: the
/// NaN/±Inf counts stay 0 and every value enters min/max/sums). A NaN or ±Inf in it is then
/// visible in the accumulators — a NaN makes its lane's Σx NaN for good, +Inf reaches the
/// lane's max and −Inf its min, and nothing else produces those (a finite overflow to NaN only
/// costs a redo) — and only such a block is accumulated again with the general rules. For
/// finite values both rules perform the same operations, so the fast path changes no result.
/// float32 blocks run their fast path 16 elements a step: the sums in the float64 lanes in the
/// same order, the extremes and the zero/positive counts in 16 float32 lanes (f32_extremes;
/// exact in any lane order, so the same record with half the vector operations for them).

// NOLINTBEGIN (included inside a namespace by cpu_regions.hpp)

/// Lane accumulators of a block's first pass.
struct first_pass_lanes {
  vi nan_count, pos_inf_count, neg_inf_count, zero_count, positive_count;
  vd min, max, sum, sum_abs, sum_squares, shifted_sum, shifted_squares;
};

[[gnu::always_inline]] inline first_pass_lanes first_pass_identity() {
  first_pass_lanes a;
  a.nan_count = a.pos_inf_count = a.neg_inf_count = a.zero_count = a.positive_count = zero_vi();
  a.min = splat(positive_infinity());
  a.max = splat(-positive_infinity());
  a.sum = a.sum_abs = a.sum_squares = a.shifted_sum = a.shifted_squares = zero_vd();
  return a;
}

/// Constants of the passes (broadcast once per block).
struct moments_constants {
  vd shift, zero, inf, neg_inf, dbl_max;
};

/// The fast path's sums of 8 values known to be finite: Σx, Σ|x|, Σx², and Σy, Σy² with y = x − K.
[[gnu::always_inline]] inline void first_pass_sums(first_pass_lanes& a, const moments_constants& c,
                                                   const vd& x) {
  a.sum = a.sum + x;
  a.sum_abs = a.sum_abs + abs(x);
  a.sum_squares = a.sum_squares + x * x;
  const vd y = x - c.shift;
  a.shifted_sum = a.shifted_sum + y;
  a.shifted_squares = a.shifted_squares + y * y;
}

/// accumulate_first_pass for 8 values: the general rules when `General`, else the same
/// operations for values known to be finite.
template <bool General>
[[gnu::always_inline]] inline void first_pass_update(first_pass_lanes& a, const moments_constants& c,
                                                     const vd& x) {
  const vd ax = abs(x);
  if constexpr (General) {
    const vm finite = ax <= c.dbl_max;
    a.nan_count = count_if(a.nan_count, x != x);
    a.pos_inf_count = count_if(a.pos_inf_count, x == c.inf);
    a.neg_inf_count = count_if(a.neg_inf_count, x == c.neg_inf);
    a.zero_count = count_if(a.zero_count, x == c.zero);
    a.positive_count = count_if(a.positive_count, finite & (x > c.zero));
    const vd lo = select(finite, x, c.inf);
    const vd hi = select(finite, x, c.neg_inf);
    const vd xf = select(finite, x, c.zero);
    a.min = min_lanes(lo, a.min);
    a.max = max_lanes(hi, a.max);
    a.sum = a.sum + xf;
    a.sum_abs = a.sum_abs + select(finite, ax, c.zero);
    a.sum_squares = a.sum_squares + xf * xf;
    const vd y = select(finite, x - c.shift, c.zero);
    a.shifted_sum = a.shifted_sum + y;
    a.shifted_squares = a.shifted_squares + y * y;
  } else {
    a.zero_count = count_if(a.zero_count, x == c.zero);
    a.positive_count = count_if(a.positive_count, x > c.zero);
    a.min = min_lanes(x, a.min);
    a.max = max_lanes(x, a.max);
    first_pass_sums(a, c, x);
  }
}

/// float32 blocks' fast path: the extremes and the zero/positive counts over 16 float32 lanes
/// (half the vector operations of 8 float64 lanes). Both are exact whatever the lane an element
/// lands in — min_lanes/max_lanes order −0.0 below +0.0 symmetrically, counts are integers, and
/// widening a float32 to float64 is exact and keeps order — so they equal the float64 lanes'.
struct f32_extremes {
  vf min, max;
  vmf zero_count, positive_count;
};

[[gnu::always_inline]] inline f32_extremes f32_extremes_identity() {
  f32_extremes e;
  e.min = splat_f(__builtin_inff());
  e.max = splat_f(-__builtin_inff());
  e.zero_count = e.positive_count = splat_f(0.0f) > splat_f(0.0f);  // all zero
  return e;
}

/// Whether a fast-path accumulation saw a NaN or ±Inf (or, harmlessly, overflowed to NaN).
[[gnu::always_inline]] inline bool saw_non_finite(const first_pass_lanes& a, const moments_constants& c) {
  return any((a.max == c.inf) | (a.min == c.neg_inf) | (a.sum != a.sum));
}

/// 8 values of a block as float64: float32 / float64 / float16 / bfloat16 straight from the
/// bytes (the 16-bit floats widened by vector instructions where the ISA has them, load_half).
template <dtype D>
[[gnu::always_inline]] inline vd load_block_lanes(const unsigned char* p, int64_t i) {
  if constexpr (D == dtype::float32) {
    return load_f32(p + i * 4);
  } else if constexpr (D == dtype::float16 || D == dtype::bfloat16) {
    return load_half<D == dtype::bfloat16>(p + i * 2);
  } else {
    return load_f64(p + i * 8);
  }
}

/// Elements [i, n) (fewer than 8) of a D block, padded with NaN.
template <dtype D>
[[gnu::always_inline]] inline vd load_block_tail(const unsigned char* p, int64_t i, int64_t n) {
  double t[lane_count];
  for (int j = 0; j < lane_count; ++j) {
    t[j] = i + j < n ? load_as_double<D, false>(p, i + j) : __builtin_nan("");
  }
  return load_f64(t);
}

/// Moments of one block of n ≤ cpu_block_elements D values (D: float32, float64, float16 or
/// bfloat16).
template <dtype D>
[[gnu::always_inline]] inline moments_state block_moments(const unsigned char* p, int64_t n,
                                                          const moments_constants& c) {
  const int64_t full = n & ~int64_t{lane_count - 1};
  const int64_t padding = full < n ? full + lane_count - n : 0;

  // float32: 16 elements a step, the extremes and counts in float32 lanes, then the sums in
  // float64 lanes in the same order as the 8-lane loop below. Two loops over the block (in L1):
  // every lane sees the same operations in the same order as in one loop; apart, each loop's
  // accumulators fit the 16 AVX2 registers (together they spilled: 1.6× the time per element on
  // Zen 1). The sums' accumulators start after the first loop, so that their starting values do
  // not hold registers through it (they made GCC 12 spill a maximum: a store and a reload per
  // 16 elements), and the sums go 8 elements a step (16 spilled four sums).
  f32_extremes e = f32_extremes_identity();
  const int64_t full16 = n & ~int64_t{2 * lane_count - 1};
  if constexpr (D == dtype::float32) {
    const vf zero32 = splat_f(0.0f);
    for (int64_t i = 0; i < full16; i += 2 * lane_count) {
      const vf x = load_f32x16(p + i * 4);
      e.min = min_lanes(x, e.min);
      e.max = max_lanes(x, e.max);
      e.zero_count = count_if(e.zero_count, x == zero32);
      e.positive_count = count_if(e.positive_count, x > zero32);
    }
  }
  first_pass_lanes a = first_pass_identity();
  int64_t at = 0;  // elements accumulated so far
  if constexpr (D == dtype::float32) {
    for (; at < full16; at += lane_count) first_pass_sums(a, c, load_f32(p + at * 4));
  }
  for (; at < full; at += lane_count) first_pass_update<false>(a, c, load_block_lanes<D>(p, at));
  // The tail after the loops: loaded before, it held two registers through them.
  vd tail_x = c.zero;
  if (padding != 0) {
    tail_x = load_block_tail<D>(p, full, n);
    first_pass_update<true>(a, c, tail_x);
  }
  const bool general = saw_non_finite(a, c) || any((e.max == splat_f(__builtin_inff())) |
                                                   (e.min == splat_f(-__builtin_inff())));
  if (general) {
    a = first_pass_identity();
    for (int64_t i = 0; i < full; i += lane_count) first_pass_update<true>(a, c, load_block_lanes<D>(p, i));
    if (padding != 0) first_pass_update<true>(a, c, tail_x);
  }

  moments_state st = moments_identity();
  st.count = n;
  st.nan_count = reduce_add(a.nan_count) - padding;
  st.pos_inf_count = reduce_add(a.pos_inf_count);
  st.neg_inf_count = reduce_add(a.neg_inf_count);
  st.zero_count = reduce_add(a.zero_count);
  st.positive_count = reduce_add(a.positive_count);
  st.min = reduce_min(a.min);
  st.max = reduce_max(a.max);
  if (!general) {  // the float32 lanes' share (identities when the block had none)
    st.zero_count += reduce_add(e.zero_count);
    st.positive_count += reduce_add(e.positive_count);
    st.min = ordered_min(reduce_min(e.min), st.min);
    st.max = ordered_max(reduce_max(e.max), st.max);
  }
  st.negative_count = st.finite_count() - st.positive_count - st.zero_count;
  if (st.finite_count() > 0) {
    const double amin = abs_value(st.min);
    const double amax = abs_value(st.max);
    st.max_abs = amax > amin ? amax : amin;
  }
  st.sum = reduce_add(a.sum);
  st.sum_abs = reduce_add(a.sum_abs);
  st.sum_squares = reduce_add(a.sum_squares);
  if (st.finite_count() == 0) return st;

  const double s1 = reduce_add(a.shifted_sum);
  const double s2 = reduce_add(a.shifted_squares);
  const double centre = block_centre(st, s1);
  const double nf = static_cast<double>(st.finite_count());
  if (9.0 * (s1 * s1 / nf) <= 8.0 * s2 && s2 <= DBL_MAX) {  // n·ȳ² ≤ 8·m2 (above)
    finish_block(st, centre, deviation_sums{s1, s2});
    return st;
  }
  // Second pass (accumulate_deviation): d = (x − K) − centre over finite values.
  const vd cv = splat(centre);
  vd d = c.zero, d2 = c.zero;
  if (general) {
    for (int64_t i = 0; i < full; i += lane_count) {
      const vd x = load_block_lanes<D>(p, i);
      const vd dev = select(abs(x) <= c.dbl_max, (x - c.shift) - cv, c.zero);
      d = d + dev;
      d2 = d2 + dev * dev;
    }
  } else {
    for (int64_t i = 0; i < full; i += lane_count) {
      const vd dev = (load_block_lanes<D>(p, i) - c.shift) - cv;
      d = d + dev;
      d2 = d2 + dev * dev;
    }
  }
  if (padding != 0) {
    const vd dev = select(abs(tail_x) <= c.dbl_max, (tail_x - c.shift) - cv, c.zero);
    d = d + dev;
    d2 = d2 + dev * dev;
  }
  finish_block(st, centre, deviation_sums{reduce_add(d), reduce_add(d2)});
  return st;
}

/// Moments of elements [begin, begin + count) of a D segment: blocks merged pairwise in order.
/// Dtypes other than float32/float64/float16/bfloat16 are converted per block into a float64
/// buffer.
template <dtype D>
[[gnu::always_inline]] inline moments_state chunk_moments_t(const unsigned char* bytes, int64_t begin,
                                                            int64_t count, double shift) {
  moments_constants c;
  c.shift = splat(shift);
  c.zero = splat(0.0);
  c.inf = splat(positive_infinity());
  c.neg_inf = splat(-positive_infinity());
  c.dbl_max = splat(DBL_MAX);
  const auto block = [&](int64_t b, int64_t n) {
    const unsigned char* p = bytes + (begin + b) * element_size_v<D>;
    if constexpr (D == dtype::float32 || D == dtype::float64 || D == dtype::float16 ||
                  D == dtype::bfloat16) {
      return block_moments<D>(p, n, c);
    } else {
      alignas(64) double buf[cpu_block_elements];
      for (int64_t i = 0; i < n; ++i) buf[i] = load_as_double<D, false>(p, i);
      return block_moments<dtype::float64>(reinterpret_cast<const unsigned char*>(buf), n, c);
    }
  };
  // One block (small tensors): the merger would hand back that block's state unchanged.
  if (count > 0 && count <= cpu_block_elements) return block(0, count);
  ordered_tree_merger<moments_state, merge_moments_fn, 24> merger{merge_moments_fn{}};
  for (int64_t b = 0; b < count; b += cpu_block_elements) {
    merger.push(block(b, count - b < cpu_block_elements ? count - b : cpu_block_elements));
  }
  return merger.finish(moments_identity());
}

/// Entry: one chunk of a segment of any real dtype (the shift K is the whole segment's).
moments_state chunk_moments(const unsigned char* bytes, dtype type, int64_t num_elements,
                            int64_t begin, int64_t count) {
  switch (type) {
#define TRIALSTAT_MOMENTS_CASE(D) \
  case D: return chunk_moments_t<D>(bytes, begin, count, moments_shift<D, false>(bytes, num_elements));
    TRIALSTAT_MOMENTS_CASE(dtype::float32)
    TRIALSTAT_MOMENTS_CASE(dtype::float64)
    TRIALSTAT_MOMENTS_CASE(dtype::float16)
    TRIALSTAT_MOMENTS_CASE(dtype::bfloat16)
    TRIALSTAT_MOMENTS_CASE(dtype::int8)
    TRIALSTAT_MOMENTS_CASE(dtype::uint8)
    TRIALSTAT_MOMENTS_CASE(dtype::int16)
    TRIALSTAT_MOMENTS_CASE(dtype::uint16)
    TRIALSTAT_MOMENTS_CASE(dtype::int32)
    TRIALSTAT_MOMENTS_CASE(dtype::uint32)
    TRIALSTAT_MOMENTS_CASE(dtype::int64)
    TRIALSTAT_MOMENTS_CASE(dtype::uint64)
    TRIALSTAT_MOMENTS_CASE(dtype::boolean)
#undef TRIALSTAT_MOMENTS_CASE
    default: return moments_identity();  // rejected by validate_segments
  }
}

// NOLINTEND

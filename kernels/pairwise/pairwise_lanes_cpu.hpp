// SPDX-License-Identifier: Apache-2.0
/// @file pairwise_lanes_cpu.hpp
/// @brief Body of the pairwise CPU twin over 8 lanes, compiled once per ISA by
/// kernels/common/cpu_regions.hpp from pairwise_cpu.cpp (no include guard, no includes).
/// accumulate_pair (pairwise_op.hpp) per lane; element i of a block goes to lane i mod 8; the
/// last partial group of 8 is padded with (0, 0) pairs, which add nothing and are close.

// NOLINTBEGIN (included inside a namespace by cpu_regions.hpp)

/// Lane accumulators of accumulate_pair.
struct pair_lanes {
  vi violations, nan_mismatches;
  vd diff_sum_squares, diff_max_abs, previous_sum_squares;
  /// The fast path's violations, counted in a scalar (count_lanes): with a vi counter its loop
  /// spilled a sum under AVX2 (a store and reload per 8 pairs).
  int64_t fast_violations = 0;
};

struct pair_constants {
  vd rtol, atol, dbl_max;
  vm equal_nan;  ///< all set when equal_nan
};

/// accumulate_pair for 8 pairs (a = previous, b = current). pair_is_close's |a − b| is |b − a|
/// (IEEE subtraction is sign-symmetric), so it reuses |d|.
/// accumulate_pair for 8 pairs: the general rules when `General`, else the same operations for
/// pairs known to be finite — where |b| ≤ DBL_MAX always holds, no value is NaN (no NaN
/// mismatch, no NaN pair), so `close` reduces to |b − a| ≤ tolerance or a == b.
template <bool General>
[[gnu::always_inline]] inline void pair_update(pair_lanes& s, const pair_constants& c, const vd& a,
                                               const vd& b) {
  const vd d = b - a;
  const vd ad = abs(d);
  s.diff_sum_squares = s.diff_sum_squares + d * d;
  s.diff_max_abs = select(ad > s.diff_max_abs, ad, s.diff_max_abs);  // NaN never compares greater
  s.previous_sum_squares = s.previous_sum_squares + a * a;
  const vd ab = abs(b);
  const vd tolerance = c.atol + c.rtol * ab;  // two roundings, as numpy (no FMA in this file)
  if constexpr (General) {
    const vm within = (ad <= tolerance) & (ab <= c.dbl_max);
    const vm a_nan = a != a;
    const vm b_nan = b != b;
    const vm both_nan = c.equal_nan & a_nan & b_nan;
    const vm close = within | (a == b) | both_nan;
    s.violations = count_if(s.violations, ~close);
    s.nan_mismatches = count_if(s.nan_mismatches, (a_nan & ~b_nan) | (b_nan & ~a_nan));
  } else {
    s.fast_violations += lane_count - count_lanes((ad <= tolerance) | (a == b));
  }
}

/// Whether a fast-path accumulation may have seen a NaN or ±Inf: a non-finite a makes a·a, and
/// a non-finite b beside a finite a makes (b − a)², infinite or NaN, and sums of squares stay so
/// (a finite overflow only costs a redo).
[[gnu::always_inline]] inline bool pair_saw_non_finite(const pair_lanes& s, const pair_constants& c) {
  return any(~(s.diff_sum_squares <= c.dbl_max) | ~(s.previous_sum_squares <= c.dbl_max));
}

template <dtype D>
[[gnu::always_inline]] inline vd load_pair_lanes(const unsigned char* p, int64_t i) {
  if constexpr (D == dtype::float32) {
    return load_f32(p + i * 4);
  } else {
    return load_f64(p + i * 8);
  }
}

/// Elements [i, n) (fewer than 8), padded with 0.
template <dtype D>
[[gnu::always_inline]] inline vd load_pair_tail(const unsigned char* p, int64_t i, int64_t n) {
  double t[lane_count];
  for (int j = 0; j < lane_count; ++j) t[j] = i + j < n ? load_as_double<D, false>(p, i + j) : 0.0;
  return load_f64(t);
}

/// One block of n pairs of D values (D: float32 or float64).
template <dtype D>
[[gnu::always_inline]] inline pairwise_state block_pairwise(const pair_constants& c,
                                                            const unsigned char* a,
                                                            const unsigned char* b, int64_t n) {
  const auto identity = [] {
    pair_lanes z;
    z.violations = z.nan_mismatches = zero_vi();
    z.diff_sum_squares = z.diff_max_abs = z.previous_sum_squares = splat(0.0);
    return z;
  };
  // Fast path first (as the moments do): a block with a NaN or ±Inf is accumulated again with
  // the general rules; for finite pairs both perform the same operations on every sum.
  pair_lanes s = identity();
  const int64_t full = n & ~int64_t{lane_count - 1};
  for (int64_t i = 0; i < full; i += lane_count) {
    pair_update<false>(s, c, load_pair_lanes<D>(a, i), load_pair_lanes<D>(b, i));
  }
  if (pair_saw_non_finite(s, c)) {
    s = identity();
    for (int64_t i = 0; i < full; i += lane_count) {
      pair_update<true>(s, c, load_pair_lanes<D>(a, i), load_pair_lanes<D>(b, i));
    }
  }
  if (full < n) pair_update<true>(s, c, load_pair_tail<D>(a, full, n), load_pair_tail<D>(b, full, n));
  pairwise_state r;
  r.count = n;
  r.violations = reduce_add(s.violations) + s.fast_violations;
  r.nan_mismatches = reduce_add(s.nan_mismatches);
  r.diff_sum_squares = reduce_add(s.diff_sum_squares);
  r.diff_max_abs = reduce_max(s.diff_max_abs);
  r.previous_sum_squares = reduce_add(s.previous_sum_squares);
  return r;
}

/// Blocks of elements [begin, begin + count): D straight from the bytes when `Direct`, else
/// both tensors converted to float64 per block.
template <dtype D, bool Direct>
[[gnu::always_inline]] inline pairwise_state chunk_pairwise_t(const pairwise_chunk_args& w,
                                                              const pair_constants& c,
                                                              int64_t begin, int64_t count) {
  ordered_tree_merger<pairwise_state, merge_pairwise_fn, 24> merger{merge_pairwise_fn{}};
  alignas(64) double a[Direct ? 1 : cpu_block_elements];
  alignas(64) double b[Direct ? 1 : cpu_block_elements];
  for (int64_t off = 0; off < count; off += cpu_block_elements) {
    const int64_t n = count - off < cpu_block_elements ? count - off : cpu_block_elements;
    if constexpr (Direct) {
      const int64_t at = (begin + off) * element_size_v<D>;
      merger.push(block_pairwise<D>(c, w.a + at, w.b + at, n));
    } else {
      convert_to_float64(w.a, w.a_type, begin + off, n, a);
      convert_to_float64(w.b, w.b_type, begin + off, n, b);
      merger.push(block_pairwise<dtype::float64>(c, reinterpret_cast<const unsigned char*>(a),
                                                 reinterpret_cast<const unsigned char*>(b), n));
    }
    if (w.overwrite != nullptr) {
      const int64_t at = (begin + off) * w.element_bytes;
      __builtin_memcpy(w.overwrite + at, w.b + at, static_cast<std::size_t>(n * w.element_bytes));
    }
  }
  return merger.finish(pairwise_identity());
}

/// Entry: pairwise state of elements [begin, begin + count).
pairwise_state chunk_pairwise(const pairwise_chunk_args& w, int64_t begin, int64_t count) {
  pair_constants c;
  c.rtol = splat(w.params.rtol);
  c.atol = splat(w.params.atol);
  c.dbl_max = splat(DBL_MAX);
  const vd eq = splat(w.params.equal_nan ? 1.0 : 0.0);
  c.equal_nan = eq == splat(1.0);
  switch (w.kind) {
    case pairwise_kind::f32: return chunk_pairwise_t<dtype::float32, true>(w, c, begin, count);
    case pairwise_kind::f64: return chunk_pairwise_t<dtype::float64, true>(w, c, begin, count);
    case pairwise_kind::converted: break;
  }
  return chunk_pairwise_t<dtype::float64, false>(w, c, begin, count);
}

// NOLINTEND

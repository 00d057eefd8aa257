// SPDX-License-Identifier: Apache-2.0
/// @file histogram_lanes_cpu.hpp
/// @brief Body of the histogram CPU twin over 8 lanes, compiled once per ISA by
/// kernels/common/cpu_regions.hpp from histogram_cpu.cpp (no include guard, no includes).
///
/// The bin of a value is histogram_bin_t (histogram_op.hpp) spelled over lanes, in float64
/// (bin numbers are small integers, exact in float64): a guess clamped to [0, bins − 1], then
/// numpy's one-step correction against the edges histogram_edge_t computes; values numpy does
/// not keep go to the spill bin `bins`. The guess is numpy's ((x − lo) / (hi − lo))·bins, or,
/// in bin_mode::fast, (x − lo)·(bins / (hi − lo)), which is final unless it lies within
/// fast_guess_margin of an integer — see histogram_cpu.cpp for why every path ends in numpy's
/// bin.

// NOLINTBEGIN (included inside a namespace by cpu_regions.hpp)

/// Lane constants of one tensor's binning.
struct bin_constants {
  vd lo, hi, delta, step, bins_f, max_bin_f, first_guess_f, last_guess_f, scale, mid_bin_f, zero,
      one;
  vd near_low, near_high;  ///< fast mode: a guess closer than this to an integer is corrected
  vd fixup_bin_f;          ///< bins + 1: "bin to be computed by histogram_bin"
  vd constant_x, constant_bin_f;  ///< constant mode: the tensor's value and its bin
  /// fast32 mode: the same constants in float32 over 16 lanes.
  vf lo32, hi32, scale32, bins32, first_guess32, last_guess32, near_low32, near_high32;
};

template <bin_mode Mode>
[[gnu::always_inline]] inline bin_constants make_bin_constants(const histogram_params& p,
                                                               double constant_x) {
  bin_constants c;
  c.lo = splat(p.lo);
  c.hi = splat(p.hi);
  c.delta = splat(p.delta);
  c.step = splat(p.step);
  c.bins_f = splat(static_cast<double>(p.bins));
  c.max_bin_f = splat(static_cast<double>(p.bins - 1));
  c.first_guess_f = splat(2.0 * fast_guess_margin);
  c.last_guess_f = splat(static_cast<double>(p.bins) - 0.5);
  c.scale = splat(static_cast<double>(p.bins) / p.delta);
  c.mid_bin_f = splat(static_cast<double>(p.bins / 2));
  c.zero = splat(0.0);
  c.one = splat(1.0);
  c.near_low = splat(fast_guess_margin);
  c.near_high = splat(1.0 - fast_guess_margin);
  c.fixup_bin_f = splat(static_cast<double>(p.bins) + 1.0);
  c.constant_x = splat(constant_x);
  c.constant_bin_f = splat(Mode == bin_mode::constant
                               ? static_cast<double>(histogram_bin(p, constant_x))
                               : 0.0);
  if constexpr (Mode == bin_mode::fast32) {
    const float margin = fast32_margin(p.bins);
    c.lo32 = splat_f(static_cast<float>(p.lo));
    c.hi32 = splat_f(static_cast<float>(p.hi));
    c.scale32 = splat_f(static_cast<float>(static_cast<double>(p.bins) / p.delta));
    c.bins32 = splat_f(static_cast<float>(p.bins));
    c.first_guess32 = splat_f(2.0f * margin);
    c.last_guess32 = splat_f(static_cast<float>(p.bins) - 0.5f);
    c.near_low32 = splat_f(margin);
    c.near_high32 = splat_f(1.0f - margin);
  }
  return c;
}

/// histogram_edge_t for lanes of bin numbers y, 0 ≤ y ≤ bins − 1 (so never the `hi` select).
template <bool StepZero>
[[gnu::always_inline]] inline vd edge_lanes(const bin_constants& c, const vd& y) {
  if constexpr (StepZero) {
    return ((y / c.bins_f) * c.delta) + c.lo;
  } else {
    return (y * c.step) + c.lo;
  }
}

/// numpy's one-step correction of a guess g (clamped to [0, bins − 1]), as histogram_bin_t.
/// edge(g + 1) is only consulted for g ≠ bins − 1, where it is below the `hi` select.
template <bool StepZero>
[[gnu::always_inline]] inline vd correct_guess(const bin_constants& c, const vd& x, const vd& g) {
  const vm decrement = x < edge_lanes<StepZero>(c, g);
  const vm increment = ~decrement & (x >= edge_lanes<StepZero>(c, g + c.one)) & (g != c.max_bin_f);
  const vd r = select(decrement, g - c.one, select(increment, g + c.one, g));
  return select(r < c.zero, c.zero, r);  // r < 0 only for x < lo, which is not kept
}

/// Bins of 8 values as float64 lanes (spill bin = bins), as histogram_bin / histogram_keeps.
/// bin_mode::fast and bin_mode::constant instead mark some kept values with the fixup bin
/// bins + 1 and set them in `near_any`; bin_block then gives those histogram_bin itself.
template <bin_mode Mode>
[[gnu::always_inline]] inline vd bin_lanes_of(const bin_constants& c, const vd& x, vm& near_any) {
  const vm keep = (x >= c.lo) & (x <= c.hi);
  if constexpr (Mode == bin_mode::degenerate) {
    return select(keep, c.mid_bin_f, c.bins_f);
  } else if constexpr (Mode == bin_mode::fast32) {
    static_assert(Mode != bin_mode::fast32, "fast32 is handled by bin_block");
    return c.bins_f;
  } else if constexpr (Mode == bin_mode::constant) {
    // Every finite value is the tensor's one value (min == max), whose bin is known; anything
    // else kept (only if the moments do not describe the data) goes to histogram_bin.
    const vm other = keep & (x != c.constant_x);
    near_any = near_any | other;
    return select(other, c.fixup_bin_f, select(keep, c.constant_bin_f, c.bins_f));
  } else if constexpr (Mode == bin_mode::fast) {
    // Multiplied guess clamped to [2·margin, bins − 1/2] (NaN → 2·margin): one at least
    // fast_guess_margin away from an integer is already numpy's bin (histogram_cpu.cpp), and so
    // is one below 2·margin (its value is in bin 0: u < 2^-15 + 2^-27; the minimum, x = lo,
    // lands here) or in the last half bin (its value is in bin bins − 1).
    const vd f = (x - c.lo) * c.scale;
    const vd fc = select(f > c.first_guess_f, select(f < c.last_guess_f, f, c.last_guess_f),
                         c.first_guess_f);
    const vd g = trunc_small(fc);
    const vd frac = fc - g;
    const vm near = ((frac < c.near_low) | (frac > c.near_high)) & keep;
    near_any = near_any | near;
    return select(near, c.fixup_bin_f, select(keep, g, c.bins_f));
  } else {
    constexpr bool step_zero = Mode == bin_mode::exact_step0;
    // numpy's guess, clamped to [0, bins − 1]; a NaN guess (range overflow) becomes 0.
    const vd f = ((x - c.lo) / c.delta) * c.bins_f;
    const vd fc = select(f > c.zero, select(f < c.max_bin_f, f, c.max_bin_f), c.zero);
    return select(keep, correct_guess<step_zero>(c, x, trunc_small(fc)), c.bins_f);
  }
}

/// 8 values as float64 (float32 / float64 / float16 / bfloat16 straight — load_half — other
/// dtypes element by element).
template <dtype D>
[[gnu::always_inline]] inline vd load_bin_lanes(const unsigned char* p, int64_t i) {
  if constexpr (D == dtype::float32) {
    return load_f32(p + i * 4);
  } else if constexpr (D == dtype::float64) {
    return load_f64(p + i * 8);
  } else if constexpr (D == dtype::float16 || D == dtype::bfloat16) {
    return load_half<D == dtype::bfloat16>(p + i * 2);
  } else {
    double t[lane_count];
    for (int j = 0; j < lane_count; ++j) t[j] = load_as_double<D, false>(p, i + j);
    return load_f64(t);
  }
}

/// Elements [i, n) (fewer than 8) padded with NaN, which no histogram keeps.
template <dtype D>
[[gnu::always_inline]] inline vd load_bin_tail(const unsigned char* p, int64_t i, int64_t n) {
  double t[lane_count];
  for (int j = 0; j < lane_count; ++j) {
    t[j] = i + j < n ? load_as_double<D, false>(p, i + j) : __builtin_nan("");
  }
  return load_f64(t);
}

/// Bins of n ≤ cpu_block_elements values into idx, padded to a multiple of 8 with spill bins.
/// Returns the padded length.
template <dtype D, bin_mode Mode>
[[gnu::always_inline]] inline int64_t bin_block(const bin_constants& c, const histogram_params& params,
                                                const unsigned char* p, int64_t n, int32_t* idx) {
  vm near_any = none_vm();
  int64_t i = 0;
  if constexpr (Mode == bin_mode::fast32) {
    // float16 / bfloat16 values are float32 values: the same guesses hold for them.
    static_assert(D == dtype::float32 || D == dtype::float16 || D == dtype::bfloat16);
    // 16 float32 lanes: the multiplied guess in float32 (histogram_cpu.cpp, fast32_guess_ok);
    // a group with a kept lane near an integer takes the float64 fast path instead.
    const int64_t full16 = n & ~int64_t{float_lane_count - 1};
    for (; i < full16; i += float_lane_count) {
      vf x;
      if constexpr (D == dtype::float32) {
        x = load_f32x16(p + i * 4);
      } else {
        x = load_half_x16<D == dtype::bfloat16>(p + i * 2);
      }
      const vmf keep = (x >= c.lo32) & (x <= c.hi32);
      const vf f = (x - c.lo32) * c.scale32;
      const vf fc = select(f > c.first_guess32, select(f < c.last_guess32, f, c.last_guess32),
                           c.first_guess32);
      const vf g = trunc_small(fc);
      const vf frac = fc - g;
      if (any(((frac < c.near_low32) | (frac > c.near_high32)) & keep)) [[unlikely]] {
        store_i32(idx + i, bin_lanes_of<bin_mode::fast>(c, load_bin_lanes<D>(p, i), near_any));
        store_i32(idx + i + lane_count,
                  bin_lanes_of<bin_mode::fast>(c, load_bin_lanes<D>(p, i + lane_count), near_any));
      } else {
        store_i32(idx + i, select(keep, g, c.bins32));
      }
    }
  }
  constexpr bin_mode lane_mode = Mode == bin_mode::fast32 ? bin_mode::fast : Mode;
  const int64_t full = n & ~int64_t{lane_count - 1};
  for (; i < full; i += lane_count) {
    store_i32(idx + i, bin_lanes_of<lane_mode>(c, load_bin_lanes<D>(p, i), near_any));
  }
  int64_t padded = n;
  if (full < n) {
    store_i32(idx + full, bin_lanes_of<lane_mode>(c, load_bin_tail<D>(p, full, n), near_any));
    padded = full + lane_count;
  }
  if constexpr (lane_mode == bin_mode::fast || Mode == bin_mode::constant) {
    if (any(near_any)) [[unlikely]] {
      for (int64_t k = 0; k < n; ++k) {
        if (idx[k] == params.bins + 1) {
          idx[k] = histogram_bin(params, load_as_double<D, false>(p, k));
        }
      }
    }
  }
  return padded;
}

/// Pair counting (chunks of ≥ pair_count_elements elements, bins ≤ pair_max_bins): the n
/// elements go in n / 2 disjoint pairs; a pair of bins a, b ≤ bins (the spill bin included)
/// adds one to the pair counter a·(bins + 1) + b of table j mod 2 (j: the pair's place) — one
/// counter update per two elements. Each table flushes as a's row sum into bin a and b's column
/// sum into bin b (spill bin dropped), so which elements pair up does not change the counts.
/// On x86 the pair numbers of 2·native_u32_count elements are one signed pack of the bins to 16
/// bits (exact: bins ≤ pair_max_bins) and one multiply-add of neighbours (a·side + b): adjacent
/// elements pair up in the order the pack leaves them (per 128-bit lane: the first register's
/// four, then the second's). `idx`: n bins, n a multiple of 4; `pairs`: n / 2 scratch indices.
[[gnu::always_inline]] inline void count_pairs_into_tables(const int32_t* idx, int64_t n,
                                                           int64_t side, int32_t* pairs,
                                                           uint32_t* tables) {
  int64_t i = 0;
#if defined(__x86_64__) || defined(__i386__)
  constexpr int64_t per_step = 2 * native_u32_count;  // elements per pack: two native registers
  const int32_t side_and_one = static_cast<int32_t>(side) | (1 << 16);  // int16 pairs (side, 1)
#if TRIALSTAT_CPU_NATIVE_BYTES == 64
  const __m512i weights = _mm512_set1_epi32(side_and_one);
  for (; i + per_step <= n; i += per_step) {
    const __m512i a = _mm512_loadu_si512(idx + i);
    const __m512i b = _mm512_loadu_si512(idx + i + native_u32_count);
    _mm512_storeu_si512(pairs + i / 2, _mm512_madd_epi16(_mm512_packs_epi32(a, b), weights));
  }
#elif TRIALSTAT_CPU_NATIVE_BYTES == 32
  const __m256i weights = _mm256_set1_epi32(side_and_one);
  for (; i + per_step <= n; i += per_step) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + i + native_u32_count));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(pairs + i / 2),
                        _mm256_madd_epi16(_mm256_packs_epi32(a, b), weights));
  }
#else
  const __m128i weights = _mm_set1_epi32(side_and_one);
  for (; i + per_step <= n; i += per_step) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(idx + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(idx + i + native_u32_count));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(pairs + i / 2), _mm_madd_epi16(_mm_packs_epi32(a, b), weights));
  }
#endif
#endif
  for (; i < n; i += 2) pairs[i / 2] = static_cast<int32_t>(idx[i] * side + idx[i + 1]);
  uint32_t* t0 = tables;
  uint32_t* t1 = tables + side * side;
  for (int64_t j = 0; j < n / 2; j += 2) {
    uint64_t pair01;
    __builtin_memcpy(&pair01, pairs + j, 8);
    ++t0[static_cast<uint32_t>(pair01)];
    ++t1[pair01 >> 32];
  }
}

/// Adds pair tables (count_pairs_into_tables) into counts[0 .. bins).
[[gnu::always_inline]] inline void flush_pair_tables(uint32_t* tables, int32_t bins, int64_t* counts) {
  const int64_t side = bins + 1;
  uint32_t* t0 = tables;
  uint32_t* t1 = tables + side * side;
  alignas(64) uint32_t columns[pair_max_bins + 1] = {};
  for (int64_t a = 0; a < side; ++a) {
    uint32_t row = 0;
    for (int64_t b = 0; b < side; ++b) {
      const uint32_t v = t0[a * side + b] + t1[a * side + b];
      row += v;
      columns[b] += v;
    }
    if (a < bins) counts[a] += row;
  }
  for (int32_t b = 0; b < bins; ++b) counts[b] += columns[b];
}

/// Counts of elements [begin, begin + count) of a D segment added into counts[0 .. bins).
/// `scratch`: scratch_words(bins) counters (any contents): the pair tables
/// (count_pairs_into_tables; chunks of ≥ pair_count_elements elements when bins ≤
/// pair_max_bins), else sub_histograms × (bins + 2) sub-histogram counters.
/// One function per (dtype, mode), not inlined into chunk_histogram: one call per chunk costs
/// nothing, while one function holding every instantiation took GCC minutes to compile.
template <dtype D, bin_mode Mode>
[[gnu::noinline]] void chunk_histogram_t(const unsigned char* bytes, int64_t begin, int64_t count,
                                         const histogram_params& p, double constant_x,
                                         uint32_t* scratch, int64_t* counts) {
  const bin_constants c = make_bin_constants<Mode>(p, constant_x);
  alignas(64) int32_t idx[cpu_block_elements];
  const int32_t bins = p.bins;
  const int64_t stride = bins + 2;  // bins, the spill bin, the fixup bin (never counted)
  if (count <= direct_add_elements) {
    // Tiny tensor: each kept element adds one straight to its int64 count, a value numpy does
    // not keep (the spill bin) to a dummy: no sub-histogram to clear and add up, which cost
    // more than the few increments.
    (void)bin_block<D, Mode>(c, p, bytes + begin * element_size_v<D>, count, idx);
    int64_t spilled = 0;
    for (int64_t i = 0; i < count; ++i) {
      const int32_t bin = idx[i];
      ++*(bin < bins ? counts + bin : &spilled);
    }
    return;
  }
  if (count <= direct_count_elements) {
    // Small tensor: one sub-histogram (runs of one bin are short next to the work per tensor).
    const int64_t padded = bin_block<D, Mode>(c, p, bytes + begin * element_size_v<D>, count, idx);
    for (int64_t i = 0; i < stride; ++i) scratch[i] = 0;
    for (int64_t i = 0; i < padded; ++i) ++scratch[idx[i]];
    for (int32_t bin = 0; bin < bins; ++bin) counts[bin] += scratch[bin];
    return;
  }
  if (count >= pair_count_elements && bins <= pair_max_bins) {
    alignas(64) int32_t pairs[cpu_block_elements / 2];
    __builtin_memset(scratch, 0, static_cast<std::size_t>(2 * (bins + 1) * (bins + 1)) * sizeof(uint32_t));
    for (int64_t b = 0; b < count; b += cpu_block_elements) {
      const int64_t n = count - b < cpu_block_elements ? count - b : cpu_block_elements;
      const int64_t padded = bin_block<D, Mode>(c, p, bytes + (begin + b) * element_size_v<D>, n, idx);
      count_pairs_into_tables(idx, padded, bins + 1, pairs, scratch);  // padded: a multiple of 8
    }
    flush_pair_tables(scratch, bins, counts);
    return;
  }
  for (int64_t i = 0; i < sub_histograms * stride; ++i) scratch[i] = 0;
  for (int64_t b = 0; b < count; b += cpu_block_elements) {
    const int64_t n = count - b < cpu_block_elements ? count - b : cpu_block_elements;
    const int64_t padded = bin_block<D, Mode>(c, p, bytes + (begin + b) * element_size_v<D>, n, idx);
    // padded is a multiple of 8: element i counts into sub-histogram i mod 4.
    static_assert(sub_histograms == 4, "count_into_sub_histograms counts into 4");
    count_into_sub_histograms(idx, padded, scratch, stride);
  }
  // A chunk has ≤ 2^16 elements per sub-histogram counter, far below 2^32.
  for (int32_t bin = 0; bin < bins; ++bin) {
    uint64_t total = 0;
    for (int k = 0; k < sub_histograms; ++k) total += scratch[k * stride + bin];
    counts[bin] += static_cast<int64_t>(total);
  }
}

template <dtype D>
[[gnu::always_inline]] inline void chunk_histogram_mode(const unsigned char* bytes, int64_t begin,
                                                        int64_t count, const histogram_params& p,
                                                        bin_mode mode, double constant_x,
                                                        uint32_t* scratch, int64_t* counts) {
  switch (mode) {
#define TRIALSTAT_HISTOGRAM_MODE(M) \
  case M: return chunk_histogram_t<D, M>(bytes, begin, count, p, constant_x, scratch, counts);
    TRIALSTAT_HISTOGRAM_MODE(bin_mode::degenerate)
    TRIALSTAT_HISTOGRAM_MODE(bin_mode::constant)
    TRIALSTAT_HISTOGRAM_MODE(bin_mode::exact)
    TRIALSTAT_HISTOGRAM_MODE(bin_mode::exact_step0)
    TRIALSTAT_HISTOGRAM_MODE(bin_mode::fast)
#undef TRIALSTAT_HISTOGRAM_MODE
    case bin_mode::fast32:
      if constexpr (D == dtype::float32 || D == dtype::float16 || D == dtype::bfloat16) {
        return chunk_histogram_t<D, bin_mode::fast32>(bytes, begin, count, p, constant_x, scratch, counts);
      } else {
        return chunk_histogram_t<D, bin_mode::fast>(bytes, begin, count, p, constant_x, scratch, counts);
      }
  }
}

/// Entry: count one chunk of a segment of any real dtype into counts[0 .. p.bins).
/// `constant_x`: the tensor's value in bin_mode::constant (ignored otherwise).
void chunk_histogram(const unsigned char* bytes, dtype type, int64_t begin, int64_t count,
                     const histogram_params& p, bin_mode mode, double constant_x,
                     uint32_t* scratch, int64_t* counts) {
  switch (type) {
#define TRIALSTAT_HISTOGRAM_CASE(D) \
  case D: return chunk_histogram_mode<D>(bytes, begin, count, p, mode, constant_x, scratch, counts);
    TRIALSTAT_HISTOGRAM_CASE(dtype::float32)
    TRIALSTAT_HISTOGRAM_CASE(dtype::float64)
    TRIALSTAT_HISTOGRAM_CASE(dtype::float16)
    TRIALSTAT_HISTOGRAM_CASE(dtype::bfloat16)
    TRIALSTAT_HISTOGRAM_CASE(dtype::int8)
    TRIALSTAT_HISTOGRAM_CASE(dtype::uint8)
    TRIALSTAT_HISTOGRAM_CASE(dtype::int16)
    TRIALSTAT_HISTOGRAM_CASE(dtype::uint16)
    TRIALSTAT_HISTOGRAM_CASE(dtype::int32)
    TRIALSTAT_HISTOGRAM_CASE(dtype::uint32)
    TRIALSTAT_HISTOGRAM_CASE(dtype::int64)
    TRIALSTAT_HISTOGRAM_CASE(dtype::uint64)
    TRIALSTAT_HISTOGRAM_CASE(dtype::boolean)
#undef TRIALSTAT_HISTOGRAM_CASE
    default: return;  // rejected by validate_segments
  }
}

// NOLINTEND

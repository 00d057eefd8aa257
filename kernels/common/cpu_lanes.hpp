// SPDX-License-Identifier: Apache-2.0
/// @file cpu_lanes.hpp
/// @brief 8 logical float64 lanes over the native vector width of one ISA region (see
/// cpu_regions.hpp, which includes this file once per region, inside the region's namespace;
/// hence no include guard and no includes here). TRIALSTAT_CPU_NATIVE_BYTES is the region's
/// register width: 64 (AVX-512: one register), 32 (AVX2: two) or 16 (SSE2/NEON: four).
///
/// Why not one 64-byte GCC vector everywhere: GCC lowers a vector comparison whose mask is used
/// as a value, and conversions, element by element when the vector is wider than the target's
/// registers (and also inside default-target helpers before they are inlined into an AVX-512
/// function). Splitting into native registers by hand, inside a target region, keeps every
/// operation a vector instruction.
///
/// Lane j of a `vd` always holds element j of the 8 loaded, on every ISA; operations are
/// single IEEE operations lane by lane; reductions combine lanes in one fixed order. So a loop
/// written with these types gives bit-identical results on every ISA.

// NOLINTBEGIN (this file is included inside a namespace by cpu_regions.hpp)

inline constexpr int lane_count = 8;
inline constexpr int native_doubles = TRIALSTAT_CPU_NATIVE_BYTES / 8;
inline constexpr int lane_parts = lane_count / native_doubles;

using native_f64 = double __attribute__((vector_size(TRIALSTAT_CPU_NATIVE_BYTES)));
using native_i64 = int64_t __attribute__((vector_size(TRIALSTAT_CPU_NATIVE_BYTES)));
/// float32 / int32 with one element per float64 lane: half the native width.
using native_f32 = float __attribute__((vector_size(TRIALSTAT_CPU_NATIVE_BYTES / 2)));
using native_i32 = int32_t __attribute__((vector_size(TRIALSTAT_CPU_NATIVE_BYTES / 2)));

/// 8 float64 lanes.
struct vd {
  native_f64 p[lane_parts];
};
/// 8 lane masks: all ones (−1) where true, 0 where false.
struct vm {
  native_i64 p[lane_parts];
};
/// 8 int64 lanes (counters).
struct vi {
  native_i64 p[lane_parts];
};

#define TRIALSTAT_LANES_INLINE [[gnu::always_inline]] inline

/// A native vector V with x in every element: one broadcast instruction. (Assigning the
/// elements one by one, r[j] = x, made GCC emit one masked broadcast per element under AVX-512:
/// ~530 instructions for the histogram's constants per tensor, the fixed cost of small tensors.)
template <typename V, typename T>
TRIALSTAT_LANES_INLINE V broadcast(T x) {
  constexpr std::size_t n = sizeof(V) / sizeof(T);
  if constexpr (n == 2) {
    return V{x, x};
  } else if constexpr (n == 4) {
    return V{x, x, x, x};
  } else if constexpr (n == 8) {
    return V{x, x, x, x, x, x, x, x};
  } else {
    static_assert(n == 16, "native vectors hold 2, 4, 8 or 16 elements");
    return V{x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
  }
}

TRIALSTAT_LANES_INLINE vd splat(double x) {
  vd r;
  for (int k = 0; k < lane_parts; ++k) r.p[k] = broadcast<native_f64>(x);
  return r;
}
TRIALSTAT_LANES_INLINE vd zero_vd() { return splat(0.0); }
TRIALSTAT_LANES_INLINE vm none_vm() {
  vm r;
  for (int k = 0; k < lane_parts; ++k) r.p[k] = native_i64{};
  return r;
}
TRIALSTAT_LANES_INLINE vi zero_vi() {
  vi r;
  for (int k = 0; k < lane_parts; ++k) r.p[k] = native_i64{};
  return r;
}

/// Loads of 8 consecutive elements (no alignment assumed).
/// One native-width load per part: a memcpy of the whole struct made GCC 12 copy it through the
/// stack in 16-byte pieces and reload it as 32-byte registers under AVX2 — a failed
/// store-to-load forwarding per load (Zen 1: the AVX2 histogram slower than SSE2's).
TRIALSTAT_LANES_INLINE vd load_f64(const unsigned char* p) {
  vd r;
  for (int k = 0; k < lane_parts; ++k) __builtin_memcpy(&r.p[k], p + k * sizeof r.p[k], sizeof r.p[k]);
  return r;
}
TRIALSTAT_LANES_INLINE vd load_f64(const double* p) {
  return load_f64(reinterpret_cast<const unsigned char*>(p));
}
TRIALSTAT_LANES_INLINE vd load_f32(const unsigned char* p) {
  vd r;
#if TRIALSTAT_CPU_NATIVE_BYTES == 64 && defined(__GNUC__) && !defined(__clang__)
  // GCC 12 widens a float32x8 → float64x8 __builtin_convertvector as two halves plus an insert;
  // the intrinsic is one vcvtps2pd ymm → zmm.
  // (maskz with all lanes: the unmasked form trips -Wmaybe-uninitialized in GCC 12 headers.)
  r.p[0] = _mm512_maskz_cvtps_pd(static_cast<__mmask8>(0xFF), _mm256_loadu_ps(reinterpret_cast<const float*>(p)));
  return r;
#elif TRIALSTAT_CPU_NATIVE_BYTES == 32 && (defined(__x86_64__) || defined(__i386__))
  // GCC 12 went through the stack for the second half of the generic form (a vmovhps store and
  // a vcvtps2pd reload: ~a third of the AVX2 moments loop on Zen 1); two vcvtps2pd from memory.
  r.p[0] = _mm256_cvtps_pd(_mm_loadu_ps(reinterpret_cast<const float*>(p)));
  r.p[1] = _mm256_cvtps_pd(_mm_loadu_ps(reinterpret_cast<const float*>(p) + 4));
  return r;
#endif
  for (int k = 0; k < lane_parts; ++k) {
    native_f32 f;
    __builtin_memcpy(&f, p + k * sizeof f, sizeof f);
    r.p[k] = __builtin_convertvector(f, native_f64);
  }
  return r;
}

/// 8 float16 (`Bfloat16` false) or bfloat16 (true) elements widened exactly to float64.
/// AVX2 / AVX-512: one 16-byte load, F16C's vcvtph2ps (float16; subnormals converted exactly,
/// MXCSR.DAZ does not apply to it) or a zero-extension and a 16-bit shift (bfloat16 is the top
/// half of a float32), then float32 → float64. Baseline: element by element (float_convert.hpp).
/// Every route gives the same value, so every ISA sees the same lanes (a signalling NaN may come
/// out quiet, which no statistic tells apart).
template <bool Bfloat16>
TRIALSTAT_LANES_INLINE vd load_half(const unsigned char* p) {
  vd r;
#if (defined(__x86_64__) || defined(__i386__)) && TRIALSTAT_CPU_NATIVE_BYTES >= 32
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m256 f;
  if constexpr (Bfloat16) {
    f = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else {
    f = _mm256_cvtph_ps(h);
  }
#if TRIALSTAT_CPU_NATIVE_BYTES == 64
  r.p[0] = _mm512_maskz_cvtps_pd(static_cast<__mmask8>(0xFF), f);
#else
  r.p[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(f));
  r.p[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1));
#endif
  return r;
#else
  double t[lane_count];
  for (int j = 0; j < lane_count; ++j) {
    uint16_t bits;
    __builtin_memcpy(&bits, p + 2 * j, sizeof bits);
    t[j] = static_cast<double>(Bfloat16 ? ::trialstat::detail::bfloat16_bits_to_float(bits)
                                        : ::trialstat::detail::half_bits_to_float(bits));
  }
  __builtin_memcpy(&r, t, sizeof r);
  return r;
#endif
}

#define TRIALSTAT_LANES_BINARY(T, OP)                                 \
  TRIALSTAT_LANES_INLINE T operator OP(const T& a, const T& b) {     \
    T r;                                                              \
    for (int k = 0; k < lane_parts; ++k) r.p[k] = a.p[k] OP b.p[k];   \
    return r;                                                         \
  }
TRIALSTAT_LANES_BINARY(vd, +)
TRIALSTAT_LANES_BINARY(vd, -)
TRIALSTAT_LANES_BINARY(vd, *)
TRIALSTAT_LANES_BINARY(vd, /)
TRIALSTAT_LANES_BINARY(vm, &)
TRIALSTAT_LANES_BINARY(vm, |)
TRIALSTAT_LANES_BINARY(vi, +)
#undef TRIALSTAT_LANES_BINARY

#define TRIALSTAT_LANES_COMPARE(OP)                                   \
  TRIALSTAT_LANES_INLINE vm operator OP(const vd& a, const vd& b) {  \
    vm r;                                                             \
    for (int k = 0; k < lane_parts; ++k) r.p[k] = a.p[k] OP b.p[k];   \
    return r;                                                         \
  }
TRIALSTAT_LANES_COMPARE(==)
TRIALSTAT_LANES_COMPARE(!=)
TRIALSTAT_LANES_COMPARE(<)
TRIALSTAT_LANES_COMPARE(<=)
TRIALSTAT_LANES_COMPARE(>)
TRIALSTAT_LANES_COMPARE(>=)
#undef TRIALSTAT_LANES_COMPARE

TRIALSTAT_LANES_INLINE vm operator~(const vm& a) {
  vm r;
  for (int k = 0; k < lane_parts; ++k) r.p[k] = ~a.p[k];
  return r;
}

/// a lanes where m, else b.
TRIALSTAT_LANES_INLINE vd select(const vm& m, const vd& a, const vd& b) {
  vd r;
  for (int k = 0; k < lane_parts; ++k) r.p[k] = m.p[k] ? a.p[k] : b.p[k];
  return r;
}

/// counter + 1 where m.
TRIALSTAT_LANES_INLINE vi count_if(const vi& counter, const vm& m) {
  vi r;
  for (int k = 0; k < lane_parts; ++k) r.p[k] = counter.p[k] - m.p[k];
  return r;
}

/// The number of lanes set in m (0 .. 8), as a scalar: one movemask per native register and a
/// population count (the AVX2 and AVX-512 regions have POPCNT; SWAR on 8 bits elsewhere). A
/// scalar counter in place of a vi accumulator frees two (AVX2) or four (SSE2) vector registers
/// in loops that otherwise spill their sums.
TRIALSTAT_LANES_INLINE int64_t count_lanes(const vm& m) {
  unsigned bits = 0;
#if (defined(__x86_64__) || defined(__i386__)) && TRIALSTAT_CPU_NATIVE_BYTES == 64
  bits = _mm512_movepi64_mask((__m512i)m.p[0]);
#elif (defined(__x86_64__) || defined(__i386__)) && TRIALSTAT_CPU_NATIVE_BYTES == 32
  bits = static_cast<unsigned>(_mm256_movemask_pd((__m256d)m.p[0])) |
         (static_cast<unsigned>(_mm256_movemask_pd((__m256d)m.p[1])) << 4);
#elif (defined(__x86_64__) || defined(__i386__)) && TRIALSTAT_CPU_NATIVE_BYTES == 16
  for (int k = 0; k < lane_parts; ++k) bits |= static_cast<unsigned>(_mm_movemask_pd((__m128d)m.p[k])) << (2 * k);
#else
  for (int k = 0; k < lane_parts; ++k) {
    for (int j = 0; j < native_doubles; ++j) bits |= (m.p[k][j] != 0 ? 1u : 0u) << (k * native_doubles + j);
  }
#endif
#if TRIALSTAT_CPU_NATIVE_BYTES >= 32
  return __builtin_popcount(bits);
#else
  bits = bits - ((bits >> 1) & 0x55u);
  bits = (bits & 0x33u) + ((bits >> 2) & 0x33u);
  return static_cast<int64_t>((bits + (bits >> 4)) & 0x0fu);
#endif
}

/// |x| (sign bit cleared; NaN stays NaN).
TRIALSTAT_LANES_INLINE vd abs(const vd& x) {
  vd r;
  for (int k = 0; k < lane_parts; ++k) {
    native_i64 bits;
    __builtin_memcpy(&bits, &x.p[k], sizeof bits);
    bits &= INT64_MAX;
    __builtin_memcpy(&r.p[k], &bits, sizeof bits);
  }
  return r;
}

/// Lanes truncated toward zero, as float64 (|x| < 2^31; used for bin numbers ≥ 0).
TRIALSTAT_LANES_INLINE vd trunc_small(const vd& x) {
  vd r;
#if TRIALSTAT_CPU_NATIVE_BYTES == 64 && defined(__GNUC__) && !defined(__clang__)
  // One vcvttpd2dq + one vcvtdq2pd (GCC 12 splits the generic int32x8 → float64x8 widening).
  r.p[0] = _mm512_maskz_cvtepi32_pd(static_cast<__mmask8>(0xFF),
                                    _mm512_maskz_cvttpd_epi32(static_cast<__mmask8>(0xFF), x.p[0]));
  return r;
#endif
  for (int k = 0; k < lane_parts; ++k) {
    r.p[k] = __builtin_convertvector(__builtin_convertvector(x.p[k], native_i32), native_f64);
  }
  return r;
}

/// Store the lanes (small integers held as float64) as 8 int32.
TRIALSTAT_LANES_INLINE void store_i32(int32_t* out, const vd& x) {
  for (int k = 0; k < lane_parts; ++k) {
    const native_i32 v = __builtin_convertvector(x.p[k], native_i32);
    __builtin_memcpy(out + k * native_doubles, &v, sizeof v);
  }
}

/// Lanes as an array (lane j = element j).
TRIALSTAT_LANES_INLINE void store_lanes(double* out, const vd& x) { __builtin_memcpy(out, &x, sizeof x); }
TRIALSTAT_LANES_INLINE void store_lanes(int64_t* out, const vi& x) { __builtin_memcpy(out, &x, sizeof x); }

/// Fixed-order reductions, the same on every ISA: ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)).
TRIALSTAT_LANES_INLINE double reduce_add(const vd& x) {
  double l[lane_count];
  store_lanes(l, x);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}
TRIALSTAT_LANES_INLINE int64_t reduce_add(const vi& x) {
  int64_t l[lane_count];
  store_lanes(l, x);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}
/// Lane-wise minimum / maximum of lanes that hold no NaN, with −0.0 ordered below +0.0 as
/// ordered_min / ordered_max (element_op.hpp) do: the two operand orders of a compare-select
/// differ only for zeros of opposite signs, so OR-ing their bits picks −0.0 for the minimum and
/// AND-ing them picks +0.0 for the maximum (every other lane is the same in both).
/// One native register of min_lanes (Min) or max_lanes: both operand orders of the
/// compare-select, their bits OR-ed (minimum) or AND-ed (maximum). F: the float vector, I: the
/// integer vector of its width.
template <bool Min, class F, class I>
TRIALSTAT_LANES_INLINE F ordered_extreme_native(const F& a, const F& b) {
  F x, y;
  if constexpr (Min) {
    x = a < b ? a : b;
    y = b < a ? b : a;
  } else {
    x = a > b ? a : b;
    y = b > a ? b : a;
  }
  I xb, yb;
  __builtin_memcpy(&xb, &x, sizeof xb);
  __builtin_memcpy(&yb, &y, sizeof yb);
  if constexpr (Min) {
    xb |= yb;
  } else {
    xb &= yb;
  }
  F r;
  __builtin_memcpy(&r, &xb, sizeof r);
  return r;
}
TRIALSTAT_LANES_INLINE vd min_lanes(const vd& a, const vd& b) {
  vd r;
  for (int k = 0; k < lane_parts; ++k) {
    r.p[k] = ordered_extreme_native<true, native_f64, native_i64>(a.p[k], b.p[k]);
  }
  return r;
}
TRIALSTAT_LANES_INLINE vd max_lanes(const vd& a, const vd& b) {
  vd r;
  for (int k = 0; k < lane_parts; ++k) {
    r.p[k] = ordered_extreme_native<false, native_f64, native_i64>(a.p[k], b.p[k]);
  }
  return r;
}
/// Minimum / maximum of lanes that hold no NaN (−0.0 below +0.0, as ordered_min / ordered_max).
TRIALSTAT_LANES_INLINE double reduce_min(const vd& x) {
  double l[lane_count];
  store_lanes(l, x);
  double m = l[0];
  for (int j = 1; j < lane_count; ++j) m = ordered_min(l[j], m);
  return m;
}
TRIALSTAT_LANES_INLINE double reduce_max(const vd& x) {
  double l[lane_count];
  store_lanes(l, x);
  double m = l[0];
  for (int j = 1; j < lane_count; ++j) m = ordered_max(l[j], m);
  return m;
}
/// Whether any bit of one native integer register is set: one test instruction on x86
/// (vptestmd / vptest / pmovmskb of a compare), not an extract and an OR per element (which
/// cost the AVX2 float32 histogram ~20 instructions per 16 elements).
template <typename NativeInt>
TRIALSTAT_LANES_INLINE bool any_bit(const NativeInt& acc) {
  static_assert(sizeof(NativeInt) == TRIALSTAT_CPU_NATIVE_BYTES);
#if (defined(__x86_64__) || defined(__i386__)) && TRIALSTAT_CPU_NATIVE_BYTES == 64 && defined(__GNUC__) && \
    !defined(__clang__)
  return _mm512_test_epi32_mask((__m512i)acc, (__m512i)acc) != 0;
#elif (defined(__x86_64__) || defined(__i386__)) && TRIALSTAT_CPU_NATIVE_BYTES == 32
  return _mm256_testz_si256((__m256i)acc, (__m256i)acc) == 0;
#elif (defined(__x86_64__) || defined(__i386__)) && TRIALSTAT_CPU_NATIVE_BYTES == 16
  return _mm_movemask_epi8(_mm_cmpeq_epi8((__m128i)acc, _mm_setzero_si128())) != 0xFFFF;
#else
  int64_t l[TRIALSTAT_CPU_NATIVE_BYTES / 8];
  __builtin_memcpy(l, &acc, sizeof l);
  int64_t r = 0;
  for (const int64_t x : l) r |= x;
  return r != 0;
#endif
}
/// Whether any lane of m is set.
TRIALSTAT_LANES_INLINE bool any(const vm& m) {
  native_i64 acc = m.p[0];
  for (int k = 1; k < lane_parts; ++k) acc |= m.p[k];
  return any_bit(acc);
}

// ---- 16 float32 lanes (histogram guesses of float32 tensors) ----
inline constexpr int float_lane_count = 16;
inline constexpr int native_floats = TRIALSTAT_CPU_NATIVE_BYTES / 4;
inline constexpr int float_parts = float_lane_count / native_floats;
using native_f32_full = float __attribute__((vector_size(TRIALSTAT_CPU_NATIVE_BYTES)));
using native_i32_full = int32_t __attribute__((vector_size(TRIALSTAT_CPU_NATIVE_BYTES)));
/// Unsigned views of one native register (bit patterns; pairs of 32-bit indices).
using native_u32 = uint32_t __attribute__((vector_size(TRIALSTAT_CPU_NATIVE_BYTES)));
using native_u64 = uint64_t __attribute__((vector_size(TRIALSTAT_CPU_NATIVE_BYTES)));
inline constexpr int native_u32_count = TRIALSTAT_CPU_NATIVE_BYTES / 4;
inline constexpr int native_u64_count = TRIALSTAT_CPU_NATIVE_BYTES / 8;

/// 16 float32 lanes (lane j = element j) and their masks.
struct vf {
  native_f32_full p[float_parts];
};
struct vmf {
  native_i32_full p[float_parts];
};

TRIALSTAT_LANES_INLINE vf splat_f(float x) {
  vf r;
  for (int k = 0; k < float_parts; ++k) r.p[k] = broadcast<native_f32_full>(x);
  return r;
}
/// One native-width load per part (as load_f64).
TRIALSTAT_LANES_INLINE vf load_f32x16(const unsigned char* p) {
  vf r;
  for (int k = 0; k < float_parts; ++k) __builtin_memcpy(&r.p[k], p + k * sizeof r.p[k], sizeof r.p[k]);
  return r;
}
/// 16 float16 (`Bfloat16` false) or bfloat16 (true) elements widened exactly to float32 lanes
/// (as load_half: F16C / AVX-512 vcvtph2ps or a 16-bit shift; element by element on the
/// baseline).
template <bool Bfloat16>
TRIALSTAT_LANES_INLINE vf load_half_x16(const unsigned char* p) {
  vf r;
#if (defined(__x86_64__) || defined(__i386__)) && TRIALSTAT_CPU_NATIVE_BYTES == 64
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if constexpr (Bfloat16) {
    r.p[0] = _mm512_castsi512_ps(
        _mm512_maskz_slli_epi32(static_cast<__mmask16>(0xFFFF),
                                _mm512_maskz_cvtepu16_epi32(static_cast<__mmask16>(0xFFFF), h), 16));
  } else {
    r.p[0] = _mm512_maskz_cvtph_ps(static_cast<__mmask16>(0xFFFF), h);
  }
  return r;
#elif (defined(__x86_64__) || defined(__i386__)) && TRIALSTAT_CPU_NATIVE_BYTES == 32
  for (int k = 0; k < 2; ++k) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    if constexpr (Bfloat16) {
      r.p[k] = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else {
      r.p[k] = _mm256_cvtph_ps(h);
    }
  }
  return r;
#else
  float t[float_lane_count];
  for (int j = 0; j < float_lane_count; ++j) {
    uint16_t bits;
    __builtin_memcpy(&bits, p + 2 * j, sizeof bits);
    t[j] = Bfloat16 ? ::trialstat::detail::bfloat16_bits_to_float(bits)
                    : ::trialstat::detail::half_bits_to_float(bits);
  }
  __builtin_memcpy(&r, t, sizeof r);
  return r;
#endif
}
#define TRIALSTAT_LANES_F_BINARY(T, OP)                               \
  TRIALSTAT_LANES_INLINE T operator OP(const T& a, const T& b) {     \
    T r;                                                              \
    for (int k = 0; k < float_parts; ++k) r.p[k] = a.p[k] OP b.p[k];  \
    return r;                                                         \
  }
TRIALSTAT_LANES_F_BINARY(vf, -)
TRIALSTAT_LANES_F_BINARY(vf, *)
TRIALSTAT_LANES_F_BINARY(vmf, &)
TRIALSTAT_LANES_F_BINARY(vmf, |)
#undef TRIALSTAT_LANES_F_BINARY
#define TRIALSTAT_LANES_F_COMPARE(OP)                                 \
  TRIALSTAT_LANES_INLINE vmf operator OP(const vf& a, const vf& b) { \
    vmf r;                                                            \
    for (int k = 0; k < float_parts; ++k) r.p[k] = a.p[k] OP b.p[k];  \
    return r;                                                         \
  }
TRIALSTAT_LANES_F_COMPARE(<)
TRIALSTAT_LANES_F_COMPARE(<=)
TRIALSTAT_LANES_F_COMPARE(>)
TRIALSTAT_LANES_F_COMPARE(>=)
TRIALSTAT_LANES_F_COMPARE(==)
#undef TRIALSTAT_LANES_F_COMPARE
/// The 16 lanes of x into out[0 .. 16), one native store per part (a memcpy of the whole struct
/// kept it in memory through the loops that build it: GCC 12 spilled an accumulator of the
/// AVX2 moments' extremes loop, a store and a reload per 16 elements).
template <typename T, typename Lanes>
TRIALSTAT_LANES_INLINE void store_float_lanes(T* out, const Lanes& x) {
  static_assert(sizeof(T) * float_lane_count == sizeof(Lanes));
  for (int k = 0; k < float_parts; ++k) __builtin_memcpy(out + k * native_floats, &x.p[k], sizeof x.p[k]);
}
/// float32 forms of min_lanes / max_lanes (−0.0 below +0.0; lanes hold no NaN).
TRIALSTAT_LANES_INLINE vf min_lanes(const vf& a, const vf& b) {
  vf r;
  for (int k = 0; k < float_parts; ++k) {
    r.p[k] = ordered_extreme_native<true, native_f32_full, native_i32_full>(a.p[k], b.p[k]);
  }
  return r;
}
TRIALSTAT_LANES_INLINE vf max_lanes(const vf& a, const vf& b) {
  vf r;
  for (int k = 0; k < float_parts; ++k) {
    r.p[k] = ordered_extreme_native<false, native_f32_full, native_i32_full>(a.p[k], b.p[k]);
  }
  return r;
}
/// Minimum / maximum of 16 lanes that hold no NaN, as float64 (exact; −0.0 below +0.0).
TRIALSTAT_LANES_INLINE double reduce_min(const vf& x) {
  float l[float_lane_count];
  store_float_lanes(l, x);
  double m = l[0];
  for (int j = 1; j < float_lane_count; ++j) m = ordered_min(static_cast<double>(l[j]), m);
  return m;
}
TRIALSTAT_LANES_INLINE double reduce_max(const vf& x) {
  float l[float_lane_count];
  store_float_lanes(l, x);
  double m = l[0];
  for (int j = 1; j < float_lane_count; ++j) m = ordered_max(static_cast<double>(l[j]), m);
  return m;
}
/// 16 int32 counters (a vmf holding counts): counter + 1 where m; their sum.
TRIALSTAT_LANES_INLINE vmf count_if(const vmf& counter, const vmf& m) {
  vmf r;
  for (int k = 0; k < float_parts; ++k) r.p[k] = counter.p[k] - m.p[k];
  return r;
}
TRIALSTAT_LANES_INLINE int64_t reduce_add(const vmf& x) {
  int32_t l[float_lane_count];
  store_float_lanes(l, x);
  int64_t total = 0;
  for (int j = 0; j < float_lane_count; ++j) total += l[j];
  return total;
}
TRIALSTAT_LANES_INLINE vf select(const vmf& m, const vf& a, const vf& b) {
  vf r;
  for (int k = 0; k < float_parts; ++k) r.p[k] = m.p[k] ? a.p[k] : b.p[k];
  return r;
}
/// Lanes truncated toward zero (|x| < 2^31), as float32.
TRIALSTAT_LANES_INLINE vf trunc_small(const vf& x) {
  vf r;
  for (int k = 0; k < float_parts; ++k) {
    r.p[k] = __builtin_convertvector(__builtin_convertvector(x.p[k], native_i32_full), native_f32_full);
  }
  return r;
}
/// Store the lanes (small integers held as float32) as 16 int32.
TRIALSTAT_LANES_INLINE void store_i32(int32_t* out, const vf& x) {
  for (int k = 0; k < float_parts; ++k) {
    const native_i32_full v = __builtin_convertvector(x.p[k], native_i32_full);
    __builtin_memcpy(out + k * native_floats, &v, sizeof v);
  }
}
TRIALSTAT_LANES_INLINE bool any(const vmf& m) {
  native_i32_full acc = m.p[0];
  for (int k = 1; k < float_parts; ++k) acc |= m.p[k];
  return any_bit(acc);
}

/// Count bin indices into 4 interleaved sub-histograms: element i adds one to
/// counters[(i mod 4)·stride + idx[i]], for i in [0, n), n a multiple of 4, every idx[i] in
/// [0, stride). Runs of one bin do not serialise on one counter (store-to-load forwarding), and
/// the indices are read two per 64-bit load: per element one counter update and half a load
/// (the counting loops of both histograms are bound by their memory operations).
TRIALSTAT_LANES_INLINE void count_into_sub_histograms(const int32_t* idx, int64_t n,
                                                      uint32_t* counters, int64_t stride) {
  uint32_t* c0 = counters;
  uint32_t* c1 = counters + stride;
  uint32_t* c2 = counters + 2 * stride;
  uint32_t* c3 = counters + 3 * stride;
  for (int64_t i = 0; i < n; i += 4) {
    uint64_t pair01, pair23;
    __builtin_memcpy(&pair01, idx + i, 8);
    __builtin_memcpy(&pair23, idx + i + 2, 8);
    ++c0[static_cast<uint32_t>(pair01)];
    ++c1[pair01 >> 32];
    ++c2[static_cast<uint32_t>(pair23)];
    ++c3[pair23 >> 32];
  }
}

#undef TRIALSTAT_LANES_INLINE

// NOLINTEND

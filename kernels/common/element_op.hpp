// SPDX-License-Identifier: Apache-2.0
/// @file element_op.hpp
/// @brief Per-element building blocks shared by every statistic, host and device: reading one
/// element of any real dtype from possibly unaligned bytes and converting it to float64 in
/// registers (bool → 0/1, integers → nearest double, float16/bfloat16 exactly via
/// trialstat/detail/float_convert.hpp), classifying it (NaN, ±Inf, finite), correctly rounded
/// multiply/add that the CUDA compiler may not contract into an FMA (bin edges and isclose must
/// round exactly as numpy does), and a compile-time dtype dispatch.
#pragma once

#include <cfloat>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "trialstat/detail/float_convert.hpp"
#include "trialstat/dtype.hpp"

#if defined(__CUDACC__)
#define TRIALSTAT_HD __host__ __device__
#define TRIALSTAT_HD_INLINE __host__ __device__ __forceinline__
#else
#define TRIALSTAT_HD
#define TRIALSTAT_HD_INLINE inline
#endif

namespace trialstat::kernels {

/// @brief +Inf without calling std::numeric_limits (a host-only constexpr function in nvcc).
TRIALSTAT_HD_INLINE constexpr double positive_infinity() { return __builtin_huge_val(); }

/// @brief |x| (sign bit cleared; NaN stays NaN).
TRIALSTAT_HD_INLINE double abs_value(double x) { return __builtin_fabs(x); }

/// @brief x is NaN (any payload).
TRIALSTAT_HD_INLINE bool is_nan(double x) { return x != x; }

/// @brief x is neither NaN nor ±Inf. Written as a comparison so loops vectorise.
TRIALSTAT_HD_INLINE bool is_finite(double x) { return abs_value(x) <= DBL_MAX; }

/// @brief The sign bit of x (set for −0.0 and negative values).
TRIALSTAT_HD_INLINE bool sign_bit(double x) {
#if defined(__CUDA_ARCH__)
  return __double_as_longlong(x) < 0;
#else
  return __builtin_signbit(x) != 0;
#endif
}

/// @brief Minimum of two non-NaN values with −0.0 ordered below +0.0 (IEEE 754-2019
/// `minimum`): min(+0.0, −0.0) = min(−0.0, +0.0) = −0.0. The result does not depend on the
/// order of the operands, so every twin's reduction order gives the same bits. The rule of
/// every min statistic (moments.hpp "Signed zeros").
TRIALSTAT_HD_INLINE double ordered_min(double a, double b) {
  return ((a < b) | ((a == b) & sign_bit(a))) ? a : b;  // branch-free
}

/// @brief Maximum of two non-NaN values with +0.0 ordered above −0.0 (IEEE 754-2019
/// `maximum`): max(+0.0, −0.0) = max(−0.0, +0.0) = +0.0, whatever the order.
TRIALSTAT_HD_INLINE double ordered_max(double a, double b) {
  return ((a > b) | ((a == b) & !sign_bit(a))) ? a : b;
}

/// @brief a·b rounded once, never fused with a following add (numpy evaluates `i*step + lo` and
/// `atol + rtol*|b|` as two roundings; nvcc would otherwise emit an FMA).
TRIALSTAT_HD_INLINE double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

/// @brief a + b rounded once, never fused with a preceding multiply.
TRIALSTAT_HD_INLINE double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/// @brief Storage type and float64 conversion of each real dtype.
template <dtype D>
struct element_traits;

#define TRIALSTAT_PLAIN_ELEMENT(D, T)                                              \
  template <>                                                                      \
  struct element_traits<D> {                                                       \
    using storage = T;                                                             \
    TRIALSTAT_HD_INLINE static double to_double(T v) { return static_cast<double>(v); } \
  }
TRIALSTAT_PLAIN_ELEMENT(dtype::float32, float);
TRIALSTAT_PLAIN_ELEMENT(dtype::float64, double);
TRIALSTAT_PLAIN_ELEMENT(dtype::int8, int8_t);
TRIALSTAT_PLAIN_ELEMENT(dtype::uint8, uint8_t);
TRIALSTAT_PLAIN_ELEMENT(dtype::int16, int16_t);
TRIALSTAT_PLAIN_ELEMENT(dtype::uint16, uint16_t);
TRIALSTAT_PLAIN_ELEMENT(dtype::int32, int32_t);
TRIALSTAT_PLAIN_ELEMENT(dtype::uint32, uint32_t);
// int64/uint64 → double: static_cast rounds to nearest-even on x86-64 (cvtsi2sd; GCC's
// unsigned sequence is correctly rounded) and on the device (cvt.rn.f64.s64 / .u64).
TRIALSTAT_PLAIN_ELEMENT(dtype::int64, int64_t);
TRIALSTAT_PLAIN_ELEMENT(dtype::uint64, uint64_t);
#undef TRIALSTAT_PLAIN_ELEMENT

template <>
struct element_traits<dtype::boolean> {
  using storage = uint8_t;
  /// DT_BOOL: one byte, nonzero = true (numpy's bool → 1.0).
  TRIALSTAT_HD_INLINE static double to_double(uint8_t v) { return v != 0 ? 1.0 : 0.0; }
};
template <>
struct element_traits<dtype::float16> {
  using storage = uint16_t;
  TRIALSTAT_HD_INLINE static double to_double(uint16_t v) {
    return static_cast<double>(detail::half_bits_to_float(v));
  }
};
template <>
struct element_traits<dtype::bfloat16> {
  using storage = uint16_t;
  TRIALSTAT_HD_INLINE static double to_double(uint16_t v) {
    return static_cast<double>(detail::bfloat16_bits_to_float(v));
  }
};

/// @brief Bytes per element of D (compile time).
template <dtype D>
inline constexpr int element_size_v = static_cast<int>(sizeof(typename element_traits<D>::storage));

/// @brief The aligned word of type Bits at `a` (a multiple of sizeof(Bits)).
template <class Bits>
TRIALSTAT_HD_INLINE Bits load_aligned_word(const unsigned char* a) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const Bits*>(a);
#else
  Bits w;
  std::memcpy(&w, a, sizeof w);
  return w;
#endif
}

/// @brief The little-endian sizeof(Bits)-byte value at `p` (any alignment) from the aligned
/// words holding it: one aligned load when `p` is aligned, else the two aligned words the value
/// straddles joined by a funnel shift — two word loads instead of sizeof(Bits) byte loads.
/// When `p` is not aligned this reads up to sizeof(Bits) − 1 bytes before and after the value,
/// inside the aligned words it touches: buffers whose start is aligned and whose size is
/// rounded up to a multiple of 8 bytes (every device buffer of this project: cudaMalloc
/// granularity, 256-byte workspace and arena alignment, host/stats rounding to 16) keep those
/// reads in bounds. Bits: uint16_t, uint32_t or uint64_t.
template <class Bits>
TRIALSTAT_HD_INLINE Bits load_bits_unaligned(const unsigned char* p) {
  constexpr unsigned size = sizeof(Bits);
  const auto off = static_cast<unsigned>(reinterpret_cast<uintptr_t>(p) % size);
  const unsigned char* a = p - off;
  const Bits w0 = load_aligned_word<Bits>(a);
  if (off == 0) return w0;
  const Bits w1 = load_aligned_word<Bits>(a + size);
  const unsigned shift = 8u * off;  // in (0, 8·size)
  using wide = std::conditional_t<sizeof(Bits) == 8, uint64_t, uint32_t>;
  return static_cast<Bits>((static_cast<wide>(w0) >> shift) |
                           (static_cast<wide>(w1) << (8u * size - shift)));
}

/// @brief Element `index` of a D tensor starting at `bytes`, as its storage type (the raw
/// element: float16/bfloat16 bits as uint16_t, bool as its byte).
/// `Aligned` = the tensor start is aligned to the element size (then a plain typed load);
/// otherwise the load makes no alignment assumption (aligned words and a funnel shift on the
/// device, load_bits_unaligned; memcpy on the host, which compiles to an unaligned move).
template <dtype D, bool Aligned>
TRIALSTAT_HD_INLINE typename element_traits<D>::storage load_storage(const unsigned char* bytes,
                                                                     int64_t index) {
  using storage = typename element_traits<D>::storage;
  const unsigned char* p = bytes + index * static_cast<int64_t>(sizeof(storage));
#if defined(__CUDA_ARCH__)
  if constexpr (Aligned || sizeof(storage) == 1) {
    return *reinterpret_cast<const storage*>(p);
  } else {
    // No alignment assumed: two aligned word loads and a funnel shift (load_bits_unaligned).
    using bits_t = std::conditional_t<sizeof(storage) == 8, uint64_t,
                                      std::conditional_t<sizeof(storage) == 4, uint32_t, uint16_t>>;
    const bits_t bits = load_bits_unaligned<bits_t>(p);
    storage v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
#else
  storage v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}

/// @brief Element `index` of a D tensor starting at `bytes`, as float64 (load_storage, then
/// element_traits<D>::to_double).
template <dtype D, bool Aligned>
TRIALSTAT_HD_INLINE double load_as_double(const unsigned char* bytes, int64_t index) {
  return element_traits<D>::to_double(load_storage<D, Aligned>(bytes, index));
}

/// @brief Whether `address` is a multiple of the element size of D.
template <dtype D>
TRIALSTAT_HD_INLINE bool is_element_aligned(const unsigned char* address) {
  return (reinterpret_cast<uintptr_t>(address) % sizeof(typename element_traits<D>::storage)) == 0;
}

/// @brief A dtype as a compile-time value (the argument `visit_real_dtype` passes).
template <dtype D>
struct dtype_tag {
  static constexpr dtype value = D;
};

/// @brief Call `f(dtype_tag<D>{})` for the real dtype `t`; returns false (without calling f)
/// for string/complex/invalid, which statistics reject as unsupported_dtype.
template <class F>
TRIALSTAT_HD_INLINE bool visit_real_dtype(dtype t, F&& f) {
  switch (t) {
    case dtype::float32: f(dtype_tag<dtype::float32>{}); return true;
    case dtype::float64: f(dtype_tag<dtype::float64>{}); return true;
    case dtype::float16: f(dtype_tag<dtype::float16>{}); return true;
    case dtype::bfloat16: f(dtype_tag<dtype::bfloat16>{}); return true;
    case dtype::int8: f(dtype_tag<dtype::int8>{}); return true;
    case dtype::uint8: f(dtype_tag<dtype::uint8>{}); return true;
    case dtype::int16: f(dtype_tag<dtype::int16>{}); return true;
    case dtype::uint16: f(dtype_tag<dtype::uint16>{}); return true;
    case dtype::int32: f(dtype_tag<dtype::int32>{}); return true;
    case dtype::uint32: f(dtype_tag<dtype::uint32>{}); return true;
    case dtype::int64: f(dtype_tag<dtype::int64>{}); return true;
    case dtype::uint64: f(dtype_tag<dtype::uint64>{}); return true;
    case dtype::boolean: f(dtype_tag<dtype::boolean>{}); return true;
    default: return false;
  }
}

/// @brief Whether statistics kernels accept `t` (the dtypes `visit_real_dtype` dispatches).
TRIALSTAT_HD_INLINE bool is_supported_dtype(dtype t) {
  return visit_real_dtype(t, [](auto) {});
}

/// @brief Bytes per element of a supported dtype (0 otherwise); usable on the device.
TRIALSTAT_HD_INLINE int supported_element_size(dtype t) {
  int size = 0;
  visit_real_dtype(t, [&](auto tag) { size = element_size_v<decltype(tag)::value>; });
  return size;
}

/// @brief Pairwise-in-order merge of a sequence of partial results ("binary counter"): pushing
/// leaves 0, 1, 2, ... builds the balanced tree a recursive pairwise reduction would, so
/// rounding error grows with log2(leaves) instead of linearly, and the result depends only on the
/// sequence (deterministic). `Merge` is a callable (State, State) → State, applied as
/// merge(earlier, later).
template <class State, class Merge, int MaxLevels = 48>
class ordered_tree_merger {
 public:
  TRIALSTAT_HD explicit ordered_tree_merger(Merge merge) : merge_(merge) {}

  TRIALSTAT_HD void push(State leaf) {
    int level = 0;
    while (level < MaxLevels && (occupied_ >> level) & 1ULL) {
      leaf = merge_(levels_[level], leaf);
      occupied_ &= ~(1ULL << level);
      ++level;
    }
    if (level == MaxLevels) level = MaxLevels - 1;  // unreachable for < 2^48 leaves
    levels_[level] = leaf;
    occupied_ |= 1ULL << level;
  }

  /// @brief Merge of everything pushed (earlier leaves first); `empty` when nothing was pushed.
  TRIALSTAT_HD State finish(State empty) const {
    bool have = false;
    State total = empty;
    // Higher levels hold earlier leaves: combine from the highest occupied level down.
    for (int level = MaxLevels - 1; level >= 0; --level) {
      if ((occupied_ >> level) & 1ULL) {
        total = have ? merge_(total, levels_[level]) : levels_[level];
        have = true;
      }
    }
    return total;
  }

 private:
  Merge merge_;
  uint64_t occupied_ = 0;
  State levels_[MaxLevels];
};

}  // namespace trialstat::kernels

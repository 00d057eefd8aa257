// SPDX-License-Identifier: Apache-2.0
/// @file log_histogram_op.hpp
/// @brief The single definition of the fixed log-scale histogram, host and device: TensorBoard's
/// default buckets as smdebug builds them (spec/FORMAT.md §10; smdebug `_get_default_bins`, from
/// TensorFlow's `InitDefaultBucketsInner`):
///     v = 1e-12; while v < 1e20: positive edge v; v *= 1.1   (774 edges, float64 products)
///     edges = [−p₇₇₃ … −p₀, 0, p₀ … p₇₇₃]                       (1549 edges, 1548 bins)
/// and `numpy.histogram(x, bins=edges)`: bin i = [edge[i], edge[i+1]), the last bin closed;
/// values outside [edge[0], edge[1548]] are not binned. Because the edges are fixed, counts of
/// different steps and tensors are directly comparable (unlike the [min, max] histogram).
/// Beside the bins, every element lands in exactly one extra cell: NaN, +Inf, −Inf, finite below
/// edge[0] or finite above edge[1548] — nothing is dropped.
///
/// The cell of x, from its bits (no logarithm, no loop).
///  - Ranks. Along the real line the cells come in the order −Inf, below, bins 0 … 1547, above,
///    +Inf; rank r = 0 … 1551 is that position (NaN: rank 1552). Rank r ≥ 1 begins at
///    lower[r]: −DBL_MAX, edge[0], …, edge[1547], next_up(edge[1548]) (the last bin is closed),
///    +Inf — strictly increasing, so rank(x) = #{r ≥ 1 : x ≥ lower[r]} for every non-NaN x
///    (−0.0 ≥ 0.0: both zeros are in [0, 1e-12), as numpy has it).
///  - Index. The sign, the exponent clamped to 109 slots and the 4 leading mantissa bits of x
///    give one of 2 × 109 × 16 = 3488 intervals (`log_index_of_bits64`). Between the clamps
///    (2⁻⁴⁰ ≤ |x| < 2⁶⁷) an interval is [2^e·(1 + j/16), 2^e·(1 + (j+1)/16)): at most
///    log2(17/16) = 0.087 wide in log2, against 0.1375 (= log2 1.1) between consecutive edges,
///    so at most one lower bound falls inside. Slot 0 holds |x| < 2⁻⁴⁰ < 1e-12 (zeros,
///    subnormals: all in [0, 1e-12) or [−1e-12, 0)); slot 108 holds |x| ≥ 2⁶⁷ > edge[1548]
///    (above, below, ±Inf, NaN).
///  - Lookup. first_rank[index] is the rank of the interval's lowest value, and the rank of x is
///    first_rank + (x ≥ lower[first_rank + 1]): one comparison with an exact float64 bound.
///    make_log_histogram_tables() builds the table and verifies at compile time, interval by
///    interval, that rank(highest value) ≤ rank(lowest value) + 1 — the property the single
///    comparison needs — so a wrong table fails to compile.
///  - float32 (and bfloat16: the top half of a float32's bits; float16: widened exactly) never
///    becomes float64. Its bits index the same intervals (a float32 exponent maps to the same
///    slot, the 4 leading mantissa bits are the same; subnormals fall in slot 0, whose rank does
///    not depend on them), and inside one interval every float32 shares its top 13 bits, so its
///    order is the order of its 19 low bits — flipped for negative values (`log_key32`). One
///    32-bit entry per index, `rank32[index]` = first rank (11 bits) | threshold (20 bits):
///    rank = first + (key's 19 low bits ≥ threshold), where threshold is the position of the
///    first float32 ≥ lower[first + 1] inside the interval (2^19: none). The clamped slots hold
///    values of several exponents, so there the threshold is 2^19 and the values whose rank
///    differs from their slot's are taken apart first: −0.0 is read as +0.0, ±Inf and NaN are
///    selected after the lookup. make_log_histogram_tables() derives each threshold exactly
///    (power-of-two scalings and one subtraction of numbers in [1, 2): no rounding).
///  - float64, and integers converted to the nearest float64 (the statistics' rule for them),
///    use the float64 bits: first_rank[index], then next_lower[first] (two lookups).
#pragma once

#include <cstdint>

#include "kernels/common/element_op.hpp"

namespace trialstat::kernels {

/// @brief Positive edges p_k = 1e-12 · 1.1^k (by repeated multiplication), k < 774.
inline constexpr int log_histogram_positive_edges = 774;
inline constexpr int log_histogram_num_edges = 2 * log_histogram_positive_edges + 1;  // 1549
inline constexpr int log_histogram_num_bins = log_histogram_num_edges - 1;            // 1548

/// @brief Cells per tensor (the public layout, trialstat/stats/log_histogram.hpp): the bins,
/// then the five extra cells.
inline constexpr int log_cell_nan = log_histogram_num_bins;
inline constexpr int log_cell_pos_inf = log_histogram_num_bins + 1;
inline constexpr int log_cell_neg_inf = log_histogram_num_bins + 2;
inline constexpr int log_cell_below = log_histogram_num_bins + 3;  ///< finite x < edge[0]
inline constexpr int log_cell_above = log_histogram_num_bins + 4;  ///< finite x > edge[last]
inline constexpr int log_histogram_num_cells = log_histogram_num_bins + 5;

/// @brief Ranks: the cells in the order of the real line (see the file comment); the kernels
/// count by rank and map ranks to cells when they flush (`log_cell_of_rank`).
inline constexpr int log_rank_neg_inf = 0;
inline constexpr int log_rank_below = 1;
inline constexpr int log_rank_first_bin = 2;
inline constexpr int log_rank_above = log_rank_first_bin + log_histogram_num_bins;  // 1550
inline constexpr int log_rank_pos_inf = log_rank_above + 1;
inline constexpr int log_rank_nan = log_rank_above + 2;
inline constexpr int log_histogram_num_ranks = log_rank_nan + 1;  // = num_cells
static_assert(log_histogram_num_ranks == log_histogram_num_cells);

/// @brief Index layout: sign × 109 exponent slots × 16 (4 leading mantissa bits).
inline constexpr int log_index_mantissa_bits = 4;
inline constexpr int log_index_slots = 109;
/// Biased float64 exponent of slot 0 (2^-41 ≤ |x| < 2^-40, and everything smaller).
inline constexpr int log_index_first_exponent64 = 1023 - 41;
/// The same for float32's bias: 127 − 41.
inline constexpr int log_index_first_exponent32 = 127 - 41;
inline constexpr int log_index_per_sign = log_index_slots << log_index_mantissa_bits;  // 1744
inline constexpr int log_index_size = 2 * log_index_per_sign;                           // 3488

/// @brief The edge table (a struct so that it can be a constexpr value and a __constant__).
struct log_histogram_edge_table {
  double edge[log_histogram_num_edges];
};

/// @brief float32 entries: the first rank in the low log_rank32_bits, the threshold above.
inline constexpr int log_rank32_bits = 11;
inline constexpr uint32_t log_rank32_mask = (1u << log_rank32_bits) - 1;
inline constexpr int log_low_bits32 = 23 - log_index_mantissa_bits;  // 19
inline constexpr uint32_t log_low_mask32 = (1u << log_low_bits32) - 1;
static_assert(log_histogram_num_ranks <= (1 << log_rank32_bits));
static_assert(log_rank32_bits + log_low_bits32 + 1 <= 32, "rank and threshold (≤ 2^19) fit");

/// @brief The lookup tables (log_histogram_num_ranks ≤ 2^11: ranks fit 16 bits).
/// float64: `first_rank[index]`, then `next_lower[r]` = lower[r + 1] (+Inf for
/// r ≥ log_rank_pos_inf: never consulted with a verified table). float32: `rank32[index]`
/// (file comment). `first_rank` has padding so that a 32-bit gather at any index stays inside.
struct log_histogram_tables {
  uint32_t rank32[log_index_size];
  uint16_t first_rank[log_index_size + 2];
  double next_lower[log_histogram_num_ranks];
};

/// @brief Count of positive edges by smdebug's loop (checked against the constant above).
constexpr int count_log_histogram_positive_edges() {
  int k = 0;
  double v = 1e-12;
  while (v < 1e20) {
    ++k;
    v *= 1.1;
  }
  return k;
}
static_assert(count_log_histogram_positive_edges() == log_histogram_positive_edges,
              "smdebug's default bucket loop gives 774 positive edges");

/// @brief The edges, computed at compile time with smdebug's float64 products (exact IEEE
/// arithmetic in constant evaluation; tests compare with a run-time loop).
constexpr log_histogram_edge_table make_log_histogram_edges() {
  log_histogram_edge_table t{};
  constexpr int k_zero = log_histogram_positive_edges;
  double v = 1e-12;
  for (int k = 0; k < log_histogram_positive_edges; ++k) {
    t.edge[k_zero + 1 + k] = v;
    t.edge[k_zero - 1 - k] = -v;
    v *= 1.1;
  }
  t.edge[k_zero] = 0.0;
  return t;
}

namespace log_histogram_detail {

/// 2^e for |e| ≤ 1023, exactly (constant evaluation).
constexpr double power_of_two(int e) {
  double r = 1.0;
  for (; e > 0; --e) r *= 2.0;
  for (; e < 0; ++e) r *= 0.5;
  return r;
}

/// The exponent e with 2^e ≤ a < 2^(e+1), for a normal a > 0.
constexpr int floor_log2(double a) {
  int e = 0;
  while (a >= 2.0) { a *= 0.5; ++e; }
  while (a < 1.0) { a *= 2.0; --e; }
  return e;
}

/// lower[r] for 1 ≤ r ≤ log_rank_pos_inf (file comment).
constexpr double lower_bound_of_rank(const log_histogram_edge_table& e, int r) {
  if (r == log_rank_below) return -1.7976931348623157e308;
  if (r == log_rank_above) {
    const double last = e.edge[log_histogram_num_edges - 1];
    return last + power_of_two(floor_log2(last) - 52);  // next_up
  }
  if (r >= log_rank_pos_inf) return __builtin_huge_val();
  return e.edge[r - log_rank_first_bin];
}

/// rank(x) = #{r ≥ 1 : x ≥ lower[r]} by binary search (constant evaluation only).
constexpr int rank_of(const log_histogram_edge_table& e, double x) {
  int lo = 0, hi = log_rank_pos_inf;  // rank(x) ∈ [lo, hi]
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (x >= lower_bound_of_rank(e, mid)) lo = mid; else hi = mid - 1;
  }
  return lo;
}

}  // namespace log_histogram_detail

/// @brief The lookup tables, built and verified at compile time (see the file comment); a table
/// that would need a second comparison somewhere throws, which fails constant evaluation.
constexpr log_histogram_tables make_log_histogram_tables() {
  using namespace log_histogram_detail;
  const log_histogram_edge_table e = make_log_histogram_edges();
  log_histogram_tables t{};
  for (int r = 1; r < log_rank_pos_inf; ++r) {
    if (!(lower_bound_of_rank(e, r) < lower_bound_of_rank(e, r + 1))) throw "bounds not increasing";
  }
  for (int r = 0; r < log_histogram_num_ranks; ++r) {
    const double next = r + 1 <= log_rank_pos_inf ? lower_bound_of_rank(e, r + 1) : __builtin_huge_val();
    t.next_lower[r] = next;
  }
  constexpr int per_slot = 1 << log_index_mantissa_bits;
  for (int sign = 0; sign < 2; ++sign) {
    for (int slot = 0; slot < log_index_slots; ++slot) {
      for (int j = 0; j < per_slot; ++j) {
        // [low, high]: the magnitudes this index can hold (a superset for the clamped slots).
        const int exponent = slot + log_index_first_exponent64 - 1023;
        double low = power_of_two(exponent) * (1.0 + j / 16.0);
        double high = power_of_two(exponent) * (1.0 + (j + 1) / 16.0 - power_of_two(-52));
        if (slot == 0) {
          low = 0.0;
          high = power_of_two(exponent + 1) * (1.0 - power_of_two(-53));
        } else if (slot == log_index_slots - 1) {
          high = __builtin_huge_val();
        }
        const double lowest = sign != 0 ? -high : low;
        const double highest = sign != 0 ? (low == 0.0 ? -0.0 : -low) : high;
        const int first = rank_of(e, lowest);
        const int last = rank_of(e, highest);
        if (last > first + 1 || first >= log_rank_pos_inf) throw "an index spans two bounds";
        const int index = sign * log_index_per_sign + slot * per_slot + j;
        t.first_rank[index] = static_cast<uint16_t>(first);
        // float32: the threshold among the interval's 2^19 float32 keys (file comment).
        uint32_t threshold = 1u << log_low_bits32;  // none reaches the next bound
        int first32 = first;
        if (slot == 0 && sign != 0) {
          first32 = rank_of(e, -high);  // −0.0 is read as +0.0: the rest is one rank
          if (rank_of(e, -power_of_two(-149)) != first32) throw "slot 0 not one rank";
        } else if (slot == 0 || slot == log_index_slots - 1) {
          // One rank for the finite values (±Inf are selected apart).
          const double finite_high = slot == 0 ? high : 3.4028234663852886e38;
          if (rank_of(e, sign != 0 ? -finite_high : low) != rank_of(e, sign != 0 ? -low : finite_high)) {
            throw "a clamped slot spans two ranks";
          }
          first32 = rank_of(e, sign != 0 ? -finite_high : low);
        } else if (last == first + 1) {
          const double bound = lower_bound_of_rank(e, first + 1);
          const double scale = power_of_two(-exponent);
          const double base = 1.0 + j / 16.0;
          const double mag = (bound < 0.0 ? -bound : bound) * scale - base;  // exact, in [0, 1/16)
          const double pos = mag * power_of_two(23);  // in float32 ulps of the interval
          auto m = static_cast<int64_t>(pos);         // floor (pos ≥ 0)
          if (bound > 0.0) {
            // Positive: key = m; x ≥ bound ⇔ m ≥ ceil(pos).
            if (static_cast<double>(m) < pos) ++m;
            threshold = static_cast<uint32_t>(m);
          } else {
            // Negative: |x| ≤ |bound| ⇔ m ≤ floor(pos); key = 2^19 − 1 − m.
            threshold = static_cast<uint32_t>((int64_t{1} << log_low_bits32) - 1 - m);
          }
          if (threshold > (1u << log_low_bits32)) throw "threshold out of range";
        }
        t.rank32[index] = static_cast<uint32_t>(first32) | (threshold << log_rank32_bits);
      }
    }
  }
  t.first_rank[log_index_size] = t.first_rank[log_index_size + 1] = 0;
  return t;
}

/// @brief Pointers to the tables where the caller keeps them (host: a constexpr copy; device:
/// shared memory).
struct log_histogram_lookup {
  const uint32_t* rank32;
  const uint16_t* first_rank;
  const double* next_lower;
};

/// @brief Slot of a biased exponent `biased` whose slot-0 exponent is `first`.
TRIALSTAT_HD_INLINE constexpr int log_index_slot(int biased, int first) {
  const int s = biased - first;
  return s < 0 ? 0 : (s > log_index_slots - 1 ? log_index_slots - 1 : s);
}

/// @brief The index of a float64 by its bits.
TRIALSTAT_HD_INLINE int log_index_of_bits64(uint64_t bits) {
  const int sign = static_cast<int>(bits >> 63);
  const int slot = log_index_slot(static_cast<int>((bits >> 52) & 0x7ff), log_index_first_exponent64);
  const int lead = static_cast<int>((bits >> (52 - log_index_mantissa_bits)) & 15);
  return sign * log_index_per_sign + (slot << log_index_mantissa_bits) + lead;
}

/// @brief The index of a float32 by its bits (the same interval as its float64 value's).
TRIALSTAT_HD_INLINE constexpr int log_index_of_bits32(uint32_t bits) {
  const int sign = static_cast<int>(bits >> 31);
  const int slot = log_index_slot(static_cast<int>((bits >> 23) & 0xff), log_index_first_exponent32);
  const int lead = static_cast<int>((bits >> (23 - log_index_mantissa_bits)) & 15);
  return sign * log_index_per_sign + (slot << log_index_mantissa_bits) + lead;
}

/// @brief Rank of a float64 (log_rank_nan for NaN).
TRIALSTAT_HD_INLINE int log_histogram_rank64(const log_histogram_lookup& t, double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const int first = t.first_rank[log_index_of_bits64(bits)];
  const int rank = first + (x >= t.next_lower[first] ? 1 : 0);
  return is_nan(x) ? log_rank_nan : rank;
}

/// @brief float32 bits with −0.0 read as +0.0 (its rank; slot 0's lookup assumes it).
TRIALSTAT_HD_INLINE uint32_t log_canonical_bits32(uint32_t bits) {
  return bits == 0x80000000u ? 0u : bits;
}

/// @brief The order key of float32 bits inside one interval: the 19 low bits, flipped for
/// negative values (larger magnitude = smaller value).
TRIALSTAT_HD_INLINE constexpr uint32_t log_key32(uint32_t bits) {
  const uint32_t flip = static_cast<uint32_t>(static_cast<int32_t>(bits) >> 31);
  return (bits ^ flip) & log_low_mask32;
}

/// @brief Rank of a float32 from its own bits (log_rank_nan for NaN).
TRIALSTAT_HD_INLINE int log_histogram_rank32(const log_histogram_lookup& t, float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits = log_canonical_bits32(bits);
  const uint32_t entry = t.rank32[log_index_of_bits32(bits)];
  const int rank = static_cast<int>(entry & log_rank32_mask) +
                   (log_key32(bits) >= (entry >> log_rank32_bits) ? 1 : 0);
  if (x != x) return log_rank_nan;
  if (bits == 0x7f800000u) return log_rank_pos_inf;
  if (bits == 0xff800000u) return log_rank_neg_inf;
  return rank;
}

/// @brief Whether D's rank is taken in float32 (float32, float16, bfloat16: exact) rather
/// than float64 (element_op.hpp's conversion: float64, integers, bool).
template <dtype D>
inline constexpr bool log_histogram_uses_float32 =
    D == dtype::float32 || D == dtype::float16 || D == dtype::bfloat16;

/// @brief Element `index` of a float32/float16/bfloat16 tensor as float32 (exact): float32 as
/// it is, bfloat16 as the top half of a float32's bits, float16 widened.
template <dtype D, bool Aligned>
TRIALSTAT_HD_INLINE float load_as_float32(const unsigned char* bytes, int64_t index) {
  const auto v = load_storage<D, Aligned>(bytes, index);
  if constexpr (D == dtype::float32) {
    return v;
  } else if constexpr (D == dtype::bfloat16) {
    return detail::bfloat16_bits_to_float(v);
  } else {
    static_assert(D == dtype::float16);
    return detail::half_bits_to_float(v);
  }
}

/// @brief Rank of element `index` of a D tensor.
template <dtype D, bool Aligned>
TRIALSTAT_HD_INLINE int log_histogram_rank_of_element(const log_histogram_lookup& t,
                                                      const unsigned char* bytes, int64_t index) {
  if constexpr (log_histogram_uses_float32<D>) {
    return log_histogram_rank32(t, load_as_float32<D, Aligned>(bytes, index));
  } else {
    return log_histogram_rank64(t, load_as_double<D, Aligned>(bytes, index));
  }
}

/// @brief The public cell of a rank.
TRIALSTAT_HD_INLINE int log_cell_of_rank(int rank) {
  if (rank >= log_rank_first_bin && rank < log_rank_above) return rank - log_rank_first_bin;
  switch (rank) {
    case log_rank_neg_inf: return log_cell_neg_inf;
    case log_rank_below: return log_cell_below;
    case log_rank_above: return log_cell_above;
    case log_rank_pos_inf: return log_cell_pos_inf;
    default: return log_cell_nan;
  }
}

/// @brief The cell of a float64 x (a bin index, or one of the extra cells).
TRIALSTAT_HD_INLINE int log_histogram_cell(const log_histogram_lookup& t, double x) {
  return log_cell_of_rank(log_histogram_rank64(t, x));
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
/// @file log_histogram_top_bits32.hpp
/// @brief The CPU twin's float32 rank table of the log-scale histogram (the verified step to its
/// label table, log_histogram_labels_cpu.hpp, which the counts use): `rank32` of
/// log_histogram_op.hpp re-indexed by the 13 top bits of a float32 (sign, the whole exponent,
/// the 4 leading mantissa bits), so that a lane's index is one shift — no clamp, no sign
/// offset — and the special values need no selects: every float32 bit pattern, ±0, ±Inf and
/// NaN included, has rank = first + (key ≥ threshold) from its own entry (same entry layout,
/// same order key `log_key32`). 8192 entries, 32 KiB: a tensor touches the few lines of its
/// exponents. The CUDA twin keeps the 3488-entry table (shared memory is scarcer there).
///
/// Entries (E the biased exponent, j the 4 leading mantissa bits):
///  - 0 < E < 255, and E = 0 for x ≥ +0: the entry of rank32 for the same interval
///    (`log_index_of_bits32`: the clamped slots' entries hold one rank for all their finite
///    values — zeros and subnormals included, +0.0 is in [0, 1e-12));
///  - E = 0, negative, j = 0: rank32's (the rank of [−1e-12, 0): 775) with threshold 2^19 − 1.
///    −0.0 (key 2^19 − 1, the largest of this entry: every other value here has a mantissa
///    bit set, which flips to a smaller key) gets 776, the rank of [0, 1e-12), as numpy has it;
///  - E = 255, positive: j = 0 holds +Inf (key 0) and NaNs (key ≥ 1): first = +Inf's rank,
///    threshold 1; j ≠ 0: NaN only (threshold 2^19: no step);
///  - E = 255, negative: j ≠ 0: NaN only; j = 0 holds NaNs (keys < 2^19 − 1) and −Inf (key
///    2^19 − 1): first = NaN's rank, threshold 2^19 − 1, so −Inf gets
///    `log_rank_neg_inf_alias` = NaN's rank + 1 — one rank past the shared ones, which the
///    label table (log_histogram_labels_cpu.hpp) maps back to −Inf's.
/// make_log_histogram_top_table32() checks the special entries' ranks at compile time;
/// tests/kernels/log_histogram_cpu_test.cpp checks every entry at its interval's ends and on
/// both sides of its threshold against log_histogram_rank32, and every key of the special
/// entries.
#pragma once

#include <cstdint>

#include "kernels/log_histogram/log_histogram_op.hpp"

namespace trialstat::kernels {

/// @brief Index bits: sign, 8 exponent bits, log_index_mantissa_bits leading mantissa bits.
inline constexpr int log_top_bits32 = 1 + 8 + log_index_mantissa_bits;  // 13
inline constexpr int log_top_size32 = 1 << log_top_bits32;               // 8192
static_assert(log_top_bits32 + log_low_bits32 == 32, "the index and the key split the bits");

/// @brief −Inf's rank by this table (NaN's rank + 1; the label table maps it back to −Inf's).
inline constexpr int log_rank_neg_inf_alias = log_histogram_num_ranks;
static_assert(log_rank_neg_inf_alias < (1 << log_rank32_bits));

/// @brief The entries (a struct so that it can be a constexpr value).
struct log_histogram_top_table32 {
  uint32_t entry[log_top_size32];
};

/// @brief Rank of float32 bits by the table: entry[bits >> 19] and one key comparison.
/// Equal to log_histogram_rank32 for every bit pattern, except −Inf: log_rank_neg_inf_alias.
constexpr int log_histogram_top_rank32(const log_histogram_top_table32& t, uint32_t bits) {
  const uint32_t entry = t.entry[bits >> log_low_bits32];
  return static_cast<int>(entry & log_rank32_mask) +
         (log_key32(bits) >= (entry >> log_rank32_bits) ? 1 : 0);
}

/// @brief The table, from `rank32` of log_histogram_op.hpp's tables (see the file comment);
/// an inconsistent special entry throws, which fails constant evaluation.
constexpr log_histogram_top_table32 make_log_histogram_top_table32(const log_histogram_tables& t) {
  log_histogram_top_table32 r{};
  constexpr uint32_t max_key = log_low_mask32;  // 2^19 − 1
  const auto entry = [](int first, uint32_t threshold) {
    return static_cast<uint32_t>(first) | (threshold << log_rank32_bits);
  };
  for (uint32_t top = 0; top < log_top_size32; ++top) {
    const bool negative = (top >> (log_top_bits32 - 1)) != 0;
    const uint32_t exponent = (top >> log_index_mantissa_bits) & 0xffu;
    const uint32_t lead = top & ((1u << log_index_mantissa_bits) - 1);
    if (exponent == 0xffu) {
      if (lead != 0) {
        r.entry[top] = entry(log_rank_nan, 1u << log_low_bits32);
      } else if (!negative) {
        r.entry[top] = entry(log_rank_pos_inf, 1);  // key 0: +Inf; key ≥ 1: NaN
      } else {
        r.entry[top] = entry(log_rank_nan, max_key);  // key max: −Inf (the alias)
      }
      continue;
    }
    const uint32_t base = t.rank32[log_index_of_bits32(top << log_low_bits32)];
    if (exponent == 0 && negative && lead == 0) {
      // −0.0: one rank above the rest of the entry, which must be [−1e-12, 0).
      if ((base >> log_rank32_bits) != (1u << log_low_bits32)) throw "slot 0 has a threshold";
      const uint32_t positive_zero = t.rank32[log_index_of_bits32(0)];
      if ((base & log_rank32_mask) + 1 != (positive_zero & log_rank32_mask)) {
        throw "-0.0 is not one rank above [-1e-12, 0)";
      }
      r.entry[top] = entry(static_cast<int>(base & log_rank32_mask), max_key);
      continue;
    }
    r.entry[top] = base;
  }
  if (log_rank_nan + 1 != log_rank_neg_inf_alias) throw "the alias follows NaN";
  // The special values (their neighbours are rank32's, checked by the tests).
  struct expected { uint32_t bits; int rank; };
  constexpr expected specials[] = {
      {0x00000000u, log_rank_first_bin + log_histogram_positive_edges},       // +0.0
      {0x80000000u, log_rank_first_bin + log_histogram_positive_edges},       // −0.0
      {0x80000001u, log_rank_first_bin + log_histogram_positive_edges - 1},   // −subnormal
      {0x7f800000u, log_rank_pos_inf},  {0xff800000u, log_rank_neg_inf_alias},
      {0x7f800001u, log_rank_nan},      {0x7fc00000u, log_rank_nan},
      {0x7fffffffu, log_rank_nan},      {0xff800001u, log_rank_nan},
      {0xffc00000u, log_rank_nan},      {0xffffffffu, log_rank_nan},
      {0x7f7fffffu, log_rank_above},    {0xff7fffffu, log_rank_below}};
  for (const expected& e : specials) {
    if (log_histogram_top_rank32(r, e.bits) != e.rank) throw "a special value's rank";
  }
  return r;
}

}  // namespace trialstat::kernels

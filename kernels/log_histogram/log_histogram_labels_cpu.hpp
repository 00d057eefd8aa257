// SPDX-License-Identifier: Apache-2.0
/// @file log_histogram_labels_cpu.hpp
/// @brief The CPU twin's counter labels of the log-scale histogram and its float32 label table:
/// the 8192 entries of log_histogram_top_bits32.hpp re-encoded so that the label of float32
/// bits b is `(entry[b >> 19] + b) >> 20` (uint32 arithmetic) — one add and one shift instead
/// of the key's sign flip, the threshold's extraction, a comparison and a conditional add.
///
/// Labels (log_histogram_num_labels = 1555 counters): positive-side ranks r ∈ [776, 1552]
/// (+0.0 and up, +Inf, NaN) count at r − 776; negative-side ranks r ∈ [0, 776] (−Inf … −0.0)
/// at 1553 − r, mirrored so that along a negative interval's low mantissa bits (larger bits =
/// larger magnitude = smaller rank) the label grows, like a positive one's; NaNs of the negative
/// exponent-255 entry (whose key 0 is −Inf) count at 1554. Rank 776 ([0, 1e-12)) has two labels,
/// 0 (+0.0, positive values) and 777 (−0.0); the flush maps every label to its cell
/// (log_cell_of_label).
///
/// Entries. With `low` the 19 low bits of the value (its mantissa's rest, not flipped) and an
/// entry of log_histogram_top_bits32.hpp saying rank = first + (key ≥ threshold):
///  - positive: label = (first − 776) + (low ≥ threshold), as key = low;
///  - negative: key = 2^19 − 1 − low, so (key ≥ threshold) = 1 − (low ≥ 2^19 − threshold) and
///    label = N(first + 1) + (low ≥ 2^19 − threshold) with N(r) = 1553 − r (N(first) =
///    N(first + 1) + 1). −Inf's alias (first + 1 = log_rank_neg_inf_alias) labels as rank 0,
///    and NaN (first) as 1554.
/// Written as label = L + (low ≥ t) with t ∈ [0, 2^19], the sum L · 2^20 + (2^20 − t) + low
/// carries into bit 20 exactly when low ≥ t (2^20 − t + low lies in [2^19, 2^20 + 2^19)), and
/// L ≤ 1554 keeps it below 2^31. The entry holds that sum's constant part minus the index's own
/// bits, index · 2^19 (mod 2^32), so that adding the whole of b — index · 2^19 + low — leaves
/// exactly the sum: no mask for the low bits.
/// make_log_histogram_label_table32() builds the entries from the top table and checks, for
/// every entry, that the label of the interval's ends and of both sides of the step maps back
/// to the top table's rank (−Inf's alias as rank 0), so an inconsistent table fails to
/// compile; tests/kernels/log_histogram_cpu_test.cpp checks every key of the special entries.
#pragma once

#include <cstdint>

#include "kernels/log_histogram/log_histogram_op.hpp"
#include "kernels/log_histogram/log_histogram_top_bits32.hpp"

namespace trialstat::kernels {

/// @brief The rank whose labels split the two sides: [0, 1e-12), +0.0's and −0.0's.
inline constexpr int log_label_zero_rank = log_rank_first_bin + log_histogram_positive_edges;  // 776
/// @brief Negative-side labels are log_label_mirror − rank.
inline constexpr int log_label_mirror = 2 * log_label_zero_rank + 1;  // 1553
/// @brief NaN (positive sign: the padding value 0x7fc00000 too) and NaN of negative sign.
inline constexpr int log_label_nan = log_rank_nan - log_label_zero_rank;  // 776
inline constexpr int log_label_nan_negative = log_label_mirror + 1;       // 1554
inline constexpr int log_histogram_num_labels = log_label_nan_negative + 1;  // 1555
static_assert(log_rank_nan == 2 * log_label_zero_rank, "NaN is the last positive-side rank");

/// @brief Bits of the entry below the label, and the value bits below the table index.
inline constexpr int log_label_shift = 20;
static_assert(log_low_bits32 + 1 == log_label_shift, "2^20 − t and low < 2^19 fit below the label");
static_assert(uint64_t{log_histogram_num_labels} << log_label_shift < (uint64_t{1} << 31));

/// @brief The label of a rank counted on the positive side (rank ≥ 776, NaN included) or,
/// for smaller ranks, on the negative side. The float64 lanes count by this.
constexpr int log_label_of_rank(int rank) {
  return rank >= log_label_zero_rank ? rank - log_label_zero_rank : log_label_mirror - rank;
}

/// @brief The rank a label counts (log_rank_nan for both NaN labels).
constexpr int log_rank_of_label(int label) {
  if (label <= log_label_nan) return label + log_label_zero_rank;
  if (label == log_label_nan_negative) return log_rank_nan;
  return log_label_mirror - label;
}

/// @brief The public cell of a label.
inline int log_cell_of_label(int label) { return log_cell_of_rank(log_rank_of_label(label)); }

/// @brief The entries (a struct so that it can be a constexpr value).
struct log_histogram_label_table32 {
  uint32_t entry[log_top_size32];
};

/// @brief Label of float32 bits by the table: (entry[bits >> 19] + bits) >> 20, mod 2^32.
constexpr int log_histogram_label32(const log_histogram_label_table32& t, uint32_t bits) {
  return static_cast<int>((t.entry[bits >> log_low_bits32] + bits) >> log_label_shift);
}

/// @brief The step t of an entry (label + 1 for low bits ≥ t; 0 ≤ t ≤ 2^19).
constexpr uint32_t log_label_step_of_entry(const log_histogram_label_table32& t, uint32_t index) {
  constexpr uint32_t field = (1u << log_label_shift) - 1;
  // 2^20 − t in the low field (t = 0 carried into the label: field 0).
  return ((1u << log_label_shift) - ((t.entry[index] + (index << log_low_bits32)) & field)) & field;
}

/// @brief The table, from the top table (see the file comment); an entry whose labels do not
/// give the top table's ranks throws, which fails constant evaluation.
constexpr log_histogram_label_table32 make_log_histogram_label_table32(
    const log_histogram_top_table32& top) {
  log_histogram_label_table32 r{};
  constexpr uint32_t keys = 1u << log_low_bits32;
  // A top-table rank as a rank (−Inf's alias is −Inf).
  const auto true_rank = [](int rank) { return rank == log_rank_neg_inf_alias ? log_rank_neg_inf : rank; };
  for (uint32_t index = 0; index < static_cast<uint32_t>(log_top_size32); ++index) {
    const bool negative = (index >> (log_top_bits32 - 1)) != 0;
    const uint32_t e = top.entry[index];
    const int first = static_cast<int>(e & log_rank32_mask);
    const uint32_t threshold = e >> log_rank32_bits;
    if (threshold > keys) throw "a top-table threshold above 2^19";
    int label = 0;
    uint32_t step = 0;  // t: label + 1 from low ≥ t
    if (!negative) {
      if (first < log_label_zero_rank) throw "a positive entry below rank 776";
      label = first - log_label_zero_rank;
      step = threshold;
    } else {
      const int above = true_rank(first + 1);  // the rank of the keys ≥ threshold
      if (above > log_label_zero_rank) throw "a negative entry above rank 776";
      label = log_label_mirror - above;
      step = keys - threshold;
    }
    r.entry[index] = (static_cast<uint32_t>(label) << log_label_shift) + ((1u << log_label_shift) - step) -
                     (index << log_low_bits32);  // mod 2^32
    if (log_label_step_of_entry(r, index) != step) throw "the step does not decode";
    // The labels at the ends and around the step map back to the top table's ranks.
    const uint32_t probes[] = {0u, step == 0 ? 0u : step - 1, step < keys ? step : keys - 1, keys - 1};
    for (const uint32_t low : probes) {
      const uint32_t bits = (index << log_low_bits32) | low;
      const int want = true_rank(log_histogram_top_rank32(top, bits));
      const int got_label = log_histogram_label32(r, bits);
      if (log_rank_of_label(got_label) != want) throw "a label is not the top table's rank";
      if ((log_rank_of_label(got_label) == log_rank_nan) !=
          (got_label == log_label_nan || got_label == log_label_nan_negative)) {
        throw "NaN labels";
      }
    }
  }
  return r;
}

}  // namespace trialstat::kernels

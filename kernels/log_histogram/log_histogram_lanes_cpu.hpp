// SPDX-License-Identifier: Apache-2.0
/// @file log_histogram_lanes_cpu.hpp
/// @brief Body of the log-scale histogram's CPU twin, compiled once per ISA by
/// kernels/common/cpu_regions.hpp from log_histogram_cpu.cpp (no include guard, no includes).
///
/// The counter of a value is its label (log_histogram_labels_cpu.hpp): log_histogram_label32 /
/// log_label_of_rank(log_histogram_rank64) (log_histogram_op.hpp) spelled over lanes. float32
/// goes 16 lanes at a time from its own bits: the index (one shift of the 13 top bits), one
/// gather of the 8192-entry label table (AVX-512 / AVX2; element loads on the baseline), then
/// (entry + low 19 bits) >> 20 — ±0, ±Inf and NaN included, with no select.
/// bfloat16 and float16 are widened to float32 first (a shift; F16C's vcvtph2ps on
/// AVX2/AVX-512). float64 goes 8 lanes at a time (first_rank by element, a gather of the
/// float64 bound, one comparison, the rank's label); integers and bool are converted to float64
/// element by element first. Every lane computes exactly the scalar function, so every ISA gives
/// the same labels.
///
/// Why one gather: on AMD Zen 4 (this project's benchmark machine) a 16-lane gather costs about
/// as much as the rest of the lane work; the first version, with a second gather of the
/// float32 bound indexed by the first, spent ≈ 55% of its cycles waiting on the two. With one
/// gather the lane arithmetic is the cost: the 3488-entry index (clamp, sign offset) and the
/// selects of −0.0, ±Inf and NaN were ≈ 20 of the ≈ 28 vector instructions per 16 lanes; the
/// 13-bit index leaves ≈ 9, and the label entries ≈ 7 (no sign flip of the key, no threshold
/// extraction, comparison and conditional add: one add carries into the label; thirteenth
/// session). An arithmetic guess of the rank (exponent + degree-5 polynomial for
/// log2 of the mantissa, final outside a 2^-11 margin of an edge) measured slower than the
/// gather it replaced (≈ 45 instructions per 16 lanes; bench/RESULTS.md, twelfth session).

// NOLINTBEGIN (included inside a namespace by cpu_regions.hpp)

/// table[idx] for every lane.
[[gnu::always_inline]] inline native_i32_full gather_u32(const uint32_t* table,
                                                         const native_i32_full& idx) {
#if TRIALSTAT_CPU_NATIVE_BYTES == 64
  return (native_i32_full)_mm512_mask_i32gather_epi32(
      _mm512_setzero_si512(), static_cast<__mmask16>(0xFFFF), (__m512i)idx, table, 4);
#elif TRIALSTAT_CPU_NATIVE_BYTES == 32
  return (native_i32_full)_mm256_i32gather_epi32(reinterpret_cast<const int*>(table),
                                                 (__m256i)idx, 4);
#else
  native_i32_full r;
  for (int j = 0; j < native_u32_count; ++j) r[j] = static_cast<int32_t>(table[idx[j]]);
  return r;
#endif
}

/// Labels of one native register of float32 bits (log_histogram_label32 per lane: a shift,
/// one gather, an add and a shift; log_histogram_labels_cpu.hpp).
[[gnu::always_inline]] inline native_i32_full labels_of_f32_bits(const log_histogram_label_table32& t,
                                                                 native_u32 bits) {
  const native_i32_full idx = (native_i32_full)(bits >> log_low_bits32);
  const native_u32 entry = (native_u32)gather_u32(t.entry, idx);
  return (native_i32_full)((entry + (bits & log_low_mask32)) >> log_label_shift);
}

/// Labels of n float32 values (a multiple of 16; any alignment) at `p` into `labels`.
[[gnu::always_inline]] inline void labels_of_f32_block(const log_histogram_label_table32& t,
                                                       const unsigned char* p, int64_t n,
                                                       int32_t* labels) {
  for (int64_t i = 0; i < n; i += native_u32_count) {
    native_u32 b;
    __builtin_memcpy(&b, p + i * 4, sizeof b);
    const native_i32_full r = labels_of_f32_bits(t, b);
    __builtin_memcpy(labels + i, &r, sizeof r);
  }
}

/// Test entry: labels of n float32 bit patterns (any n) by the lane path above.
void labels_of_f32(const log_histogram_label_table32& t, const uint32_t* bits, int64_t n,
                   int32_t* labels) {
  constexpr int64_t pad = 16;
  const int64_t full = n & ~(pad - 1);
  labels_of_f32_block(t, reinterpret_cast<const unsigned char*>(bits), full, labels);
  if (full < n) {
    alignas(64) uint32_t tail[pad] = {};
    alignas(64) int32_t tail_labels[pad];
    __builtin_memcpy(tail, bits + full, static_cast<std::size_t>(n - full) * 4);
    labels_of_f32_block(t, reinterpret_cast<const unsigned char*>(tail), pad, tail_labels);
    __builtin_memcpy(labels + full, tail_labels, static_cast<std::size_t>(n - full) * 4);
  }
}

/// first_rank[idx] and next_lower[rank] for 64-bit lanes.
[[gnu::always_inline]] inline native_i64 gather_first_rank64(const uint16_t* table, const native_i64& idx) {
  native_i64 r;
  for (int j = 0; j < native_u64_count; ++j) r[j] = table[idx[j]];
  return r;
}
[[gnu::always_inline]] inline native_f64 gather_bound64(const double* table, const native_i64& rank) {
#if TRIALSTAT_CPU_NATIVE_BYTES == 64
  return (native_f64)_mm512_mask_i64gather_pd(
      _mm512_setzero_pd(), static_cast<__mmask8>(0xFF), (__m512i)rank, table, 8);
#elif TRIALSTAT_CPU_NATIVE_BYTES == 32
  return (native_f64)_mm256_i64gather_pd(table, (__m256i)rank, 8);
#else
  native_f64 r;
  for (int j = 0; j < native_u64_count; ++j) r[j] = table[rank[j]];
  return r;
#endif
}

/// Labels (log_label_of_rank) of n ≤ cpu_block_elements float64 values (padded to a multiple
/// of the native width).
[[gnu::always_inline]] inline void labels_of_f64_block(const log_histogram_lookup& t,
                                                       const double* values, int64_t n,
                                                       int32_t* labels) {
  for (int64_t i = 0; i < n; i += native_u64_count) {
    native_f64 x;
    native_u64 bits;
    __builtin_memcpy(&x, values + i, sizeof x);
    __builtin_memcpy(&bits, &x, sizeof bits);
    const native_i64 exponent = (native_i64)((bits >> 52) & 0x7ffu);
    native_i64 slot = exponent - log_index_first_exponent64;
    slot = slot < 0 ? 0 : slot;
    slot = slot > log_index_slots - 1 ? log_index_slots - 1 : slot;
    const native_i64 idx = (((native_i64)bits >> 63) & log_index_per_sign) +
                           (slot << log_index_mantissa_bits) +
                           (native_i64)((bits >> (52 - log_index_mantissa_bits)) & 15u);
    const native_i64 first = gather_first_rank64(t.first_rank, idx);
    const native_f64 bound = gather_bound64(t.next_lower, first);
    native_i64 rank = first - (x >= bound);
    rank = x != x ? native_i64{} + log_rank_nan : rank;
    const native_i64 label = rank >= log_label_zero_rank ? rank - log_label_zero_rank
                                                          : log_label_mirror - rank;
    for (int j = 0; j < native_u64_count; ++j) labels[i + j] = static_cast<int32_t>(label[j]);
  }
}

/// float16 bits → float32 bits, n a multiple of 8 (F16C where the region has it).
[[gnu::always_inline]] inline void widen_f16_block(const unsigned char* p, int64_t n, uint32_t* out) {
#if TRIALSTAT_CPU_NATIVE_BYTES >= 32
  for (int64_t i = 0; i < n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i * 2));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_castps_si256(_mm256_cvtph_ps(h)));
  }
#else
  for (int64_t i = 0; i < n; ++i) {
    const float f = load_as_float32<dtype::float16, false>(p, i);
    __builtin_memcpy(out + i, &f, 4);
  }
#endif
}

/// Labels of the n ≤ cpu_block_elements elements of a D tensor at `p` into `labels` (the tail
/// padded with NaN labels, log_label_nan, up to the returned multiple of 16).
template <dtype D>
[[gnu::always_inline]] inline int64_t label_block(const log_histogram_lookup& t,
                                                  const log_histogram_label_table32& table32,
                                                  const unsigned char* p, int64_t n,
                                                  int32_t* labels) {
  constexpr int64_t pad = 16;
  const int64_t padded = (n + pad - 1) / pad * pad;
  if constexpr (D == dtype::float32) {
    // Straight from the tensor's bytes; only the tail goes through a padded copy.
    const int64_t full = n & ~(pad - 1);
    labels_of_f32_block(table32, p, full, labels);
    if (full < n) {
      alignas(64) uint32_t tail[pad];
      for (int64_t i = 0; i < pad; ++i) tail[i] = 0x7fc00000u;  // NaN
      __builtin_memcpy(tail, p + full * 4, static_cast<std::size_t>(n - full) * 4);
      labels_of_f32_block(table32, reinterpret_cast<const unsigned char*>(tail), pad, labels + full);
    }
  } else if constexpr (log_histogram_uses_float32<D>) {
    alignas(64) uint32_t bits[cpu_block_elements];
    if constexpr (D == dtype::bfloat16) {
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        __builtin_memcpy(&h, p + i * 2, 2);
        bits[i] = static_cast<uint32_t>(h) << 16;
      }
    } else {
      const int64_t full = n & ~int64_t{7};
      widen_f16_block(p, full, bits);
      for (int64_t i = full; i < n; ++i) {
        const float f = load_as_float32<D, false>(p, i);
        __builtin_memcpy(bits + i, &f, 4);
      }
    }
    for (int64_t i = n; i < padded; ++i) bits[i] = 0x7fc00000u;  // NaN
    labels_of_f32_block(table32, reinterpret_cast<const unsigned char*>(bits), padded, labels);
  } else {
    alignas(64) double values[cpu_block_elements];
    if constexpr (D == dtype::float64) {
      __builtin_memcpy(values, p, static_cast<std::size_t>(n) * 8);
    } else {
      for (int64_t i = 0; i < n; ++i) values[i] = load_as_double<D, false>(p, i);
    }
    for (int64_t i = n; i < padded; ++i) values[i] = __builtin_nan("");
    labels_of_f64_block(t, values, padded, labels);
  }
  return padded;
}

/// Counts by label of elements [begin, begin + count) of a D segment into `scratch`
/// (log_histogram_sub_histograms × log_histogram_num_labels counters, zero on entry; the NaN
/// padding is counted too, at log_label_nan, and is taken off by the caller: returns the
/// padding count).
template <dtype D>
[[gnu::always_inline]] inline int64_t count_labels_t(const log_histogram_lookup& t,
                                                     const log_histogram_label_table32& table32,
                                                     const unsigned char* bytes, int64_t begin,
                                                     int64_t count, uint32_t* scratch) {
  alignas(64) int32_t labels[cpu_block_elements];
  int64_t padding = 0;
  constexpr int64_t stride = log_histogram_num_labels;
  // float32 labels straight from the tensor 64 at a time, each block counted at once: the
  // gathers of one block overlap the counter updates of the previous one (a 1 Ki block keeps
  // them apart: 0.73 → 0.69 ns/elem on 256 KiB tensors; 16 or 32 at a time are slower).
  constexpr int64_t block = D == dtype::float32 ? 64 : cpu_block_elements;
  for (int64_t b = 0; b < count; b += block) {
    const int64_t n = count - b < block ? count - b : block;
    const int64_t padded = label_block<D>(t, table32, bytes + (begin + b) * element_size_v<D>, n, labels);
    padding += padded - n;
    // padded is a multiple of 16: element i counts into sub-histogram i mod 4 (runs of one
    // label — zeros, a saturated layer — do not serialise on one counter).
    static_assert(log_histogram_sub_histograms == 4, "count_into_sub_histograms counts into 4");
    count_into_sub_histograms(labels, padded, scratch, stride);
  }
  return padding;
}

/// Entry: counts by label of one chunk of a segment of any real dtype (see count_labels_t).
int64_t count_labels(const log_histogram_lookup& t, const log_histogram_label_table32& table32,
                     const unsigned char* bytes, dtype type, int64_t begin, int64_t count,
                     uint32_t* scratch) {
  int64_t padding = 0;
  visit_real_dtype(type, [&](auto tag) {
    padding = count_labels_t<decltype(tag)::value>(t, table32, bytes, begin, count, scratch);
  });
  return padding;
}

// NOLINTEND

// SPDX-License-Identifier: Apache-2.0
/// @file log_histogram_lanes_cpu.hpp
/// @brief Body of the log-scale histogram's CPU twin, compiled once per ISA by
/// kernels/common/cpu_regions.hpp from log_histogram_cpu.cpp (no include guard, no includes).
///
/// The counter of a value is its label (log_histogram_labels_cpu.hpp): log_histogram_label32 /
/// log_label_of_rank(log_histogram_rank64) (log_histogram_op.hpp).
///  - float32 (and float16, bfloat16 widened to float32 first: a shift; F16C's vcvtph2ps on
///    AVX2/AVX-512) count value by value in scalar code: per value the table load (index: one
///    shift of the 13 top bits), one add of the whole bits, a shift, and the counter update —
///    ±0, ±Inf and NaN included, with no select.
///  - float64 goes 8 lanes at a time (first_rank by element, a gather of the float64 bound, one
///    comparison, the rank's label); integers and bool are converted to float64 element by
///    element first.
/// Every path computes exactly the scalar functions, so every ISA gives the same counts.
///
/// Why scalar for float32 (thirteenth session): on AMD Zen 4, this project's benchmark machine,
/// a 16-lane vpgatherdd is microcoded and slower than 16 scalar loads. With the label table the
/// lane work was down to 6 instructions per 16 values besides the gather, and the labels alone
/// still cost ≈ 0.45 ns/value — the gather; the scalar loop (6 instructions per value, the
/// table load among them) counts in 0.49–0.52 ns/value against 0.69–0.72 for gather + counting
/// (bench/kernels/log_histogram_cpu_bench.cpp, 256 KiB tensors). Earlier: a second gather of
/// the float32 bound (≈ 55% of the cycles waiting on the two gathers), a 3488-entry index
/// with clamp, sign offset and selects of −0.0, ±Inf and NaN (≈ 28 vector instructions per
/// 16 lanes), an arithmetic guess of the rank by a degree-5 polynomial (≈ 45 per 16 lanes,
/// slower than the gather; twelfth session), and — this session — a vector half / scalar half
/// split of each block (slower than scalar alone) and pair counting over two 32-rank windows
/// (its window and escape arithmetic cost more than the halved counter updates saved).

// NOLINTBEGIN (included inside a namespace by cpu_regions.hpp)

/// Counts by label of n float32 values (any n, any alignment) at `p` into the four
/// sub-histograms `counters` (log_histogram_num_labels apart): element i into sub-histogram
/// i mod 4, so that runs of one label — zeros, a saturated layer — do not serialise on one
/// counter. Per value a 32-bit load, the table load (its add folded in), two shifts and the
/// counter update (two values per 64-bit load, or a bextr for the index, measured no faster).
[[gnu::always_inline]] inline void count_f32_labels(const log_histogram_label_table32& t,
                                                    const unsigned char* p, int64_t n,
                                                    uint32_t* counters) {
  constexpr int64_t stride = log_histogram_num_labels;
  uint32_t* c0 = counters;
  uint32_t* c1 = counters + stride;
  uint32_t* c2 = counters + 2 * stride;
  uint32_t* c3 = counters + 3 * stride;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint32_t b0, b1, b2, b3;
    __builtin_memcpy(&b0, p + i * 4, 4);
    __builtin_memcpy(&b1, p + i * 4 + 4, 4);
    __builtin_memcpy(&b2, p + i * 4 + 8, 4);
    __builtin_memcpy(&b3, p + i * 4 + 12, 4);
    ++c0[log_histogram_label32(t, b0)];
    ++c1[log_histogram_label32(t, b1)];
    ++c2[log_histogram_label32(t, b2)];
    ++c3[log_histogram_label32(t, b3)];
  }
  for (; i < n; ++i) {
    uint32_t b;
    __builtin_memcpy(&b, p + i * 4, 4);
    ++c0[log_histogram_label32(t, b)];
  }
}

/// Test entry: labels of n float32 bit patterns by log_histogram_label32 as compiled here.
void labels_of_f32(const log_histogram_label_table32& t, const uint32_t* bits, int64_t n,
                   int32_t* labels) {
  for (int64_t i = 0; i < n; ++i) labels[i] = log_histogram_label32(t, bits[i]);
}

/// first_rank[idx] and next_lower[rank] for 64-bit lanes.
[[gnu::always_inline]] inline native_i64 gather_first_rank64(const uint16_t* table, const native_i64& idx) {
  native_i64 r{};  // every element set below ({}: GCC -O1 -Wmaybe-uninitialized otherwise)
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
  native_f64 r{};
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

/// float16 / bfloat16 elements [0, n) at `p` as float32 bits (exact), n ≤ cpu_block_elements.
template <dtype D>
[[gnu::always_inline]] inline void widen_block(const unsigned char* p, int64_t n, uint32_t* bits) {
  if constexpr (D == dtype::bfloat16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      __builtin_memcpy(&h, p + i * 2, 2);
      bits[i] = static_cast<uint32_t>(h) << 16;
    }
  } else {
    static_assert(D == dtype::float16);
    const int64_t full = n & ~int64_t{7};
    widen_f16_block(p, full, bits);
    for (int64_t i = full; i < n; ++i) {
      const float f = load_as_float32<D, false>(p, i);
      __builtin_memcpy(bits + i, &f, 4);
    }
  }
}

/// Counts by label of elements [begin, begin + count) of a D segment into `scratch`
/// (log_histogram_sub_histograms × log_histogram_num_labels counters, zero on entry). float32,
/// float16 and bfloat16 count element by element (count_f32_labels); the float64 lanes pad their
/// last block with NaN, counted at log_label_nan and taken off by the caller: returns that
/// padding count.
template <dtype D>
[[gnu::always_inline]] inline int64_t count_labels_t(const log_histogram_lookup& t,
                                                     const log_histogram_label_table32& table32,
                                                     const unsigned char* bytes, int64_t begin,
                                                     int64_t count, uint32_t* scratch) {
  const unsigned char* p = bytes + begin * element_size_v<D>;
  if constexpr (D == dtype::float32) {
    count_f32_labels(table32, p, count, scratch);
    return 0;
  } else if constexpr (log_histogram_uses_float32<D>) {
    alignas(64) uint32_t bits[cpu_block_elements];
    for (int64_t b = 0; b < count; b += cpu_block_elements) {
      const int64_t n = count - b < cpu_block_elements ? count - b : cpu_block_elements;
      widen_block<D>(p + b * element_size_v<D>, n, bits);
      count_f32_labels(table32, reinterpret_cast<const unsigned char*>(bits), n, scratch);
    }
    return 0;
  } else {
    alignas(64) double values[cpu_block_elements];
    alignas(64) int32_t labels[cpu_block_elements];
    constexpr int64_t pad = 16;
    int64_t padding = 0;
    for (int64_t b = 0; b < count; b += cpu_block_elements) {
      const int64_t n = count - b < cpu_block_elements ? count - b : cpu_block_elements;
      const unsigned char* q = p + b * element_size_v<D>;
      if constexpr (D == dtype::float64) {
        __builtin_memcpy(values, q, static_cast<std::size_t>(n) * 8);
      } else {
        for (int64_t i = 0; i < n; ++i) values[i] = load_as_double<D, false>(q, i);
      }
      const int64_t padded = (n + pad - 1) / pad * pad;
      for (int64_t i = n; i < padded; ++i) values[i] = __builtin_nan("");
      padding += padded - n;
      labels_of_f64_block(t, values, padded, labels);
      // padded is a multiple of 16: element i counts into sub-histogram i mod 4.
      static_assert(log_histogram_sub_histograms == 4, "count_into_sub_histograms counts into 4");
      count_into_sub_histograms(labels, padded, scratch, log_histogram_num_labels);
    }
    return padding;
  }
}

/// Entry: the totals of the four sub-histograms `counters` by label into `totals`
/// [log_histogram_label_groups × 8] (the labels past the last one: 0), and the counters zeroed.
void take_totals(uint32_t* counters, uint32_t* totals) {
  constexpr int64_t stride = log_histogram_num_labels;
  for (int64_t label = 0; label < stride; ++label) {
    totals[label] = counters[label] + counters[stride + label] + counters[2 * stride + label] +
                    counters[3 * stride + label];  // mod 2^32: ≤ 65536 per chunk (padding aside)
  }
  for (int64_t label = stride; label < int64_t{log_histogram_label_groups} * 8; ++label) totals[label] = 0;
  __builtin_memset(counters, 0, sizeof(uint32_t) * log_histogram_sub_histograms * stride);
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

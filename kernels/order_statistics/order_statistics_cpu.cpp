// SPDX-License-Identifier: Apache-2.0
// CPU twin of the order statistics. Percentiles: a radix selection on order-preserving integer
// keys of the tensor's own width (no float64 copy) that narrows every needed rank in one
// histogram pass; top-k sums: a float64 copy and std::nth_element.
#include "kernels/order_statistics/order_statistics_cpu.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <string>
#include <type_traits>

#include "kernels/common/cpu_convert.hpp"
#include "kernels/common/cpu_simd.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/order_statistics/order_statistics_op.hpp"

namespace trialstat::kernels {
namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

/// Pairwise (ordered tree) sum of v[0..n): blocks of 1024 summed sequentially, blocks merged
/// pairwise in order, so the rounding error grows with log2(n / 1024).
double pairwise_sum(const double* v, int64_t n) {
  const auto add = [](double a, double b) { return a + b; };
  ordered_tree_merger<double, decltype(add)> merger(add);
  for (int64_t begin = 0; begin < n; begin += cpu_block_elements) {
    const int64_t end = std::min(n, begin + cpu_block_elements);
    double s = 0.0;
    for (int64_t i = begin; i < end; ++i) s += v[i];
    merger.push(s);
  }
  return merger.finish(0.0);
}

status check_tensor(const tensor_view& tensor, const char* what) {
  const stats::segment seg{0, tensor.num_elements, tensor.type};
  return validate_segments(tensor.data, {&seg, 1}, what);
}

/// Order-preserving unsigned key of an element of D, of the element's own width: key order is
/// the order of the float64 values (non-decreasing: integers wider than 53 bits and nonzero
/// bool bytes map several keys to one value), with −0.0 below +0.0 and NaN outside ±Inf
/// (negative NaN below −Inf, positive above +Inf).
template <dtype D>
struct order_key {
  using storage = typename element_traits<D>::storage;
  using key_t = std::conditional_t<
      sizeof(storage) == 1, uint8_t,
      std::conditional_t<sizeof(storage) == 2, uint16_t,
                         std::conditional_t<sizeof(storage) == 4, uint32_t, uint64_t>>>;
  static constexpr int bits = 8 * static_cast<int>(sizeof(key_t));
  static constexpr key_t sign = static_cast<key_t>(key_t{1} << (bits - 1));
  static constexpr bool is_float = D == dtype::float16 || D == dtype::bfloat16 ||
                                   D == dtype::float32 || D == dtype::float64;
  static constexpr bool is_signed_int = D == dtype::int8 || D == dtype::int16 ||
                                        D == dtype::int32 || D == dtype::int64;

  static key_t from_bits(key_t b) {
    if constexpr (is_float) {
      // Negative: all bits flipped (larger magnitude → smaller key); positive: sign bit set.
      const key_t negative = static_cast<key_t>(0 - static_cast<key_t>(b >> (bits - 1)));
      return static_cast<key_t>(b ^ (negative | sign));
    } else if constexpr (is_signed_int) {
      return static_cast<key_t>(b ^ sign);
    } else {
      return b;
    }
  }
  static key_t to_bits(key_t k) {
    if constexpr (is_float) {
      return static_cast<key_t>((k & sign) != 0 ? k ^ sign : static_cast<key_t>(~k));
    } else if constexpr (is_signed_int) {
      return static_cast<key_t>(k ^ sign);
    } else {
      return k;
    }
  }
  /// The element's bits, not yet a key (the counting passes index by them: see raw_bucket).
  static key_t load_bits(const unsigned char* bytes, int64_t i) {
    key_t b;
    std::memcpy(&b, bytes + i * static_cast<int64_t>(sizeof(key_t)), sizeof b);
    return b;
  }
  static key_t load(const unsigned char* bytes, int64_t i) { return from_bits(load_bits(bytes, i)); }
  /// The top bits of the element bits whose keys have top bits `key_bucket` (the top
  /// `bits − shift` bits). from_bits and to_bits map the top bits of a value to the top bits of
  /// the other alone (the XOR mask depends only on the sign bit), so this is a bijection of
  /// buckets: a pass counts elements by their bits' top bits — no key per element — and the
  /// counts are put in key order afterwards.
  static std::size_t raw_bucket(std::size_t key_bucket, int shift) {
    return static_cast<std::size_t>(to_bits(static_cast<key_t>(key_bucket << shift)) >> shift);
  }
  static double value(key_t k) {
    const key_t b = to_bits(k);
    storage s;
    std::memcpy(&s, &b, sizeof s);
    return element_traits<D>::to_double(s);
  }
  /// Keys of ±Inf (floats only): every key above +Inf's or below −Inf's is a NaN.
  static constexpr key_t inf_bits = bits == 16   ? (D == dtype::float16 ? 0x7C00u : 0x7F80u)
                                    : bits == 32 ? key_t(0x7F800000u)
                                                 : key_t(0x7FF0000000000000ull);
  static constexpr key_t plus_inf_key() { return static_cast<key_t>(inf_bits | sign); }
  static constexpr key_t minus_inf_key() { return static_cast<key_t>(~(inf_bits | sign)); }
};

/// Bits of a key resolved by one histogram pass over the tensor: 2^11 counters stay in L1.
constexpr int radix_bits = 11;
/// Below this many candidates, std::nth_element on the keys beats another histogram pass.
constexpr int64_t select_directly_below = 512;
/// From this many elements on, the ranks are located from a sample (select_ranks_sampled; AVX-512
/// builds only: [[maybe_unused]] in baseline-only ones).
[[maybe_unused]] constexpr int64_t sampled_from_elements = int64_t{1} << 14;
/// From this many elements on, 16-bit keys are counted in one full histogram (select_ranks_16).
constexpr int64_t full_histogram_from_elements = int64_t{1} << 14;
/// Windows (runs of wanted buckets) the vector pass handles at once.
[[maybe_unused]] constexpr int max_vector_windows = 8;

/// The key of rank ranks[j] (sorted, distinct, each in [0, n)) among v[0..n) into out[j]. The
/// low `open_bits` bits of the keys are still undecided; the bits above are equal in all of v.
/// Reorders v.
template <class K>
void select_in_buffer(K* v, int64_t n, int open_bits, const int64_t* ranks, K* out,
                      std::size_t num_ranks) {
  if (open_bits == 0) {  // every key in v is the same
    for (std::size_t j = 0; j < num_ranks; ++j) out[j] = v[0];
    return;
  }
  if (n < select_directly_below) {
    // After placing rank r, everything right of it is ≥ v[r]: the next rank is selected there.
    int64_t first = 0;
    for (std::size_t j = 0; j < num_ranks; ++j) {
      std::nth_element(v + first, v + ranks[j], v + n);
      out[j] = v[ranks[j]];
      first = ranks[j] + 1;
    }
    return;
  }
  // About 16 keys per bucket (fewer counters to clear and sum for small buffers).
  const int digit_bits =
      std::min({radix_bits, open_bits, static_cast<int>(std::bit_width(static_cast<uint64_t>(n))) - 4});
  const int shift = open_bits - digit_bits;
  const K mask = static_cast<K>((K{1} << digit_bits) - 1);
  const std::size_t num_buckets = std::size_t{1} << digit_bits;
  std::array<int64_t, (1 << radix_bits) + 1> start;
  std::fill_n(start.begin(), num_buckets + 1, int64_t{0});
  for (int64_t i = 0; i < n; ++i) ++start[static_cast<std::size_t>((v[i] >> shift) & mask) + 1];
  for (std::size_t b = 1; b <= num_buckets; ++b) start[b] += start[b - 1];
  std::vector<K> candidates;
  std::vector<int64_t> local;
  std::size_t j = 0;
  while (j < num_ranks) {
    std::size_t b = 0;
    while (start[b + 1] <= ranks[j]) ++b;
    const int64_t lo = start[b], count = start[b + 1] - lo;
    std::size_t end = j;
    local.clear();
    while (end < num_ranks && ranks[end] < lo + count) local.push_back(ranks[end++] - lo);
    if (count == n) {  // one bucket holds everything: narrow the next bits in place
      select_in_buffer(v, n, shift, local.data(), out + j, local.size());
      return;
    }
    // Branch-free compaction (a branch per key mispredicts whenever buckets interleave); the
    // spare last element takes the writes of the keys that are not kept.
    candidates.resize(static_cast<std::size_t>(count) + 1);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      candidates[static_cast<std::size_t>(kept)] = v[i];
      kept += static_cast<std::size_t>((v[i] >> shift) & mask) == b ? 1 : 0;
    }
    select_in_buffer(candidates.data(), count, shift, local.data(), out + j, local.size());
    j = end;
  }
}

/// Key ranges whose keys the second pass copies out: [lo, lo + width], disjoint, ascending.
template <class K>
struct key_windows {
  int count = 0;
  std::vector<K> lo, width;
  std::vector<K*> out;          ///< where window w's keys go (room for all of them + 16)
  std::vector<int64_t> kept;    ///< keys of window w copied so far
  std::vector<int64_t> below;   ///< keys below window w seen so far (vector pass only)
  std::vector<int64_t> room;    ///< keys window w's output holds (the scalar pass checks it)
};

/// Copies every key of elements [0, n) that lies in a window to that window's output, in
/// element order; the tensor holds no NaN (select_ranks checked). `total` is how many elements
/// the windows hold (the first pass counted them). Two steps, neither with a branch per element
/// of the tensor: every element's bits are stored at out[k], and k moves on when the element's
/// raw bucket (raw_bucket) is wanted (`window_of_raw_bucket`: 0 none, else window + 1), so the
/// wanted ones end up packed in out[0..total) and the spare slots past them take the others'
/// writes; then those few become keys and go to their windows. A branch on each element
/// mispredicts whenever wanted and unwanted elements interleave: with the 5th, 50th and 95th
/// percentiles of normal data (~6% of the elements wanted) that copy took twice the time of
/// this one (bench/RESULTS.md, twentieth session).
template <dtype D>
void copy_windows_scalar(const unsigned char* bytes, int64_t n,
                         key_windows<typename order_key<D>::key_t>& w, int shift,
                         const uint16_t* window_of_raw_bucket, int64_t total) {
  using traits = order_key<D>;
  using K = typename traits::key_t;
  // Room for a block past `total`, and k checked before each block: memory stays safe even if
  // the bytes changed between the passes (a caller's data race), which would only cost answers.
  std::vector<K> packed(static_cast<std::size_t>(total + cpu_block_elements) + 1);
  K* const out = packed.data();
  int64_t k = 0;
  for (int64_t begin = 0; begin < n && k <= total; begin += cpu_block_elements) {
    const int64_t end = std::min(n, begin + cpu_block_elements);
    for (int64_t i = begin; i < end; ++i) {
      const K b = traits::load_bits(bytes, i);
      out[k] = b;
      k += window_of_raw_bucket[static_cast<std::size_t>(b >> shift)] != 0 ? 1 : 0;
    }
  }
  k = std::min(k, total);
  if (w.count == 1) {  // k ≤ total ≤ the window's room
    for (int64_t i = 0; i < k; ++i) w.out[0][i] = traits::from_bits(out[i]);
    w.kept[0] = k;
    return;
  }
  for (int64_t i = 0; i < k; ++i) {
    const K b = out[i];
    const std::size_t slot = window_of_raw_bucket[static_cast<std::size_t>(b >> shift)] - 1u;
    if (w.kept[slot] < w.room[slot]) w.out[slot][w.kept[slot]++] = traits::from_bits(b);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(TRIALSTAT_CPU_BASELINE_ONLY)
#define TRIALSTAT_ORDER_STATISTICS_AVX512 1
/// copy_windows_scalar for 32-bit keys of elements [begin, end), 16 at a time, that also counts
/// the keys below each window (w.below). Each window's keys are packed with vpcompressd into a
/// register and stored whole (16 elements of slack after each output take the unused lanes).
/// Same output, same order. Returns false when an element is NaN.
template <dtype D>
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,popcnt"))) bool copy_windows_avx512(
    const unsigned char* bytes, int64_t begin, int64_t end, key_windows<uint32_t>& w) {
  using traits = order_key<D>;
  static_assert(sizeof(typename traits::key_t) == 4);
  __m512i lo[max_vector_windows], width[max_vector_windows], below[max_vector_windows];
  uint32_t* out[max_vector_windows];
  int64_t kept[max_vector_windows];
  const int m = w.count;
  const __m512i one = _mm512_set1_epi32(1);
  for (int j = 0; j < m; ++j) {
    lo[j] = _mm512_set1_epi32(static_cast<int>(w.lo[j]));
    width[j] = _mm512_set1_epi32(static_cast<int>(w.width[j]));
    below[j] = _mm512_setzero_si512();  // per-lane counts: at most (end − begin) / 16 each
    out[j] = w.out[j];
    kept[j] = w.kept[j];
  }
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512i ones = _mm512_set1_epi32(-1);
  const __m512i plus_inf = _mm512_set1_epi32(static_cast<int>(traits::plus_inf_key()));
  const __m512i minus_inf = _mm512_set1_epi32(static_cast<int>(traits::minus_inf_key()));
  __mmask16 nan_seen = 0;
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512i x = _mm512_loadu_si512(bytes + 4 * i);
    __m512i k;
    if constexpr (traits::is_float) {
      // Negative (sign bit set): every bit flipped; otherwise the sign bit set.
      k = _mm512_mask_xor_epi32(_mm512_xor_si512(x, sign), _mm512_movepi32_mask(x), x, ones);
      nan_seen |= static_cast<__mmask16>(_mm512_cmpgt_epu32_mask(k, plus_inf) |
                                         _mm512_cmplt_epu32_mask(k, minus_inf));
    } else if constexpr (traits::is_signed_int) {
      k = _mm512_xor_si512(x, sign);
    } else {
      k = x;
    }
    for (int j = 0; j < m; ++j) {
      below[j] = _mm512_mask_add_epi32(below[j], _mm512_cmplt_epu32_mask(k, lo[j]), below[j], one);
      const __mmask16 in = _mm512_cmple_epu32_mask(_mm512_sub_epi32(k, lo[j]), width[j]);
      _mm512_storeu_si512(out[j] + kept[j], _mm512_maskz_compress_epi32(in, k));
      kept[j] += __builtin_popcount(static_cast<unsigned>(in));
    }
  }
  for (int j = 0; j < m; ++j) {
    w.kept[j] = kept[j];
    alignas(64) uint32_t lanes[16];  // not _mm512_reduce_add_epi32: GCC 12 warns inside it
    _mm512_store_si512(lanes, below[j]);
    for (const uint32_t c : lanes) w.below[j] += c;
  }
  if (nan_seen != 0) return false;
  for (; i < end; ++i) {  // the last < 16 elements
    const uint32_t k = traits::load(bytes, i);
    if constexpr (traits::is_float) {
      if (k > traits::plus_inf_key() || k < traits::minus_inf_key()) return false;
    }
    for (int j = 0; j < m; ++j) {
      w.below[j] += k < w.lo[j] ? 1 : 0;
      if (static_cast<uint32_t>(k - w.lo[j]) <= w.width[j]) w.out[j][w.kept[j]++] = k;
    }
  }
  return true;
}

/// Percentile keys of a float32/int32/uint32 tensor in one pass over it, on AVX-512: a
/// histogram of every 7th key (the stride is odd so that it does not alias with power-of-two
/// rows) locates each needed rank to within 3 standard deviations of the sample (a miss costs
/// a second, exact pass); one vector pass copies the keys of those windows and counts the keys
/// below each. Returns 1 when every
/// rank fell in its window (out_keys filled), 0 when a NaN was seen, −1 when some rank missed
/// its window (an unlucky or adversarial sample: the caller selects exactly).
template <dtype D>
int select_ranks_sampled(const unsigned char* bytes, int64_t n, const std::vector<int64_t>& ranks,
                         std::vector<uint32_t>& out_keys) {
  using traits = order_key<D>;
  constexpr int shift = 32 - radix_bits;
  constexpr std::size_t num_buckets = std::size_t{1} << radix_bits;
  constexpr int64_t stride = 7;
  const int64_t num_samples = (n + stride - 1) / stride;
  // Two interleaved counters per bucket (runs of one bucket do not serialise on one counter);
  // uint32 is enough: the caller samples only tensors of fewer than 2^32 elements.
  std::array<int64_t, num_buckets + 1> start;
  {
    std::array<uint32_t, 2 * num_buckets> counts{};
    int64_t i = 0;
    for (; i + stride < n; i += 2 * stride) {
      ++counts[2 * (traits::load(bytes, i) >> shift)];
      ++counts[2 * (traits::load(bytes, i + stride) >> shift) + 1];
    }
    if (i < n) ++counts[2 * (traits::load(bytes, i) >> shift)];
    start[0] = 0;
    for (std::size_t b = 0; b < num_buckets; ++b) {
      start[b + 1] = start[b] + int64_t{counts[2 * b]} + counts[2 * b + 1];
    }
  }
  const auto bucket_of_sample_rank = [&](int64_t s) {
    s = std::clamp<int64_t>(s, 0, num_samples - 1);
    return static_cast<std::size_t>(std::upper_bound(start.begin() + 1, start.end(), s) -
                                    (start.begin() + 1));
  };
  struct window_run {
    std::size_t first_bucket, last_bucket;
    std::size_t first_rank, end_rank;
  };
  std::vector<window_run> runs;
  for (std::size_t j = 0; j < ranks.size(); ++j) {
    // The sample's count below rank r is about binomial(num_samples, f = r / n): 3σ either
    // side, σ = √(num_samples·f·(1 − f)), plus a few samples for small tensors.
    const double f = static_cast<double>(ranks[j]) / static_cast<double>(n);
    const double expected = f * static_cast<double>(num_samples);
    const double margin = 3.0 * std::sqrt(expected * (1.0 - f)) + 8.0;
    // A window reaching past the sample's ends reaches the ends of the key range (the extremes
    // of the tensor are rarely in the sample).
    const double low = expected - margin, high = expected + margin + 1.0;
    const std::size_t first = low < 0.0 ? 0 : bucket_of_sample_rank(static_cast<int64_t>(low));
    const std::size_t last = high >= static_cast<double>(num_samples)
                                 ? num_buckets - 1
                                 : bucket_of_sample_rank(static_cast<int64_t>(high));
    if (!runs.empty() && runs.back().last_bucket + 1 >= first) {
      runs.back().last_bucket = std::max(runs.back().last_bucket, last);
    } else {
      runs.push_back({first, last, j, j});
    }
    runs.back().end_rank = j + 1;
  }
  if (runs.size() > static_cast<std::size_t>(max_vector_windows)) return -1;
  key_windows<uint32_t> w;
  w.count = static_cast<int>(runs.size());
  std::vector<std::vector<uint32_t>> buffers(runs.size());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    w.lo.push_back(static_cast<uint32_t>(runs[r].first_bucket << shift));
    w.width.push_back(static_cast<uint32_t>(((runs[r].last_bucket - runs[r].first_bucket) << shift) |
                                            ((std::size_t{1} << shift) - 1)));
    w.kept.push_back(0);
    w.below.push_back(0);
    w.out.push_back(nullptr);
  }
  // Room for what the sample predicts plus a block; blocks of 2^12 elements, before each of
  // which every window is given room for the whole block (rarely needed).
  constexpr int64_t block = int64_t{1} << 12;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const int64_t predicted = (start[runs[r].last_bucket + 1] - start[runs[r].first_bucket]) * stride;
    buffers[r].resize(static_cast<std::size_t>(predicted + predicted / 4 + block + 16));
    w.out[r] = buffers[r].data();
  }
  for (int64_t begin = 0; begin < n; begin += block) {
    const int64_t end = std::min(n, begin + block);
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const auto need = static_cast<std::size_t>(w.kept[r] + (end - begin) + 16);
      if (buffers[r].size() < need) {
        buffers[r].resize(std::max(need, 2 * buffers[r].size()));
        w.out[r] = buffers[r].data();
      }
    }
    if (!copy_windows_avx512<D>(bytes, begin, end, w)) return 0;
  }
  out_keys.assign(ranks.size(), 0u);
  std::vector<int64_t> local;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    local.clear();
    for (std::size_t j = runs[r].first_rank; j < runs[r].end_rank; ++j) {
      const int64_t in_window = ranks[j] - w.below[r];
      if (in_window < 0 || in_window >= w.kept[r]) return -1;
      local.push_back(in_window);
    }
    const uint32_t hi_key = w.lo[r] + w.width[r];
    const int open_bits = static_cast<int>(std::bit_width(w.lo[r] ^ hi_key));
    select_in_buffer(w.out[r], w.kept[r], open_bits, local.data(),
                     out_keys.data() + runs[r].first_rank, local.size());
  }
  return 1;
}
#else
#define TRIALSTAT_ORDER_STATISTICS_AVX512 0
#endif

/// select_ranks for 16-bit keys (float16, bfloat16, int16, uint16) of 2^14 to 2^32 elements:
/// one histogram of the whole key (2^16 counters) gives every rank's key and the NaN count
/// without a second pass.
template <dtype D>
bool select_ranks_16(const unsigned char* bytes, int64_t n, const std::vector<int64_t>& ranks,
                     std::vector<uint16_t>& out_keys) {
  using traits = order_key<D>;
  // Counted by the element bits (no key per element); count_of(k) is key k's count.
  std::vector<uint32_t> counts(std::size_t{1} << 16, 0u);
  for (int64_t i = 0; i < n; ++i) ++counts[traits::load_bits(bytes, i)];
  const auto count_of = [&](std::size_t k) { return counts[traits::raw_bucket(k, 0)]; };
  if constexpr (traits::is_float) {
    uint64_t nan_count = 0;
    for (uint32_t k = 0; k < traits::minus_inf_key(); ++k) nan_count += count_of(k);
    for (uint32_t k = traits::plus_inf_key() + 1u; k < counts.size(); ++k) nan_count += count_of(k);
    if (nan_count != 0) return false;
  }
  out_keys.assign(ranks.size(), 0);
  int64_t below = 0;  // keys below key k
  std::size_t k = 0;
  for (std::size_t j = 0; j < ranks.size(); ++j) {
    while (below + count_of(k) <= ranks[j]) below += count_of(k++);
    out_keys[j] = static_cast<uint16_t>(k);
  }
  return true;
}

/// Percentile keys of a D tensor: out_keys[j] = the key of rank ranks[j] (sorted, distinct).
/// Pass 1 counts the top radix_bits of every key; pass 2 copies the keys of the buckets that
/// hold a needed rank (a few % of the tensor on real data) and checks for NaN; those are
/// narrowed further (select_in_buffer). Returns false when the tensor holds a NaN.
template <dtype D>
bool select_ranks(const unsigned char* bytes, int64_t n, const std::vector<int64_t>& ranks,
                  std::vector<typename order_key<D>::key_t>& out_keys) {
  using traits = order_key<D>;
  using K = typename traits::key_t;
#if TRIALSTAT_ORDER_STATISTICS_AVX512
  if constexpr (sizeof(K) == 4) {
    if (n >= sampled_from_elements && n < (int64_t{1} << 32) &&
        active_cpu_isa() == cpu_isa::avx512) {
      const int found = select_ranks_sampled<D>(bytes, n, ranks, out_keys);
      if (found >= 0) return found == 1;
    }
  }
#endif
  if constexpr (sizeof(K) == 2) {
    if (n >= full_histogram_from_elements && n < (int64_t{1} << 32)) {
      return select_ranks_16<D>(bytes, n, ranks, out_keys);
    }
  }
  constexpr int digit_bits = std::min(radix_bits, traits::bits);
  constexpr int shift = traits::bits - digit_bits;
  constexpr std::size_t num_buckets = std::size_t{1} << digit_bits;
  // Two interleaved counters per bucket so that runs of one bucket do not serialise on one
  // counter; uint32 counters flushed into int64 every 2^31 elements.
  std::vector<int64_t> start(num_buckets + 1, 0);
  {
    std::vector<uint32_t> counts(2 * num_buckets);
    constexpr int64_t flush_every = int64_t{1} << 31;
    for (int64_t begin = 0; begin < n; begin += flush_every) {
      const int64_t end = std::min(n, begin + flush_every);
      std::fill(counts.begin(), counts.end(), 0u);
      int64_t i = begin;
      for (; i + 2 <= end; i += 2) {  // counted by the top bits of the element bits (raw_bucket)
        ++counts[2 * static_cast<std::size_t>(traits::load_bits(bytes, i) >> shift)];
        ++counts[2 * static_cast<std::size_t>(traits::load_bits(bytes, i + 1) >> shift) + 1];
      }
      if (i < end) ++counts[2 * static_cast<std::size_t>(traits::load_bits(bytes, i) >> shift)];
      for (std::size_t b = 0; b < num_buckets; ++b) {
        const std::size_t raw = traits::raw_bucket(b, shift);
        start[b + 1] += int64_t{counts[2 * raw]} + counts[2 * raw + 1];
      }
    }
  }
  if constexpr (traits::is_float) {
    // NaN keys lie in the buckets of ±Inf and beyond; pass 2 looks at every key, but when those
    // buckets are empty there is no NaN to find (and the tensor need not be read again).
    constexpr std::size_t plus_inf_bucket = traits::plus_inf_key() >> shift;
    constexpr std::size_t minus_inf_bucket = traits::minus_inf_key() >> shift;
    int64_t edge = 0;
    for (std::size_t b = 0; b <= minus_inf_bucket; ++b) edge += start[b + 1];
    for (std::size_t b = plus_inf_bucket; b < num_buckets; ++b) edge += start[b + 1];
    if (edge != 0) {
      for (int64_t i = 0; i < n; ++i) {
        const K k = traits::load(bytes, i);
        if (k > traits::plus_inf_key() || k < traits::minus_inf_key()) return false;
      }
    }
  }
  for (std::size_t b = 1; b <= num_buckets; ++b) start[b] += start[b - 1];
  out_keys.assign(ranks.size(), K{0});
  // Runs of adjacent buckets holding a needed rank: one window each.
  struct window_run {
    std::size_t first_bucket, last_bucket;
    std::size_t first_rank, end_rank;  // ranks[first_rank..end_rank) fall in it
  };
  std::vector<window_run> runs;
  for (std::size_t j = 0, b = 0; j < ranks.size(); ++j) {
    while (start[b + 1] <= ranks[j]) ++b;
    if (!runs.empty() && runs.back().last_bucket + 1 >= b) {
      runs.back().last_bucket = b;
    } else {
      runs.push_back({b, b, j, j});
    }
    runs.back().end_rank = j + 1;
  }
  if constexpr (shift == 0) {  // the bucket is the key (8-bit dtypes)
    for (const window_run& r : runs) {
      for (std::size_t j = r.first_rank; j < r.end_rank; ++j) {
        std::size_t b = r.first_bucket;
        while (start[b + 1] <= ranks[j]) ++b;
        out_keys[j] = static_cast<K>(b);
      }
    }
    return true;
  } else {
    key_windows<K> w;
    w.count = static_cast<int>(runs.size());
    std::vector<int64_t> offset(runs.size() + 1, 0);
    int64_t wanted_total = 0;  // elements in the windows
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const K first = static_cast<K>(runs[r].first_bucket), last = static_cast<K>(runs[r].last_bucket);
      w.lo.push_back(static_cast<K>(first << shift));
      w.width.push_back(static_cast<K>(static_cast<K>((last - first) << shift) |
                                       static_cast<K>((K{1} << shift) - 1)));
      const int64_t in_window = start[runs[r].last_bucket + 1] - start[runs[r].first_bucket];
      offset[r + 1] = offset[r] + in_window + 16;
      wanted_total += in_window;
    }
    std::vector<K> candidates(static_cast<std::size_t>(offset.back()));
    for (std::size_t r = 0; r < runs.size(); ++r) {
      w.out.push_back(candidates.data() + offset[r]);
      w.kept.push_back(0);
      w.below.push_back(0);
      w.room.push_back(offset[r + 1] - offset[r]);
    }
    const auto scalar = [&] {
      // Windows are runs of buckets: at most num_buckets ≤ 2^11 of them, window + 1 fits 16 bits.
      std::vector<uint16_t> window_of_raw_bucket(num_buckets, 0);
      for (std::size_t r = 0; r < runs.size(); ++r) {
        for (std::size_t b = runs[r].first_bucket; b <= runs[r].last_bucket; ++b) {
          window_of_raw_bucket[traits::raw_bucket(b, shift)] = static_cast<uint16_t>(r + 1);
        }
      }
      copy_windows_scalar<D>(bytes, n, w, shift, window_of_raw_bucket.data(), wanted_total);
      return true;  // NaN was ruled out above
    };
    bool no_nan = true;
#if TRIALSTAT_ORDER_STATISTICS_AVX512
    if constexpr (sizeof(K) == 4) {
      if (w.count <= max_vector_windows && active_cpu_isa() == cpu_isa::avx512) {
        no_nan = copy_windows_avx512<D>(bytes, 0, n, w);
      } else {
        no_nan = scalar();
      }
    } else {
      no_nan = scalar();
    }
#else
    no_nan = scalar();
#endif
    if (!no_nan) return false;
    std::vector<int64_t> local;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const int64_t lo = start[runs[r].first_bucket];
      local.clear();
      for (std::size_t j = runs[r].first_rank; j < runs[r].end_rank; ++j) {
        local.push_back(ranks[j] - lo);
      }
      // The keys of a window share the bits above the highest bit in which lo and hi differ.
      const K lo_key = w.lo[r], hi_key = static_cast<K>(w.lo[r] + w.width[r]);
      const int open_bits = static_cast<int>(std::bit_width(static_cast<K>(lo_key ^ hi_key)));
      select_in_buffer(w.out[r], w.kept[r], open_bits, local.data(),
                       out_keys.data() + runs[r].first_rank, local.size());
    }
    return true;
  }
}

}  // namespace

result<std::vector<double>> compute_percentiles_cpu(const tensor_view& tensor,
                                                    std::span<const double> q_percent) noexcept {
  TRIALSTAT_RETURN_IF_ERROR(check_tensor(tensor, "compute_percentiles"));
  for (std::size_t i = 0; i < q_percent.size(); ++i) {
    if (!valid_percentile(q_percent[i])) {
      return status(error_code::invalid_argument,
                    "compute_percentiles: q[" + std::to_string(i) + "] = " +
                        std::to_string(q_percent[i]) + " is not in [0, 100]");
    }
  }
  try {
    std::vector<double> out(q_percent.size(), nan_value);
    const int64_t n = tensor.num_elements;
    if (n == 0 || q_percent.empty()) return out;
    std::vector<percentile_position> positions;
    std::vector<int64_t> needed;
    for (const double q : q_percent) {
      const percentile_position p = linear_percentile_position(n, q);
      positions.push_back(p);
      needed.push_back(p.lower);
      needed.push_back(p.upper);
    }
    std::sort(needed.begin(), needed.end());
    needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
    const auto* bytes = reinterpret_cast<const unsigned char*>(tensor.data);
    std::vector<double> values(needed.size());
    bool has_nan = false;
    visit_real_dtype(tensor.type, [&](auto tag) {
      constexpr dtype D = decltype(tag)::value;
      std::vector<typename order_key<D>::key_t> keys;
      has_nan = !select_ranks<D>(bytes, n, needed, keys);
      if (has_nan) return;
      for (std::size_t j = 0; j < keys.size(); ++j) values[j] = order_key<D>::value(keys[j]);
    });
    if (has_nan) return out;
    const auto value_at = [&](int64_t index) {
      return values[static_cast<std::size_t>(
          std::lower_bound(needed.begin(), needed.end(), index) - needed.begin())];
    };
    for (std::size_t i = 0; i < positions.size(); ++i) {
      const percentile_position& p = positions[i];
      out[i] = numpy_lerp(value_at(p.lower), value_at(p.upper), p.gamma);
    }
    return out;
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_percentiles: cannot allocate the selection scratch for " +
                      std::to_string(tensor.num_elements) + " elements");
  }
}

result<stats::top_k_sum> compute_top_k_sum_cpu(const tensor_view& tensor, int64_t k) noexcept {
  TRIALSTAT_RETURN_IF_ERROR(check_tensor(tensor, "compute_top_k_sum"));
  if (k < 0) {
    return status(error_code::invalid_argument,
                  "compute_top_k_sum: k = " + std::to_string(k) + " is negative");
  }
  try {
    stats::top_k_sum out;
    const int64_t n = tensor.num_elements;
    out.k = std::min(k, n);
    if (n == 0) {
      out.max = nan_value;
      return out;
    }
    std::vector<double> v(static_cast<std::size_t>(n));
    convert_to_float64_cpu(tensor.data, tensor.type, n, v.data());
    if (std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); })) {
      out.top_sum = out.total_sum = out.max = nan_value;
      return out;
    }
    out.total_sum = pairwise_sum(v.data(), n);
    out.max = *std::max_element(v.begin(), v.end());
    if (out.k > 0) {
      const auto top = v.begin() + (n - out.k);
      std::nth_element(v.begin(), top, v.end());
      std::sort(top, v.end(), std::greater<>());
      out.top_sum = pairwise_sum(&*top, out.k);
    }
    return out;
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_top_k_sum: cannot allocate a float64 copy of " +
                      std::to_string(tensor.num_elements) + " elements");
  }
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
#include "host/stats/selftest_data.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "trialstat/detail/float_convert.hpp"
#include "trialstat/stats/log_histogram.hpp"

namespace trialstat::stats::detail {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

bool is_float(dtype t) {
  return t == dtype::float16 || t == dtype::bfloat16 || t == dtype::float32 || t == dtype::float64;
}

template <class T>
T saturate(double v) {
  if (std::isnan(v)) return T{0};
  const double r = std::nearbyint(v);
  // The limits as doubles: T's max may round up (2^63, 2^64), so compare with >=.
  if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

template <class T>
void store(std::byte* at, T v) {
  std::memcpy(at, &v, sizeof v);
}

/// `v` as one element of `type` at `at`: floats rounded to nearest (float16/bfloat16 through
/// float32), integers rounded and saturated, bool nonzero → 1.
void put_value(std::byte* at, dtype type, double v) {
  switch (type) {
    case dtype::float64: store(at, v); break;
    case dtype::float32: store(at, static_cast<float>(v)); break;
    case dtype::float16: store(at, trialstat::detail::float_to_half_bits(static_cast<float>(v))); break;
    case dtype::bfloat16: store(at, trialstat::detail::float_to_bfloat16_bits(static_cast<float>(v))); break;
    case dtype::int8: store(at, saturate<int8_t>(v)); break;
    case dtype::uint8: store(at, saturate<uint8_t>(v)); break;
    case dtype::int16: store(at, saturate<int16_t>(v)); break;
    case dtype::uint16: store(at, saturate<uint16_t>(v)); break;
    case dtype::int32: store(at, saturate<int32_t>(v)); break;
    case dtype::uint32: store(at, saturate<uint32_t>(v)); break;
    case dtype::int64: store(at, saturate<int64_t>(v)); break;
    case dtype::uint64: store(at, saturate<uint64_t>(v)); break;
    case dtype::boolean: store(at, static_cast<uint8_t>(!std::isnan(v) && v != 0.0 ? 1 : 0)); break;
    default: break;
  }
}

/// Elements of one tensor being built: values appended as `type`, or as bit patterns.
class element_writer {
 public:
  explicit element_writer(dtype type) : type_(type), size_(dtype_size_bytes(type)) {}
  void value(double v) {
    bytes_.resize(bytes_.size() + size_);
    put_value(bytes_.data() + bytes_.size() - size_, type_, v);
  }
  void bits(uint64_t pattern) {
    bytes_.resize(bytes_.size() + size_);
    std::memcpy(bytes_.data() + bytes_.size() - size_, &pattern, size_);  // little-endian
  }
  /// `v` as `type`, then the bit patterns one below and one above it: for a float the
  /// neighbouring values one ulp away (towards zero and away from it), for an integer v ± 1.
  void with_neighbours(double v) {
    value(v);
    uint64_t pattern = 0;
    std::memcpy(&pattern, bytes_.data() + bytes_.size() - size_, size_);
    if (pattern != 0) bits(pattern - 1);  // pattern 0 − 1 would be a NaN/−1, not a neighbour
    bits(pattern + 1);
  }
  [[nodiscard]] int64_t count() const { return static_cast<int64_t>(bytes_.size() / size_); }
  [[nodiscard]] const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  dtype type_;
  std::size_t size_;
  std::vector<std::byte> bytes_;
};

/// The dtype's ±0, smallest and largest subnormals, ±Inf, NaN and large values (integers: 0,
/// ±1, the type's limits by saturation, byte and word limits, 2^53).
std::vector<double> special_values(dtype type) {
  if (!is_float(type)) {
    return {0.0, -1.0, 1.0, 1e300, -1e300, 127.0, -128.0, 255.0, 65535.0, 4294967295.0, 9007199254740993.0};
  }
  // (smallest subnormal exponent, mantissa bits, a large finite value whose square fits a double)
  int min_exponent = -1074, mantissa_bits = 52;
  double large = 1e150;
  if (type == dtype::float16) min_exponent = -24, mantissa_bits = 10, large = 65504.0;
  if (type == dtype::bfloat16) min_exponent = -133, mantissa_bits = 7, large = 3.0e38;
  if (type == dtype::float32) min_exponent = -149, mantissa_bits = 23, large = 3.4e38;
  const double min_subnormal = std::ldexp(1.0, min_exponent);
  const double max_subnormal = std::ldexp(std::ldexp(1.0, mantissa_bits) - 1.0, min_exponent);
  return {nan, inf, -inf, 0.0, -0.0, min_subnormal, -min_subnormal, max_subnormal, -max_subnormal,
          large, -large, 0.5, -0.5, 1.0};
}

/// Appends tensors to a batch at unaligned offsets, each with a shape [rows, 7] when its count
/// divides by 7 (axis-0 and channel statistics see rank 2), else [n].
class batch_builder {
 public:
  batch_builder(std::string label, uint64_t seed) : rng_(seed) { batch_.label = std::move(label); }
  std::mt19937_64& rng() { return rng_; }
  void add(std::string name, dtype type, const element_writer& elements) {
    const int64_t n = elements.count();
    batch_.bytes.resize(batch_.bytes.size() + 1 + rng_() % 7);
    batch_.segments.push_back({batch_.bytes.size(), n, type});
    batch_.bytes.insert(batch_.bytes.end(), elements.bytes().begin(), elements.bytes().end());
    batch_.shapes.push_back(n % 7 == 0 && n > 7 ? std::vector<int64_t>{n / 7, 7} : std::vector<int64_t>{n});
    batch_.names.push_back(std::move(name));
  }
  /// The perturbed copy: every third element one bit pattern away (one ulp, or ±1), every 17th
  /// replaced by another element of the tensor; then the padding.
  selftest_batch finish() {
    batch_.bytes.resize(batch_.bytes.size() + 16);
    batch_.perturbed = batch_.bytes;
    for (const segment& s : batch_.segments) {
      const std::size_t size = dtype_size_bytes(s.type);
      std::byte* base = batch_.perturbed.data() + s.offset_bytes;
      for (int64_t i = 0; i < s.num_elements; ++i) {
        if (i % 3 == 0) base[static_cast<std::size_t>(i) * size] ^= std::byte{1};
        if (i % 17 == 5) {
          const auto from = static_cast<std::size_t>((i * 7) % s.num_elements);
          std::memmove(base + static_cast<std::size_t>(i) * size, base + from * size, size);
        }
      }
    }
    return std::move(batch_);
  }

 private:
  std::mt19937_64 rng_;
  selftest_batch batch_;
};

}  // namespace

const std::vector<dtype>& selftest_dtypes() {
  static const std::vector<dtype> types = {
      dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16, dtype::int8,
      dtype::uint8,   dtype::int16,   dtype::uint16,  dtype::int32,    dtype::uint32,
      dtype::int64,   dtype::uint64,  dtype::boolean};
  return types;
}

selftest_batch make_dtype_batch(dtype type, uint64_t seed) {
  batch_builder b(std::string(dtype_name(type)), seed ^ (static_cast<uint64_t>(type) << 40));
  auto& rng = b.rng();
  std::normal_distribution<double> normal(0.25, 60.0);
  const std::vector<double> specials = special_values(type);
  {  // specials: each special once, then random values with specials sprinkled in (1 in 4)
    element_writer e(type);
    for (double v : specials) e.value(v);
    while (e.count() < 1001) e.value(rng() % 4 == 0 ? specials[rng() % specials.size()] : normal(rng));
    b.add("specials", type, e);
  }
  {  // bin_edges: min 0 and max 64, so the 64-bin edges are the integers; each one ulp either side
    element_writer e(type);
    for (int k = 0; k <= 64; ++k) e.with_neighbours(k);
    e.value(nan);
    e.value(inf);
    std::uniform_real_distribution<double> inside(0.0, 64.0);
    while (e.count() % 7 != 0) e.value(inside(rng));
    b.add("bin_edges", type, e);
  }
  {  // log_edges: log-scale histogram edges (both signs, the first and last, zero) ± one ulp
    element_writer e(type);
    const auto edges = log_histogram_edges();
    for (const std::size_t i : {0, 1, 100, 500, 700, 773, 774, 775, 776, 900, 1200, 1547, 1548}) {
      e.with_neighbours(edges[i]);
    }
    while (e.count() % 7 != 0) e.value(normal(rng));
    b.add("log_edges", type, e);
  }
  {  // bits: random bit patterns (float64: exponents within 2^±500, so Σx² stays finite)
    element_writer e(type);
    for (int i = 0; i < 4095; ++i) {
      uint64_t r = rng();
      if (type == dtype::float64) r = (r & 0x800fffffffffffffULL) | ((1023 - 500 + rng() % 1001) << 52);
      e.bits(r);
    }
    b.add("bits", type, e);
  }
  {  // normal: enough elements for several blocks and chunks
    element_writer e(type);
    for (int i = 0; i < 70007; ++i) e.value(type == dtype::boolean ? (normal(rng) > 0.25 ? 1 : 0) : normal(rng));
    b.add("normal", type, e);
  }
  {
    element_writer e(type);
    e.value(-3.0);
    b.add("one_element", type, e);
  }
  return b.finish();
}

selftest_batch make_tiny_batch(uint64_t seed) {
  batch_builder b("tiny", seed ^ 0x7479ULL);
  auto& rng = b.rng();
  std::normal_distribution<double> normal(0.0, 2.0);
  const std::vector<double> specials = special_values(dtype::float32);
  for (int t = 0; t < 600; ++t) {
    const dtype type = t % 2 == 0 ? dtype::float32 : dtype::bfloat16;
    element_writer e(type);
    const auto n = static_cast<int64_t>(rng() % 17);
    while (e.count() < n) e.value(rng() % 5 == 0 ? specials[rng() % specials.size()] : normal(rng));
    b.add("tiny", type, e);
  }
  selftest_batch batch = b.finish();
  batch.per_tensor = false;
  return batch;
}

selftest_batch make_large_batch(int64_t num_elements) {
  selftest_batch batch;
  batch.label = "large";
  batch.per_tensor = false;
  const std::size_t lead = 3;  // unaligned, as everywhere else
  batch.bytes.resize(lead + static_cast<std::size_t>(num_elements) + 16);
  auto* out = reinterpret_cast<uint8_t*>(batch.bytes.data() + lead);
  // i·7 + i/2^20 mod 251: every byte value but 251..255, varying across any 2^k-sized split.
  for (int64_t i = 0; i < num_elements; ++i) {
    out[i] = static_cast<uint8_t>((static_cast<uint64_t>(i) * 7 + (static_cast<uint64_t>(i) >> 20)) % 251);
  }
  batch.segments.push_back({lead, num_elements, dtype::uint8});
  batch.shapes.push_back({num_elements});
  batch.names.push_back("2^31+4099 elements");
  return batch;
}

}  // namespace trialstat::stats::detail

// SPDX-License-Identifier: Apache-2.0
#include "tests/reference/reference_stats.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace trialstat::reference {
namespace {

template <class T>
T read_as(const std::byte* data, int64_t index) {
  T v;
  std::memcpy(&v, data + index * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

double half_to_double(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);
  } else {
    magnitude = std::ldexp(static_cast<double>(1024 + mantissa), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

uint16_t float_to_half_rne(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const double a = std::fabs(static_cast<double>(f));
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 65520.0) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to Inf
  if (a < std::ldexp(1.0, -14)) {
    // subnormal: units of 2^-24, round half to even
    const double units = a * std::ldexp(1.0, 24);
    const double r = std::nearbyint(units);  // default rounding: to nearest even
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(r));
  }
  int e;
  const double m = std::frexp(a, &e);  // a = m·2^e, m in [0.5, 1)
  // half normal: (1024 + mant)·2^(E-25), with E = e + 14
  const double scaled = std::nearbyint(std::ldexp(m, 11));  // in [1024, 2048]
  int E = e + 14;
  int mant = static_cast<int>(scaled) - 1024;
  if (mant == 1024) {
    mant = 0;
    ++E;
  }
  if (E >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | (E << 10) | mant);
}

uint16_t float_to_bfloat16_rne(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

template <class T>
void put(std::vector<std::byte>& out, int64_t index, T v) {
  std::memcpy(out.data() + index * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

template <class T>
T saturate_int(double v) {
  if (std::isnan(v)) return 0;
  const double r = std::nearbyint(v);
  if (r <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

}  // namespace

double element_value(const std::byte* data, dtype type, int64_t index) {
  switch (type) {
    case dtype::float32: return static_cast<double>(read_as<float>(data, index));
    case dtype::float64: return read_as<double>(data, index);
    case dtype::float16: return half_to_double(read_as<uint16_t>(data, index));
    case dtype::bfloat16: {
      const uint32_t bits = static_cast<uint32_t>(read_as<uint16_t>(data, index)) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return static_cast<double>(f);
    }
    case dtype::int8: return static_cast<double>(read_as<int8_t>(data, index));
    case dtype::uint8: return static_cast<double>(read_as<uint8_t>(data, index));
    case dtype::int16: return static_cast<double>(read_as<int16_t>(data, index));
    case dtype::uint16: return static_cast<double>(read_as<uint16_t>(data, index));
    case dtype::int32: return static_cast<double>(read_as<int32_t>(data, index));
    case dtype::uint32: return static_cast<double>(read_as<uint32_t>(data, index));
    case dtype::int64: return static_cast<double>(read_as<int64_t>(data, index));
    case dtype::uint64: return static_cast<double>(read_as<uint64_t>(data, index));
    case dtype::boolean: return read_as<uint8_t>(data, index) != 0 ? 1.0 : 0.0;
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

std::vector<double> element_values(const std::byte* data, dtype type, int64_t n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = element_value(data, type, i);
  return v;
}

moments_ref compute_moments_ref(const std::vector<double>& values) {
  moments_ref r;
  r.count = static_cast<int64_t>(values.size());
  r.min = std::numeric_limits<double>::infinity();
  r.max = -std::numeric_limits<double>::infinity();
  for (const double x : values) {
    if (std::isnan(x)) {
      ++r.nan_count;
      continue;
    }
    if (std::isinf(x)) {
      ++(x > 0 ? r.pos_inf_count : r.neg_inf_count);
      continue;
    }
    ++r.finite_count;
    if (x == 0) ++r.zero_count;
    if (x > 0) ++r.positive_count;
    if (x < 0) ++r.negative_count;
    r.min = std::min(r.min, x);
    r.max = std::max(r.max, x);
    r.max_abs = std::max(r.max_abs, std::fabs(x));
    const long double lx = x;
    r.sum += lx;
    r.sum_abs += std::fabs(lx);
    r.sum_squares += lx * lx;
  }
  if (r.finite_count > 0) {
    r.mean = r.sum / static_cast<long double>(r.finite_count);
    for (const double x : values) {
      if (!std::isfinite(x)) continue;
      const long double d = static_cast<long double>(x) - r.mean;
      r.m2 += d * d;
    }
  }
  return r;
}

namespace {

histogram_ref histogram_setup(const std::vector<double>& values, int bins,
                              std::vector<double>& finite) {
  histogram_ref h;
  for (const double x : values) {
    if (std::isfinite(x)) finite.push_back(x);
  }
  if (finite.empty()) return h;
  const double mn = *std::min_element(finite.begin(), finite.end());
  const double mx = *std::max_element(finite.begin(), finite.end());
  double lo = mn;
  double hi = mx;
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  h.bins = bins;
  h.counts.assign(static_cast<std::size_t>(bins), 0);
  if (lo == hi) {
    h.degenerate = true;
    h.lo = h.hi = mn;
    return h;
  }
  h.lo = lo;
  h.hi = hi;
  // numpy.linspace(lo, hi, bins + 1): y = arange(0, num); step = delta / div;
  // y = y * step (or y / div * delta if step == 0); y += start; y[-1] = stop.
  const double delta = hi - lo;
  const double step = delta / bins;
  h.edges.resize(static_cast<std::size_t>(bins) + 1);
  for (int i = 0; i <= bins; ++i) {
    volatile double y = static_cast<double>(i);  // volatile: keep the two roundings separate
    if (step == 0) {
      y = y / bins;
      y = y * delta;
    } else {
      y = y * step;
    }
    h.edges[static_cast<std::size_t>(i)] = y + lo;
  }
  h.edges[static_cast<std::size_t>(bins)] = hi;
  return h;
}

}  // namespace

histogram_ref compute_histogram_numpy(const std::vector<double>& values, int bins) {
  std::vector<double> finite;
  histogram_ref h = histogram_setup(values, bins, finite);
  if (h.bins == 0) return h;
  if (h.degenerate) {
    h.counts[static_cast<std::size_t>(bins / 2)] = static_cast<int64_t>(finite.size());
    return h;
  }
  const double first = h.lo;
  const double last = h.hi;
  const double norm_denom = last - first;
  for (const double x : finite) {
    if (!(x >= first && x <= last)) continue;
    volatile double f = (x - first) / norm_denom;
    f = f * bins;
    int64_t index = static_cast<int64_t>(f);
    if (index == bins) index -= 1;
    index = std::clamp<int64_t>(index, 0, bins - 1);
    if (x < h.edges[static_cast<std::size_t>(index)]) {
      index -= 1;
    } else if (x >= h.edges[static_cast<std::size_t>(index) + 1] && index != bins - 1) {
      index += 1;
    }
    ++h.counts[static_cast<std::size_t>(index)];
  }
  return h;
}

histogram_ref compute_histogram_textbook(const std::vector<double>& values, int bins) {
  std::vector<double> finite;
  histogram_ref h = histogram_setup(values, bins, finite);
  if (h.bins == 0) return h;
  if (h.degenerate) {
    h.counts[static_cast<std::size_t>(bins / 2)] = static_cast<int64_t>(finite.size());
    return h;
  }
  for (const double x : finite) {
    int64_t index = -1;
    for (int i = 0; i < bins; ++i) {
      if (h.edges[static_cast<std::size_t>(i)] <= x) index = i;
    }
    if (x == h.hi) index = bins - 1;
    ++h.counts[static_cast<std::size_t>(index)];
  }
  return h;
}

pairwise_ref compute_pairwise_ref(const std::vector<double>& a, const std::vector<double>& b,
                                  double rtol, double atol, bool equal_nan) {
  pairwise_ref r;
  r.count = static_cast<int64_t>(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const long double la = a[i];
    const long double lb = b[i];
    const long double d = lb - la;
    r.diff_sum_squares += d * d;
    r.previous_sum_squares += la * la;
    const double dd = std::fabs(b[i] - a[i]);
    if (!std::isnan(dd)) r.diff_max_abs = std::max(r.diff_max_abs, dd);
    bool close;
    if (std::isfinite(a[i]) && std::isfinite(b[i])) {
      volatile double tol = rtol * std::fabs(b[i]);
      tol = atol + tol;
      close = std::fabs(a[i] - b[i]) <= tol;
    } else {
      close = a[i] == b[i];
    }
    if (equal_nan && std::isnan(a[i]) && std::isnan(b[i])) close = true;
    if (!close) ++r.violations;
    if (std::isnan(a[i]) != std::isnan(b[i])) ++r.nan_mismatches;
  }
  return r;
}

std::vector<int64_t> count_axis0_ref(const std::vector<double>& values, int64_t batch,
                                     int64_t nodes, bool open_interval, double lo, double hi) {
  std::vector<int64_t> counts(static_cast<std::size_t>(nodes), 0);
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t j = 0; j < nodes; ++j) {
      const double x = values[static_cast<std::size_t>(i * nodes + j)];
      const bool hit = open_interval ? (lo < x && x < hi) : (x > 0);
      if (hit) ++counts[static_cast<std::size_t>(j)];
    }
  }
  return counts;
}

std::string to_string(data_mode mode) {
  switch (mode) {
    case data_mode::normal: return "normal";
    case data_mode::special: return "special";
    case data_mode::bits: return "bits";
  }
  return "?";
}

const std::vector<dtype>& real_dtypes() {
  static const std::vector<dtype> all = {
      dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64, dtype::int8,
      dtype::uint8,   dtype::int16,    dtype::uint16,  dtype::int32,   dtype::int64,
      dtype::uint32,  dtype::uint64,   dtype::boolean};
  return all;
}

std::vector<std::byte> encode_values(dtype type, const std::vector<double>& values) {
  const auto n = static_cast<int64_t>(values.size());
  std::vector<std::byte> out(static_cast<std::size_t>(n) * dtype_size_bytes(type));
  for (int64_t i = 0; i < n; ++i) {
    const double v = values[static_cast<std::size_t>(i)];
    switch (type) {
      case dtype::float32: put(out, i, static_cast<float>(v)); break;
      case dtype::float64: put(out, i, v); break;
      case dtype::float16: put(out, i, float_to_half_rne(static_cast<float>(v))); break;
      case dtype::bfloat16: put(out, i, float_to_bfloat16_rne(static_cast<float>(v))); break;
      case dtype::int8: put(out, i, saturate_int<int8_t>(v)); break;
      case dtype::uint8: put(out, i, saturate_int<uint8_t>(v)); break;
      case dtype::int16: put(out, i, saturate_int<int16_t>(v)); break;
      case dtype::uint16: put(out, i, saturate_int<uint16_t>(v)); break;
      case dtype::int32: put(out, i, saturate_int<int32_t>(v)); break;
      case dtype::uint32: put(out, i, saturate_int<uint32_t>(v)); break;
      case dtype::int64: put(out, i, saturate_int<int64_t>(v)); break;
      case dtype::uint64: put(out, i, saturate_int<uint64_t>(v)); break;
      case dtype::boolean: put(out, i, static_cast<uint8_t>(v != 0 ? 1 : 0)); break;
      default: break;
    }
  }
  return out;
}

std::vector<std::byte> make_tensor_bytes(dtype type, int64_t n, data_mode mode, uint64_t seed,
                                         double offset, double scale) {
  std::mt19937_64 rng(seed);
  const std::size_t size = dtype_size_bytes(type);
  std::vector<std::byte> out(static_cast<std::size_t>(n) * size);
  const bool is_float = type == dtype::float16 || type == dtype::bfloat16 ||
                        type == dtype::float32 || type == dtype::float64;
  if (mode == data_mode::bits) {
    for (int64_t i = 0; i < n; ++i) {
      uint64_t r = rng();
      if (type == dtype::float64) {
        // random sign and mantissa, exponent within ±500 of 1 (|x| < 1e151): Σx² stays finite;
        // plus a few specials.
        const uint64_t exponent = 1023 - 500 + (rng() % 1001);
        r = (r & 0x800fffffffffffffULL) | (exponent << 52);
        if (rng() % 64 == 0) r = (r & 0x8000000000000000ULL) | 0x7ff0000000000000ULL;  // ±Inf
        if (rng() % 64 == 0) r = 0x7ff8000000000001ULL;                                 // NaN
        if (rng() % 64 == 0) r &= 0x800fffffffffffffULL;  // ±denormal / ±0
      }
      if (type == dtype::boolean && (r & 3) == 0) r = 0;  // more false values
      std::memcpy(out.data() + static_cast<std::size_t>(i) * size, &r, size);
    }
    return out;
  }
  std::normal_distribution<double> normal(offset, scale);
  std::vector<double> values(static_cast<std::size_t>(n));
  for (auto& v : values) v = normal(rng);
  if (!is_float) {
    // Integers: spread over a range that exercises the type (bool: signs → 0/1).
    if (type == dtype::boolean) {
      for (auto& v : values) v = v > offset ? 1.0 : 0.0;
    }
  }
  if (mode == data_mode::special) {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double specials_float[] = {nan, inf, -inf, 0.0, -0.0, 4.9406564584124654e-324,
                                     -2.2250738585072014e-308, 1e-30, 3e20, -7e15, 0.5, -0.5};
    const double specials_int[] = {0.0, -1.0, 1.0, 1e30, -1e30, 127.0, -128.0, 255.0,
                                   65535.0, 9.3e18, -9.3e18, 1.8e19};
    for (auto& v : values) {
      if (rng() % 7 == 0) {
        v = is_float ? specials_float[rng() % 12] : specials_int[rng() % 12];
      }
    }
  }
  return encode_values(type, values);
}

std::vector<double> log_histogram_edges_by_loop() {
  std::vector<double> positive;
  volatile double v = 1e-12;
  while (v < 1e20) {
    positive.push_back(static_cast<double>(v));
    v = v * 1.1;
  }
  std::vector<double> edges;
  for (auto it = positive.rbegin(); it != positive.rend(); ++it) edges.push_back(-*it);
  edges.push_back(0.0);
  edges.insert(edges.end(), positive.begin(), positive.end());
  return edges;
}

log_histogram_ref log_histogram_counts(const std::vector<double>& values,
                                       const std::vector<double>& edges) {
  log_histogram_ref r;
  r.counts.assign(edges.size() - 1, 0);
  for (double x : values) {
    if (std::isnan(x)) {
      ++r.nan;
    } else if (x == std::numeric_limits<double>::infinity()) {
      ++r.pos_inf;
    } else if (x == -std::numeric_limits<double>::infinity()) {
      ++r.neg_inf;
    } else if (x < edges.front()) {
      ++r.below;
    } else if (x > edges.back()) {
      ++r.above;
    } else if (x == edges.back()) {
      ++r.counts.back();
    } else {
      const auto it = std::upper_bound(edges.begin(), edges.end(), x);
      ++r.counts[static_cast<std::size_t>(it - edges.begin() - 1)];
    }
  }
  return r;
}

}  // namespace trialstat::reference

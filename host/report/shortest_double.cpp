// SPDX-License-Identifier: Apache-2.0
// Shortest round-trip text of a finite double, laid out as fmt's "{}" (fmt 9: do_write_float
// with float_format::general, precision 0, no showpoint): fixed notation when the decimal
// exponent of the first digit is in [−4, 16), else d[.ddd]e±XX. The digits come from fmt's
// Dragonbox (`to_decimal`); only the layout is ours, written with fixed-size copies into a
// buffer with slack instead of fmt's padded, locale-aware writer (~3x fewer instructions).
// tests/report/shortest_double_test.cpp compares it with fmt::format("{}", v).
#include "host/report/shortest_double.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace trialstat::report::detail {
namespace {

/// The 8 decimal digits of n < 10^8 as ASCII, most significant first in memory (the bytes of
/// the returned little-endian word). Splits n into 4-digit halves, each half into 2-digit
/// quarters and each quarter into digits, every lane of the word at once (each quotient by a
/// multiply and shift that is exact in its range: v/100 = v·10486 >> 20 for v < 10^4,
/// w/10 = w·103 >> 10 for w < 100).
uint64_t eight_digits(uint32_t n) noexcept {
  const uint64_t halves = (n / 10000) | (static_cast<uint64_t>(n % 10000) << 32);
  const uint64_t hundreds = ((halves * 10486) >> 20) & 0x0000007F0000007FULL;
  const uint64_t quarters = hundreds | ((halves - hundreds * 100) << 16);
  const uint64_t tens = ((quarters * 103) >> 10) & 0x000F000F000F000FULL;
  const uint64_t digits = tens | ((quarters - tens * 10) << 8);
  return digits + 0x3030303030303030ULL;
}

/// Decimal digits of n (1 for 0).
int count_digits(uint64_t n) noexcept {
  static constexpr uint64_t powers_of_10[] = {1ULL,
                                              10ULL,
                                              100ULL,
                                              1000ULL,
                                              10000ULL,
                                              100000ULL,
                                              1000000ULL,
                                              10000000ULL,
                                              100000000ULL,
                                              1000000000ULL,
                                              10000000000ULL,
                                              100000000000ULL,
                                              1000000000000ULL,
                                              10000000000000ULL,
                                              100000000000000ULL,
                                              1000000000000000ULL,
                                              10000000000000000ULL,
                                              100000000000000000ULL,
                                              1000000000000000000ULL,
                                              10000000000000000000ULL};
  const int bits = 64 - std::countl_zero(n | 1);
  const int guess = (bits * 1233) >> 12;  // floor(bits · log10(2)): the digits of 2^(bits−1), less one
  const int digits = guess + 1 - (n < powers_of_10[guess] ? 1 : 0);
  return digits > 0 ? digits : 1;
}

__extension__ typedef unsigned __int128 u128;  // GCC and Clang: the digits as one 16-byte value

void store16(char* at, u128 bytes) noexcept { std::memcpy(at, &bytes, 16); }

/// `text` (16 bytes, the first `length` ≤ 16 of them wanted) at `out`, with '.' after the first
/// `integral` (0 < integral < length) of them: the bytes are split in registers (reading back
/// bytes just stored by wider or narrower stores would stall on store forwarding).
char* store_with_point(char* out, u128 text, int length, int integral) noexcept {
  store16(out, text);
  out[integral] = '.';
  store16(out + integral + 1, text >> (8 * integral));
  return out + length + 1;
}

}  // namespace

char* write_shortest_double(double v, char* out) noexcept {
  if (std::signbit(v)) {
    *out++ = '-';
    v = -v;
  }
  const auto decimal = fmt::detail::dragonbox::to_decimal(v);
  const uint64_t significand = decimal.significand;  // < 10^17
  int n = count_digits(significand);
  const int exponent = decimal.exponent;       // |v| = significand · 10^exponent
  const int first_exponent = exponent + n - 1;  // of the first digit
  // The digits: an optional first one (`lead`, only of 17-digit significands) and `text`, the
  // other n ≤ 16 digits in its low bytes in order (zero bytes above).
  char lead = 0;
  u128 text = 0;
  if (significand < 100000000ULL) {
    text = static_cast<u128>(eight_digits(static_cast<uint32_t>(significand))) >> (8 * (8 - n));
  } else {
    uint64_t high = significand / 100000000ULL;  // < 10^9
    if (n == 17) {  // high has 9 digits: the first is the lead
      lead = static_cast<char>('0' + high / 100000000ULL);
      high %= 100000000ULL;
      n = 16;
    }
    const u128 low_word = eight_digits(static_cast<uint32_t>(significand % 100000000ULL));
    const u128 high_word = eight_digits(static_cast<uint32_t>(high));
    text = (high_word | (low_word << 64)) >> (8 * (16 - n));
  }
  if (first_exponent < -4 || first_exponent >= 16) {
    // d[.ddd]e±XX
    if (lead != 0) {
      out[0] = lead;
      out[1] = '.';
      store16(out + 2, text);
      out += n + 2;
    } else if (n > 1) {
      out = store_with_point(out, text, n, 1);
    } else {
      store16(out, text);
      out += 1;
    }
    *out++ = 'e';
    int e = first_exponent;
    if (e < 0) {
      *out++ = '-';
      e = -e;
    } else {
      *out++ = '+';
    }
    if (e >= 100) {  // |e| ≤ 324 for doubles
      *out++ = static_cast<char>('0' + e / 100);
      e %= 100;
    }
    out[0] = static_cast<char>('0' + e / 10);
    out[1] = static_cast<char>('0' + e % 10);
    return out + 2;
  }
  if (exponent >= 0) {
    // An integer: the digits (no lead: n + exponent ≤ 16), then `exponent` zeros.
    store16(out, text);
    out += n;
    std::memset(out, '0', 16);
    return out + exponent;
  }
  const int integral = n + (lead != 0 ? 1 : 0) + exponent;  // digits before the point
  if (integral > 0) {
    // ddd.ddd: at most 16 digits before the point, at least one after it.
    if (lead != 0) {
      *out++ = lead;
      if (integral == 1) {
        *out++ = '.';
        store16(out, text);
        return out + n;
      }
      return store_with_point(out, text, n, integral - 1);
    }
    return store_with_point(out, text, n, integral);
  }
  // 0.000ddd: −integral ≤ 3 zeros after the point (first_exponent ≥ −4), then the digits.
  std::memcpy(out, "0.000000", 8);
  out += 2 - integral;
  if (lead != 0) *out++ = lead;
  store16(out, text);
  return out + n;
}

}  // namespace trialstat::report::detail

// SPDX-License-Identifier: Apache-2.0
// What a row is keyed by (the request signature) and how its record blob is packed.
#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "trialstat/config.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store {

std::string request_signature(const stats::statistics_request& request, stats::backend backend) {
  stats::statistics_request r = request;
  r.normalise();
  // "s1": the signature's version, raised when a request field or the record codec's layout
  // changes (rows of the old layout then never match); the trialstat version too, so a new
  // release never decodes an older one's blobs.
  std::string out = fmt::format("s1;" TRIALSTAT_VERSION ";{};m{};h{};l{};d{};r{};k{}{};w{}", backend == stats::backend::cuda ? "cuda" : "cpu",
                                int{r.moments}, r.histogram_bins, int{r.log_histogram}, r.history_depth,
                                int{r.saved_reductions}, int{r.keep_values}, int{r.keep_strings},
                                int{r.wall_time});
  for (const auto& a : r.allclose) fmt::format_to(std::back_inserter(out), ";a{}/{}/{}", a.rtol, a.atol, int{a.equal_nan});
  for (const auto& p : r.axis0) {
    fmt::format_to(std::back_inserter(out), ";x{}/{}/{}", static_cast<int>(p.what), p.lo, p.hi);
  }
  for (const double q : r.percentiles) fmt::format_to(std::back_inserter(out), ";p{}", q);
  for (const double v : r.equal_values) fmt::format_to(std::back_inserter(out), ";e{}", v);
  for (const int64_t axis : r.channel_axes) fmt::format_to(std::back_inserter(out), ";c{}", axis);
  return out;
}

bool request_storable(const stats::statistics_request& request) noexcept { return !request.keep_values; }

namespace {

/// Eight bytes at `in` stored at `out` (room for eight is the caller's), and both cursors moved
/// past those before the first zero byte: all eight when there is none (then true). A zero of
/// the word is found with the classic has-zero mask, whose lowest set bit is exact.
inline bool copy_literal_word(const std::byte*& in, std::byte*& out) noexcept {
  uint64_t word = 0;
  std::memcpy(&word, in, 8);
  std::memcpy(out, &word, 8);
  const uint64_t zeros = (word - 0x0101010101010101ULL) & ~word & 0x8080808080808080ULL;
  if (zeros == 0) {
    in += 8;
    out += 8;
    return true;
  }
  int literal = 0;
  if constexpr (std::endian::native == std::endian::little) {
    literal = std::countr_zero(zeros) / 8;
  } else {  // the mask's borrows run towards the first bytes there: look byte by byte
    while (in[literal] != std::byte{0}) ++literal;
  }
  in += literal;
  out += literal;
  return false;
}

}  // namespace

std::vector<std::byte> pack_record(std::span<const std::byte> raw) {
  std::vector<std::byte> out;
  pack_record(raw, out);
  return out;
}

void pack_record(std::span<const std::byte> raw, std::vector<std::byte>& out) {
  // Written through a local pointer into `out` (under twice the input: a lone zero takes two
  // bytes, plus room for one eight-byte store past the end). Literal bytes go eight at a time
  // while eight remain (all eight stored, the cursors moved past those before the first zero, as
  // unpack_record reads them), zero runs are counted eight at a time; the tail byte by byte.
  const std::size_t bound = raw.size() * 2 + 16;
  if (out.size() < bound) out.resize(bound);
  std::byte* o = out.data();
  const std::byte* p = raw.data();
  const std::byte* const end = p + raw.size();
  const auto word_at = [](const std::byte* at) {
    uint64_t word = 0;
    std::memcpy(&word, at, 8);
    return word;
  };
  while (p < end) {
    if (end - p >= 8) {
      if (copy_literal_word(p, o)) continue;
    } else if (*p != std::byte{0}) {
      *o++ = *p++;
      continue;
    }
    // A zero at p: the run's length, then a zero byte and the LEB128 count of further zeros.
    const std::byte* q = p + 1;
    while (end - q >= 8 && word_at(q) == 0) q += 8;
    while (q < end && *q == std::byte{0}) ++q;
    *o++ = std::byte{0};
    uint64_t more = static_cast<uint64_t>(q - p) - 1;  // LEB128
    do {
      auto b = static_cast<uint8_t>(more & 0x7f);
      more >>= 7;
      if (more != 0) b |= 0x80;
      *o++ = std::byte{b};
    } while (more != 0);
    p = q;
  }
  out.resize(static_cast<std::size_t>(o - out.data()));
}

status unpack_record(std::span<const std::byte> packed, std::vector<std::byte>& raw) {
  constexpr uint64_t max_bytes = uint64_t{1} << 32;  // a record is kilobytes; refuse nonsense
  // What one token (eight literal bytes, or a zero run whose count fits one byte, written with
  // 16-byte stores) may write: room for it is made once per token.
  constexpr std::size_t token_room = 8 + 128 + 16;
  // Written through local pointers into `raw` (a std::byte store may alias the vector itself, so
  // going through `raw` would reload its pointers after every byte), grown by doubling (a record
  // unpacks to a few times its packed size). The buffer is grown from its size, not its
  // capacity: a reused buffer is not zero-filled up to the largest record it ever held (a 12 KiB
  // log histogram) at every call.
  raw.resize(std::max<std::size_t>(raw.size(), packed.size() * 4 + 64 + token_room));
  std::byte* out = raw.data();
  std::byte* limit = out + raw.size();
  const auto room = [&](uint64_t more) {
    if (more <= static_cast<uint64_t>(limit - out)) return;
    const auto n = static_cast<std::size_t>(out - raw.data());
    raw.resize(std::max<std::size_t>(raw.size() * 2, n + static_cast<std::size_t>(more)));
    out = raw.data() + n;
    limit = raw.data() + raw.size();
  };
  const std::byte* p = packed.data();
  const std::byte* const end = p + packed.size();
  while (p < end) {
    room(token_room);
    // Literal bytes eight at a time (copy_literal_word); the tail byte by byte.
    if (end - p >= 8) {
      if (copy_literal_word(p, out)) continue;
    } else if (*p != std::byte{0}) {
      *out++ = *p++;
      continue;
    }
    // A zero byte at p, then the LEB128 count of further zeros: one byte (below 128) in most runs.
    if (end - p >= 2 && static_cast<uint8_t>(p[1]) < 0x80) {
      const auto more = static_cast<uint8_t>(p[1]);
      p += 2;
      std::memset(out, 0, 16);  // a short run (most are): two stores, no call
      if (more >= 16) std::memset(out + 16, 0, static_cast<std::size_t>(more) - 15);
      out += more + 1;
      continue;
    }
    ++p;
    uint64_t more = 0;
    int shift = 0;
    bool ended = false;
    while (p < end && shift < 64) {
      const auto b = static_cast<uint8_t>(*p++);
      more |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) == 0) {
        ended = true;
        break;
      }
    }
    const auto n = static_cast<uint64_t>(out - raw.data());
    if (!ended || more >= max_bytes - n) {
      raw.resize(static_cast<std::size_t>(n));
      return status(error_code::data_loss,
                    fmt::format("record blob: bad zero run at byte {}", static_cast<std::size_t>(p - packed.data())));
    }
    room(more + 16);
    std::memset(out, 0, static_cast<std::size_t>(more) + 1);
    out += more + 1;
  }
  raw.resize(static_cast<std::size_t>(out - raw.data()));
  return status::success();
}

}  // namespace trialstat::store

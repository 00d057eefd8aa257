// SPDX-License-Identifier: Apache-2.0
// Shares of a group catalog load (index_share.hpp): little-endian fixed-width integers and
// length-prefixed strings, read back with bounds checks.
#include "host/trial/index_share.hpp"

#include <cstring>

#include <fmt/format.h>

namespace trialstat::trial::detail {
namespace {

constexpr uint32_t share_magic = 0x54534853;  // "SHST"
constexpr uint32_t listing_magic = 0x54534c53;  // "SLST"

template <typename T>
void put(std::vector<std::byte>& out, T value) {
  const std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

void put_text(std::vector<std::byte>& out, std::string_view text) {
  put<uint32_t>(out, static_cast<uint32_t>(text.size()));
  const std::size_t at = out.size();
  out.resize(at + text.size());
  if (!text.empty()) std::memcpy(out.data() + at, text.data(), text.size());
}

template <typename T>
void put_array(std::vector<std::byte>& out, const std::vector<T>& items) {
  put<uint32_t>(out, static_cast<uint32_t>(items.size()));
  const std::size_t at = out.size();
  out.resize(at + items.size() * sizeof(T));
  if (!items.empty()) std::memcpy(out.data() + at, items.data(), items.size() * sizeof(T));
}

}  // namespace

share_bounds share_of(std::size_t files, int rank, int size) noexcept {
  if (size < 1 || rank < 0 || rank >= size) return {0, 0};
  const auto n = static_cast<std::size_t>(size);
  const auto r = static_cast<std::size_t>(rank);
  const std::size_t base = files / n;
  const std::size_t extra = files % n;
  return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

uint64_t listing_fingerprint(std::span<const std::string> keys) noexcept {
  uint64_t h = 1469598103934665603ULL;
  for (const std::string& key : keys) {
    for (const char c : key) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ULL;
    }
    h ^= 0xff;  // separator: ["ab", "c"] and ["a", "bc"] differ
    h *= 1099511628211ULL;
  }
  return h;
}

share_writer::share_writer(std::size_t listed, uint64_t fingerprint, share_bounds slice) {
  put<uint32_t>(bytes_, share_magic);
  put<uint64_t>(bytes_, listed);
  put<uint64_t>(bytes_, fingerprint);
  put<uint64_t>(bytes_, slice.first);
  put<uint64_t>(bytes_, slice.count);
}

void share_writer::add(const index_outcome& outcome, const parsed_index& parsed) {
  put<uint8_t>(bytes_, static_cast<uint8_t>(outcome.what));
  if (outcome.what != index_outcome::kind::parsed) {
    put<uint32_t>(bytes_, static_cast<uint32_t>(outcome.problem.code()));
    put_text(bytes_, outcome.problem.message());
    return;
  }
  put<uint8_t>(bytes_, parsed.mode ? static_cast<uint8_t>(*parsed.mode) : uint8_t{0});  // modes are 1..4
  put<uint8_t>(bytes_, parsed.mode_step ? 1 : 0);
  put<int64_t>(bytes_, parsed.mode_step.value_or(0));
  put<uint8_t>(bytes_, parsed.has_event_file_name ? 1 : 0);
  put_text(bytes_, parsed.event_file_name);
  put_text(bytes_, parsed.names);
  put_array(bytes_, parsed.tensors);
  put_array(bytes_, parsed.shapes);
  put_array(bytes_, parsed.dims);
  put<uint32_t>(bytes_, static_cast<uint32_t>(parsed.unknown_keys.size()));
  for (const std::string& key : parsed.unknown_keys) put_text(bytes_, key);
}

namespace {

/// Bounds-checked reads from a share; the first failure is remembered.
class cursor {
 public:
  cursor(std::span<const std::byte> bytes, std::size_t& at) : bytes_(bytes), at_(at) {}
  template <typename T>
  bool get(T& value) {
    if (bytes_.size() - at_ < sizeof(T)) return false;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  bool get_text(std::string& text) {
    uint32_t n = 0;
    if (!get(n) || bytes_.size() - at_ < n) return false;
    text.assign(reinterpret_cast<const char*>(bytes_.data() + at_), n);
    at_ += n;
    return true;
  }
  template <typename T>
  bool get_array(std::vector<T>& items) {
    uint32_t n = 0;
    if (!get(n) || (bytes_.size() - at_) / sizeof(T) < n) return false;
    items.resize(n);
    if (n > 0) std::memcpy(items.data(), bytes_.data() + at_, std::size_t{n} * sizeof(T));
    at_ += std::size_t{n} * sizeof(T);
    return true;
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t& at_;
};

}  // namespace

result<share_reader> share_reader::open(std::span<const std::byte> bytes, int from_rank, std::size_t listed,
                                         uint64_t fingerprint, share_bounds expected) {
  share_reader reader(bytes, from_rank);
  cursor in(bytes, reader.at_);
  uint32_t magic = 0;
  uint64_t their_listed = 0;
  uint64_t their_fingerprint = 0;
  uint64_t first = 0;
  uint64_t count = 0;
  if (!in.get(magic) || magic != share_magic || !in.get(their_listed) || !in.get(their_fingerprint) ||
      !in.get(first) || !in.get(count)) {
    return status(error_code::data_loss,
                  fmt::format("catalog share of rank {}: not a share ({} bytes)", from_rank, bytes.size()));
  }
  if (their_listed != listed || their_fingerprint != fingerprint) {
    return status(error_code::invalid_argument,
                  fmt::format("rank {} listed {} index files to load where this rank listed {} (or other "
                              "ones): the trial changed while the ranks opened it, or the ranks see "
                              "different files",
                              from_rank, their_listed, listed));
  }
  if (first != expected.first || count != expected.count) {
    return status(error_code::data_loss,
                  fmt::format("catalog share of rank {}: covers files [{}, {}) where [{}, {}) was expected",
                              from_rank, first, first + count, expected.first, expected.first + expected.count));
  }
  return reader;
}

status share_reader::next(index_outcome& outcome, parsed_index& parsed) {
  const auto bad = [&] {
    return status(error_code::data_loss,
                  fmt::format("catalog share of rank {}: truncated or malformed at byte {}", rank_, at_));
  };
  cursor in(bytes_, at_);
  uint8_t what = 0;
  if (!in.get(what) || what > 2) return bad();
  outcome.what = static_cast<index_outcome::kind>(what);
  if (outcome.what != index_outcome::kind::parsed) {
    uint32_t code = 0;
    std::string message;
    if (!in.get(code) || !in.get_text(message)) return bad();
    outcome.problem = status(static_cast<error_code>(code), std::move(message));
    return status::success();
  }
  outcome.problem = status::success();
  parsed.clear();
  uint8_t mode = 0;
  uint8_t has_mode_step = 0;
  int64_t mode_step = 0;
  uint8_t has_event_file_name = 0;
  if (!in.get(mode) || mode > static_cast<uint8_t>(trialstat::mode::global) || !in.get(has_mode_step) || !in.get(mode_step) ||
      !in.get(has_event_file_name) || !in.get_text(parsed.event_file_name) || !in.get_text(parsed.names) ||
      !in.get_array(parsed.tensors) || !in.get_array(parsed.shapes) || !in.get_array(parsed.dims)) {
    return bad();
  }
  if (mode != 0) parsed.mode = static_cast<trialstat::mode>(mode);
  if (has_mode_step != 0) parsed.mode_step = mode_step;
  parsed.has_event_file_name = has_event_file_name != 0;
  uint32_t unknown = 0;
  if (!in.get(unknown)) return bad();
  for (uint32_t k = 0; k < unknown; ++k) {
    if (!in.get_text(parsed.unknown_keys.emplace_back())) return bad();
  }
  // Offsets must stay inside the arenas they index.
  for (const auto& t : parsed.tensors) {
    if (uint64_t{t.name_offset} + t.name_length > parsed.names.size()) return bad();
  }
  for (const auto& s : parsed.shapes) {
    if (uint64_t{s.name_offset} + s.name_length > parsed.names.size() ||
        uint64_t{s.dims_offset} + s.dims_count > parsed.dims.size()) {
      return bad();
    }
  }
  return status::success();
}

status share_reader::finish() const {
  if (at_ == bytes_.size()) return status::success();
  return status(error_code::data_loss, fmt::format("catalog share of rank {}: {} bytes left over after its last file",
                                                   rank_, bytes_.size() - at_));
}

std::vector<std::byte> write_listing_share(const status& listed, std::span<const io::object_info> objects) {
  std::vector<std::byte> out;
  put<uint32_t>(out, listing_magic);
  put<uint32_t>(out, static_cast<uint32_t>(listed.code()));
  if (!listed.ok()) {
    put_text(out, listed.message());
    return out;
  }
  std::size_t total = out.size() + sizeof(uint64_t);
  for (const auto& object : objects) total += sizeof(uint32_t) + object.key.size();
  out.reserve(total);
  put<uint64_t>(out, objects.size());
  for (const auto& object : objects) put_text(out, object.key);
  return out;
}

status read_listing_share(std::span<const std::byte> bytes, int from_rank, std::vector<std::string>& keys) {
  std::size_t at = 0;
  cursor in(bytes, at);
  const auto bad = [&] {
    return status(error_code::data_loss,
                  fmt::format("listing share of rank {}: not a listing, or cut short at byte {} of {}", from_rank,
                              at, bytes.size()));
  };
  uint32_t magic = 0;
  uint32_t code = 0;
  if (!in.get(magic) || magic != listing_magic || !in.get(code)) return bad();
  if (code != static_cast<uint32_t>(error_code::ok)) {
    std::string message;
    if (!in.get_text(message)) return bad();
    return status(static_cast<error_code>(code), std::move(message));
  }
  uint64_t count = 0;
  if (!in.get(count) || count > (bytes.size() - at) / sizeof(uint32_t)) return bad();
  keys.reserve(keys.size() + count);
  for (uint64_t i = 0; i < count; ++i) {
    if (!in.get_text(keys.emplace_back())) return bad();
  }
  if (at != bytes.size()) return bad();
  return status::success();
}

}  // namespace trialstat::trial::detail

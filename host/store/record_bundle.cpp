// SPDX-License-Identifier: Apache-2.0
#include "host/store/record_bundle.hpp"

#include <bit>
#include <cstring>
#include <unordered_map>

namespace trialstat::store::detail {
namespace {

static_assert(std::endian::native == std::endian::little, "bundle blobs are little-endian (host byte order here)");

template <typename T>
void put(std::vector<std::byte>& out, T value) {
  const std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

void put_bytes(std::vector<std::byte>& out, const void* data, std::size_t size) {
  put(out, static_cast<uint32_t>(size));
  const std::size_t at = out.size();
  out.resize(at + size);
  if (size != 0) std::memcpy(out.data() + at, data, size);
}

/// Bounds-checked reads from a blob; every read fails once one has.
class reader {
 public:
  explicit reader(std::span<const std::byte> in) : in_(in) {}
  template <typename T>
  bool get(T& value) {
    if (in_.size() - at_ < sizeof(T)) return false;
    std::memcpy(&value, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  bool get_bytes(std::span<const std::byte>& bytes) {
    uint32_t size = 0;
    if (!get(size) || in_.size() - at_ < size) return false;
    bytes = in_.subspan(at_, size);
    at_ += size;
    return true;
  }
  bool get_text(std::string_view& text) {
    std::span<const std::byte> bytes;
    if (!get_bytes(bytes)) return false;
    text = {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
    return true;
  }
  [[nodiscard]] bool at_end() const noexcept { return at_ == in_.size(); }

 private:
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
};

}  // namespace

void encode_bundle(std::span<const row_view> rows, std::vector<std::byte>& blob) {
  blob.clear();
  put(blob, bundle_format);
  put(blob, static_cast<uint32_t>(rows.size()));
  for (const row_view& v : rows) {
    for (const std::string_view text : {v.tensor, v.event_file, v.ranges, v.file_version, v.previous}) {
      put_bytes(blob, text.data(), text.size());
    }
    put_bytes(blob, v.record.data(), v.record.size());
    put(blob, static_cast<uint32_t>(v.mode));
    put(blob, v.mode_step);
    put(blob, v.file_size_bytes);
  }
}

bool decode_bundle(std::span<const std::byte> blob, int64_t step, std::string_view worker, std::string_view request,
                   std::vector<row_view>& rows) {
  reader in(blob);
  uint8_t format = 0;
  uint32_t count = 0;
  if (!in.get(format) || format != bundle_format || !in.get(count)) return false;
  const std::size_t before = rows.size();
  for (uint32_t i = 0; i < count; ++i) {
    row_view v;
    v.step = step;
    v.worker = worker;
    v.request = request;
    uint32_t mode = 0;
    if (!in.get_text(v.tensor) || !in.get_text(v.event_file) || !in.get_text(v.ranges) ||
        !in.get_text(v.file_version) || !in.get_text(v.previous) || !in.get_bytes(v.record) || !in.get(mode) ||
        !in.get(v.mode_step) || !in.get(v.file_size_bytes)) {
      rows.resize(before);
      return false;
    }
    v.mode = static_cast<int>(mode);
    rows.push_back(v);
  }
  if (!in.at_end()) {
    rows.resize(before);
    return false;
  }
  return true;
}

void merge_bundle_rows(std::span<const row_view> existing, std::span<const row_view> fresh,
                       std::vector<row_view>& merged) {
  merged.clear();
  // Per tensor of `fresh`, its last row (a tensor twice there, a step read again after a
  // restart: the later row wins).
  std::unordered_map<std::string_view, std::size_t> last;
  last.reserve(fresh.size());
  for (std::size_t i = 0; i < fresh.size(); ++i) last[fresh[i].tensor] = i;
  for (const row_view& v : existing) {
    if (last.count(v.tensor) == 0) merged.push_back(v);
  }
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    if (last.find(fresh[i].tensor)->second == i) merged.push_back(fresh[i]);
  }
}

}  // namespace trialstat::store::detail

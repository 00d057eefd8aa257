// SPDX-License-Identifier: Apache-2.0
// Test helper: a tiny protobuf wire-format writer, so tests can build payloads the generated
// classes cannot (unpacked repeated fields, shuffled field order, unknown fields, malformed
// bytes). Fields are written exactly in call order.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trialstat::testing {

class wire_writer {
 public:
  wire_writer& varint(uint32_t field, uint64_t value) {
    tag(field, 0);
    put_varint(value);
    return *this;
  }
  wire_writer& fixed64(uint32_t field, uint64_t bits) {
    tag(field, 1);
    put_le(bits, 8);
    return *this;
  }
  wire_writer& fixed32(uint32_t field, uint32_t bits) {
    tag(field, 5);
    put_le(bits, 4);
    return *this;
  }
  wire_writer& f64(uint32_t field, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return fixed64(field, bits);
  }
  wire_writer& f32(uint32_t field, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return fixed32(field, bits);
  }
  wire_writer& bytes(uint32_t field, std::string_view data) {
    tag(field, 2);
    put_varint(data.size());
    out_ += data;
    return *this;
  }
  wire_writer& message(uint32_t field, const wire_writer& m) { return bytes(field, m.str()); }
  wire_writer& packed_varints(uint32_t field, const std::vector<uint64_t>& values) {
    wire_writer body;
    for (uint64_t v : values) body.put_varint(v);
    return bytes(field, body.str());
  }
  wire_writer& packed_fixed(uint32_t field, const std::vector<uint64_t>& bits, int width) {
    wire_writer body;
    for (uint64_t b : bits) body.put_le(b, width);
    return bytes(field, body.str());
  }
  /// Raw bytes, no tag (for malformed inputs).
  wire_writer& raw(std::string_view data) {
    out_ += data;
    return *this;
  }
  wire_writer& tag(uint32_t field, uint32_t wire) {
    put_varint((static_cast<uint64_t>(field) << 3) | wire);
    return *this;
  }
  void put_varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void put_le(uint64_t v, int width) {
    for (int i = 0; i < width; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  [[nodiscard]] const std::string& str() const { return out_; }
  [[nodiscard]] std::span<const std::byte> span() const {
    return {reinterpret_cast<const std::byte*>(out_.data()), out_.size()};
  }

 private:
  std::string out_;
};

inline std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace trialstat::testing

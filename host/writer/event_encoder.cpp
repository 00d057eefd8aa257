// SPDX-License-Identifier: Apache-2.0
// Hand encoding of smdebug tensor events (see event_encoder.hpp for the wire layout).
//
// Why hand-encoded: the generated classes would copy a tensor's element bytes into a
// std::string (and cap messages at 2 GiB); here the element bytes never leave the caller's
// buffer. Byte identity with the generated classes is checked by tests/writer.
#include "trialstat/writer/event_encoder.hpp"

#include <bit>
#include <charconv>

#include <fmt/format.h>

#include "trialstat/io/crc32c.hpp"
#include "trialstat/io/record_reader.hpp"

namespace trialstat::writer {
namespace {

// Protobuf wire types.
constexpr uint32_t wire_varint = 0;
constexpr uint32_t wire_fixed64 = 1;
constexpr uint32_t wire_length = 2;

constexpr std::size_t varint_size(uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

constexpr uint64_t key(uint32_t field, uint32_t wire) noexcept { return (field << 3) | wire; }

// Size of a length-delimited field (key + length varint + body) with a one-byte key.
constexpr std::size_t delimited_size(std::size_t body_bytes) noexcept {
  return 1 + varint_size(body_bytes) + body_bytes;
}

class byte_sink {
 public:
  explicit byte_sink(std::vector<std::byte>& out) : out_(out) {}
  void u8(uint8_t b) { out_.push_back(static_cast<std::byte>(b)); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      u8(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    u8(static_cast<uint8_t>(v));
  }
  void raw(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  void fixed_le(uint64_t v, int n_bytes) {
    for (int i = 0; i < n_bytes; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void delimited_header(uint32_t field, std::size_t body_bytes) {
    varint(key(field, wire_length));
    varint(body_bytes);
  }
  void string_field(uint32_t field, std::string_view s) {
    delimited_header(field, s.size());
    raw(s.data(), s.size());
  }

 private:
  std::vector<std::byte>& out_;
};

std::string decimal(int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  return std::string(buf, end);
}

// Everything needed to lay out one record; sizes computed bottom-up.
struct layout {
  std::string mode_step_text;
  std::string mode_text;
  std::vector<std::string> dim_names;
  std::size_t shape_body = 0;
  std::size_t tensor_body = 0;
  std::size_t metadata_body = 0;
  std::size_t value_body = 0;
  std::size_t summary_body = 0;
  std::size_t payload = 0;
};

status validate_header(const event_header& h) {
  if (h.tag.empty()) return {error_code::invalid_argument, "tensor record: empty tensor name"};
  if (h.step < 0) {
    return {error_code::invalid_argument,
            fmt::format("tensor record '{}': negative global step {}", h.tag, h.step)};
  }
  // −1: a mode never stepped (smdebug stamps a scalar flushed right after set_mode so).
  if (h.mode_step < -1) {
    return {error_code::invalid_argument,
            fmt::format("tensor record '{}': mode step {} < -1", h.tag, h.mode_step)};
  }
  const int m = static_cast<int>(h.mode);
  if (m < 1 || m > 4) {
    return {error_code::invalid_argument,
            fmt::format("tensor record '{}': mode number {} is not 1..4", h.tag, m)};
  }
  return status::success();
}

// Sizes of everything except the TensorProto's value fields (content / string_val), which the
// caller adds to `tensor_body` before `finish_layout`.
layout start_layout(const event_header& h, std::span<const int64_t> shape, int32_t proto_dtype) {
  layout l;
  l.mode_step_text = decimal(h.mode_step);
  l.mode_text = decimal(static_cast<int>(h.mode));
  l.dim_names.reserve(shape.size());
  for (int64_t d : shape) {
    std::string name;
    name.reserve(h.tag.size() + 21);
    name.append(h.tag).push_back('_');
    name.append(decimal(d));
    const std::size_t dim_body =
        (d != 0 ? 1 + varint_size(static_cast<uint64_t>(d)) : 0) + delimited_size(name.size());
    l.shape_body += delimited_size(dim_body);
    l.dim_names.push_back(std::move(name));
  }
  l.tensor_body = (proto_dtype != 0 ? 1 + varint_size(static_cast<uint64_t>(proto_dtype)) : 0) +
                  delimited_size(l.shape_body);
  const std::size_t pd1 = delimited_size(9) + delimited_size(l.mode_step_text.size());
  const std::size_t pd2 = delimited_size(4) + delimited_size(l.mode_text.size());
  l.metadata_body = delimited_size(pd1) + delimited_size(pd2);
  return l;
}

void finish_layout(const event_header& h, layout& l) {
  l.value_body =
      delimited_size(h.tag.size()) + delimited_size(l.tensor_body) + delimited_size(l.metadata_body);
  l.summary_body = delimited_size(l.value_body);
  const bool has_wall_time = std::bit_cast<uint64_t>(h.wall_time) != 0;
  l.payload = (has_wall_time ? 9 : 0) +
              (h.step != 0 ? 1 + varint_size(static_cast<uint64_t>(h.step)) : 0) +
              delimited_size(l.summary_body);
}

void write_framing_and_prefix(const event_header& h, const layout& l,
                              std::span<const int64_t> shape, int32_t proto_dtype,
                              std::vector<std::byte>& out) {
  byte_sink s(out);
  // Framing: u64 length, u32 masked CRC of those 8 bytes.
  s.fixed_le(l.payload, 8);
  const uint32_t len_crc =
      io::mask_crc32c(io::crc32c(std::span<const std::byte>(out.data() + out.size() - 8, 8)));
  s.fixed_le(len_crc, 4);
  // Event
  if (std::bit_cast<uint64_t>(h.wall_time) != 0) {
    s.varint(key(1, wire_fixed64));
    s.fixed_le(std::bit_cast<uint64_t>(h.wall_time), 8);
  }
  if (h.step != 0) {
    s.varint(key(2, wire_varint));
    s.varint(static_cast<uint64_t>(h.step));
  }
  s.delimited_header(5, l.summary_body);    // Event.summary
  s.delimited_header(1, l.value_body);      // Summary.value
  s.string_field(1, h.tag);                 // Value.tag
  s.delimited_header(8, l.tensor_body);     // Value.tensor
  if (proto_dtype != 0) {
    s.varint(key(1, wire_varint));          // TensorProto.dtype
    s.varint(static_cast<uint64_t>(proto_dtype));
  }
  s.delimited_header(2, l.shape_body);      // TensorProto.tensor_shape (always present)
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const int64_t d = shape[i];
    const std::size_t dim_body = (d != 0 ? 1 + varint_size(static_cast<uint64_t>(d)) : 0) +
                                 delimited_size(l.dim_names[i].size());
    s.delimited_header(2, dim_body);        // TensorShapeProto.dim
    if (d != 0) {
      s.varint(key(1, wire_varint));        // Dim.size
      s.varint(static_cast<uint64_t>(d));
    }
    s.string_field(2, l.dim_names[i]);      // Dim.name
  }
}

void write_metadata(const layout& l, std::vector<std::byte>& out) {
  byte_sink s(out);
  s.delimited_header(9, l.metadata_body);   // Value.metadata
  const std::size_t pd1 = delimited_size(9) + delimited_size(l.mode_step_text.size());
  s.delimited_header(1, pd1);               // SummaryMetadata.plugin_data
  s.string_field(1, "mode_step");
  s.string_field(2, l.mode_step_text);
  const std::size_t pd2 = delimited_size(4) + delimited_size(l.mode_text.size());
  s.delimited_header(1, pd2);
  s.string_field(1, "mode");
  s.string_field(2, l.mode_text);
}

void write_footer(footer_policy footer, std::span<const std::byte> head_payload,
                  std::span<const std::byte> content, std::vector<std::byte>& tail,
                  std::size_t tail_payload_bytes) {
  uint32_t value = io::smdebug_footer_magic;
  if (footer == footer_policy::payload_crc) {
    uint32_t crc = io::crc32c_extend(0, head_payload.data(), head_payload.size());
    crc = io::crc32c_extend(crc, content.data(), content.size());
    crc = io::crc32c_extend(crc, tail.data(), tail_payload_bytes);
    value = io::mask_crc32c(crc);
  }
  byte_sink(tail).fixed_le(value, 4);
}

status validate_tensor(const event_header& h, const tensor_view& t) {
  TRIALSTAT_RETURN_IF_ERROR(validate_header(h));
  if (dtype_size_bytes(t.type) == 0) {
    return {error_code::invalid_argument,
            fmt::format("tensor record '{}': dtype {} has no fixed element size (use string "
                        "records for strings)",
                        h.tag, dtype_proto_name(t.type))};
  }
  if (t.memory == memory_kind::device) {
    return {error_code::invalid_argument,
            fmt::format("tensor record '{}': device memory cannot be written; copy to host first",
                        h.tag)};
  }
  int64_t product = 1;
  for (int64_t d : t.shape) {
    if (d < 0) {
      return {error_code::invalid_argument,
              fmt::format("tensor record '{}': negative dimension {}", h.tag, d)};
    }
    if (d != 0 && product > INT64_MAX / d) {
      return {error_code::invalid_argument,
              fmt::format("tensor record '{}': shape product overflows int64", h.tag)};
    }
    product *= d;
  }
  if (product != t.num_elements) {
    return {error_code::invalid_argument,
            fmt::format("tensor record '{}': num_elements {} differs from the shape's product {}",
                        h.tag, t.num_elements, product)};
  }
  if (t.num_elements > 0 && t.data == nullptr) {
    return {error_code::invalid_argument,
            fmt::format("tensor record '{}': null data for {} elements", h.tag, t.num_elements)};
  }
  return status::success();
}

}  // namespace

result<record_parts> encode_tensor_record_parts(const event_header& header,
                                                const tensor_view& tensor, footer_policy footer) {
  TRIALSTAT_RETURN_IF_ERROR(validate_tensor(header, tensor));
  const auto proto_dtype = static_cast<int32_t>(tensor.type);
  const std::size_t content_bytes = tensor.size_bytes();
  layout l = start_layout(header, tensor.shape, proto_dtype);
  if (content_bytes != 0) l.tensor_body += delimited_size(content_bytes);
  finish_layout(header, l);

  record_parts parts;
  parts.head.reserve(io::record_header_bytes + 64 + header.tag.size() * (2 + tensor.shape.size()) +
                     24 * tensor.shape.size());
  write_framing_and_prefix(header, l, tensor.shape, proto_dtype, parts.head);
  if (content_bytes != 0) {
    byte_sink s(parts.head);
    s.delimited_header(4, content_bytes);   // TensorProto.tensor_content
    parts.content = std::span<const std::byte>(tensor.data, content_bytes);
  }
  write_metadata(l, parts.tail);
  const std::size_t tail_payload = parts.tail.size();
  write_footer(footer,
               std::span<const std::byte>(parts.head).subspan(io::record_header_bytes),
               parts.content, parts.tail, tail_payload);
  return parts;
}

result<std::vector<std::byte>> encode_tensor_record(const event_header& header,
                                                    const tensor_view& tensor,
                                                    footer_policy footer) {
  auto parts = encode_tensor_record_parts(header, tensor, footer);
  if (!parts) return parts.error_status();
  std::vector<std::byte> out;
  out.reserve(parts->size_bytes());
  out.insert(out.end(), parts->head.begin(), parts->head.end());
  out.insert(out.end(), parts->content.begin(), parts->content.end());
  out.insert(out.end(), parts->tail.begin(), parts->tail.end());
  return out;
}

result<record_parts> encode_string_record_parts(const event_header& header,
                                                std::span<const std::string> values,
                                                footer_policy footer) {
  TRIALSTAT_RETURN_IF_ERROR(validate_header(header));
  if (values.empty()) {
    return status(error_code::invalid_argument,
                  fmt::format("string record '{}': no strings (smdebug's reader needs at least one)",
                              header.tag));
  }
  const int64_t count = static_cast<int64_t>(values.size());
  const std::array<int64_t, 1> shape{count};
  layout l = start_layout(header, shape, 0);
  for (const auto& v : values) l.tensor_body += delimited_size(v.size());
  finish_layout(header, l);

  record_parts parts;
  write_framing_and_prefix(header, l, shape, 0, parts.head);
  {
    byte_sink s(parts.head);
    for (const auto& v : values) s.string_field(8, v);  // TensorProto.string_val
  }
  write_metadata(l, parts.tail);
  const std::size_t tail_payload = parts.tail.size();
  write_footer(footer,
               std::span<const std::byte>(parts.head).subspan(io::record_header_bytes), {},
               parts.tail, tail_payload);
  return parts;
}

result<std::vector<std::byte>> encode_tensor_payload(const event_header& header,
                                                     const tensor_view& tensor) {
  auto record = encode_tensor_record(header, tensor, footer_policy::smdebug_constant);
  if (!record) return record.error_status();
  return std::vector<std::byte>(record->begin() + io::record_header_bytes,
                                record->end() - io::record_footer_bytes);
}

std::string reduction_tag(std::string_view tensor_name, std::string_view op, bool abs) {
  // smdebug: re.sub(r":\d+", "", f"{reduction}/{tensor}") outside TensorFlow.
  std::string composed = std::string(op) + "/" + std::string(tensor_name);
  std::string cleaned;
  cleaned.reserve(composed.size());
  for (std::size_t i = 0; i < composed.size();) {
    if (composed[i] == ':' && i + 1 < composed.size() && composed[i + 1] >= '0' &&
        composed[i + 1] <= '9') {
      i += 1;
      while (i < composed.size() && composed[i] >= '0' && composed[i] <= '9') ++i;
      continue;
    }
    cleaned.push_back(composed[i++]);
  }
  return std::string("smdebug/reductions/") + (abs ? "abs_" : "") + cleaned;
}

}  // namespace trialstat::writer

// SPDX-License-Identifier: Apache-2.0
// A hand-written protobuf wire-format walker for Event → Summary → Value → TensorProto
// (FORMAT §3–§5). Views point into the payload; nothing is materialised or copied except the
// rarely used typed value fields (float_val, int_val, ...), which are re-packed into scratch.
#include "trialstat/decode/event_decoder.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#include <fmt/format.h>

namespace trialstat::decode {
namespace {

constexpr uint32_t wire_varint = 0;
constexpr uint32_t wire_fixed64 = 1;
constexpr uint32_t wire_length = 2;
constexpr uint32_t wire_start_group = 3;
constexpr uint32_t wire_end_group = 4;
constexpr uint32_t wire_fixed32 = 5;

// Field numbers (proto/event.proto, proto/tensor.proto; TF's TensorProto for 16 and 17).
namespace event_field {
constexpr uint32_t wall_time = 1, step = 2, summary = 5;
}
namespace summary_field {
constexpr uint32_t value = 1;
}
namespace value_field {
constexpr uint32_t tag = 1, simple_value = 2, histo = 5, tensor = 8, metadata = 9;
}
namespace metadata_field {
constexpr uint32_t plugin_data = 1;
}
namespace plugin_field {
constexpr uint32_t name = 1, content = 2;
}
namespace tensor_field {
constexpr uint32_t dtype = 1, shape = 2, content = 4, float_val = 5, double_val = 6, int_val = 7,
                   string_val = 8, scomplex_val = 9, int64_val = 10, bool_val = 11,
                   dcomplex_val = 12, half_val = 13, uint32_val = 16, uint64_val = 17;
}
namespace shape_field {
constexpr uint32_t dim = 2, unknown_rank = 3;
}
namespace dim_field {
constexpr uint32_t size = 1;
}

/// How a typed value field is encoded on the wire (unpacked) or inside a packed run.
enum class value_encoding : uint8_t { fixed32, fixed64, varint };

/// Which typed field supplies a dtype's values when tensor_content is empty (TF's
/// tensor_util / tensor.cc convention), and how one wire value becomes element bytes.
struct typed_source {
  uint32_t field = 0;              ///< 0: the dtype has no typed field
  value_encoding encoding = value_encoding::varint;
  uint32_t out_width_bytes = 0;    ///< bytes written per wire value (complex: half an element)
  int64_t min_value = 0;           ///< accepted range for varint values (checked, not wrapped)
  uint64_t max_value = 0;
  bool as_bool = false;            ///< nonzero → 1
};

typed_source typed_source_for(dtype t) noexcept {
  using tf = std::numeric_limits<int32_t>;
  switch (t) {
    case dtype::float32: return {tensor_field::float_val, value_encoding::fixed32, 4, 0, 0, false};
    case dtype::complex64:
      return {tensor_field::scomplex_val, value_encoding::fixed32, 4, 0, 0, false};
    case dtype::float64: return {tensor_field::double_val, value_encoding::fixed64, 8, 0, 0, false};
    case dtype::complex128:
      return {tensor_field::dcomplex_val, value_encoding::fixed64, 8, 0, 0, false};
    case dtype::int32:
      return {tensor_field::int_val, value_encoding::varint, 4, tf::min(),
              static_cast<uint64_t>(tf::max()), false};
    case dtype::int16: return {tensor_field::int_val, value_encoding::varint, 2, -32768, 32767, false};
    case dtype::uint16: return {tensor_field::int_val, value_encoding::varint, 2, 0, 65535, false};
    case dtype::int8: return {tensor_field::int_val, value_encoding::varint, 1, -128, 127, false};
    case dtype::uint8: return {tensor_field::int_val, value_encoding::varint, 1, 0, 255, false};
    case dtype::int64:
      return {tensor_field::int64_val, value_encoding::varint, 8,
              std::numeric_limits<int64_t>::min(),
              static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), false};
    case dtype::boolean: return {tensor_field::bool_val, value_encoding::varint, 1, 0, 0, true};
    case dtype::float16:
    case dtype::bfloat16:
      return {tensor_field::half_val, value_encoding::varint, 2, 0, 65535, false};
    case dtype::uint32:
      return {tensor_field::uint32_val, value_encoding::varint, 4, 0, 0xFFFFFFFFull, false};
    case dtype::uint64:
      return {tensor_field::uint64_val, value_encoding::varint, 8, 0, UINT64_MAX, false};
    case dtype::invalid:
    case dtype::string: break;
  }
  return {};
}

/// Bit in `typed_fields_mask` for a typed value field number (all are < 32).
constexpr uint32_t field_bit(uint32_t field) noexcept { return 1u << field; }

bool is_typed_value_field(uint32_t field, value_encoding& encoding) noexcept {
  switch (field) {
    case tensor_field::float_val:
    case tensor_field::scomplex_val: encoding = value_encoding::fixed32; return true;
    case tensor_field::double_val:
    case tensor_field::dcomplex_val: encoding = value_encoding::fixed64; return true;
    case tensor_field::int_val:
    case tensor_field::int64_val:
    case tensor_field::bool_val:
    case tensor_field::half_val:
    case tensor_field::uint32_val:
    case tensor_field::uint64_val: encoding = value_encoding::varint; return true;
    default: return false;
  }
}

uint32_t scalar_wire_type(value_encoding e) noexcept {
  switch (e) {
    case value_encoding::fixed32: return wire_fixed32;
    case value_encoding::fixed64: return wire_fixed64;
    case value_encoding::varint: return wire_varint;
  }
  return wire_varint;
}

/// Text for messages: printable ASCII kept, the rest escaped, long strings shortened.
std::string printable(std::string_view text) {
  std::string out;
  const std::size_t limit = 80;
  for (std::size_t i = 0; i < text.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (text.size() > limit) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

struct byte_range {
  std::size_t begin = 0;
  std::size_t end = 0;
  [[nodiscard]] std::size_t size() const noexcept { return end - begin; }
};

struct field_header {
  uint32_t number = 0;
  uint32_t wire = 0;
  std::size_t offset = 0;  ///< payload offset of the tag
};

/// One decode call: walks the payload, fills `out`, keeps the first failure in `failure_`.
/// Every read is bounds-checked against the enclosing message, so no padding is assumed.
class decode_pass {
 public:
  decode_pass(std::span<const std::byte> payload, event_record& out,
              std::vector<std::byte>& scratch)
      : p_(reinterpret_cast<const uint8_t*>(payload.data())),
        size_(payload.size()),
        out_(out),
        scratch_(scratch) {}

  status run() {
    reset_event();
    if (!walk_event()) return failure_;
    if (!chosen_value_ && have_first_value_) {
      // No Value carries a tensor (TensorBoard scalars, histograms): report the first one.
      reset_value();
      if (!parse_value(first_value_)) return failure_;
    }
    if (!out_.has_mode) {
      out_.mode = trialstat::mode::global;
      out_.mode_step = out_.step;
    } else if (!has_mode_step_) {
      out_.mode_step = out_.step;
    }
    if (out_.has_tensor && !finish_tensor()) return failure_;
    return status::success();
  }

 private:
  // ---- failures ---------------------------------------------------------------------------
  bool fail(std::size_t offset, std::string what) {
    failure_ = status(error_code::data_loss,
                      fmt::format("malformed event at payload byte {}: {}", offset, what));
    return false;
  }

  bool fail_tensor(error_code code, std::string what) {
    failure_ = status(code, fmt::format("tensor '{}' (TensorProto at payload byte {}): {}",
                                        printable(out_.tag), tensor_offset_, what));
    return false;
  }

  // ---- wire primitives --------------------------------------------------------------------
  bool read_varint(std::size_t& pos, std::size_t end, uint64_t& value, const char* message,
                   uint32_t field) {
    uint64_t result = 0;
    for (unsigned i = 0; i < 10; ++i) {
      if (pos + i >= end) {
        return fail(pos, fmt::format("truncated varint in field {} of {} ({} bytes left)", field,
                                     message, end - pos));
      }
      const uint8_t b = p_[pos + i];
      result |= static_cast<uint64_t>(b & 0x7fu) << (7 * i);
      if ((b & 0x80u) == 0) {
        pos += i + 1;
        value = result;
        return true;
      }
    }
    return fail(pos, fmt::format("varint longer than 10 bytes in field {} of {}", field, message));
  }

  bool read_tag(std::size_t& pos, std::size_t end, field_header& f, const char* message) {
    f.offset = pos;
    uint64_t tag = 0;
    // Fast path: one-byte tags (every field number below 16).
    if (pos < end && p_[pos] < 0x80u) {
      tag = p_[pos];
      ++pos;
    } else if (!read_varint(pos, end, tag, message, 0)) {
      return false;
    }
    if (tag > 0xFFFFFFFFull || (tag >> 3) == 0) {
      return fail(f.offset, fmt::format("invalid field tag 0x{:x} in {}", tag, message));
    }
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<uint32_t>(tag & 7u);
    if (f.wire == wire_start_group || f.wire == wire_end_group) {
      return fail(f.offset, fmt::format("group wire type {} (field {} of {}) is not supported",
                                        f.wire, f.number, message));
    }
    if (f.wire > wire_fixed32) {
      return fail(f.offset, fmt::format("invalid wire type {} (field {} of {})", f.wire, f.number,
                                        message));
    }
    return true;
  }

  bool read_fixed(std::size_t& pos, std::size_t end, unsigned width, uint64_t& value,
                  const char* message, uint32_t field) {
    if (end - pos < width) {
      return fail(pos, fmt::format("truncated {}-byte value in field {} of {} ({} bytes left)",
                                   width, field, message, end - pos));
    }
    uint64_t v = 0;
    for (unsigned i = width; i-- > 0;) v = (v << 8) | p_[pos + i];
    pos += width;
    value = v;
    return true;
  }

  bool read_length_delimited(std::size_t& pos, std::size_t end, byte_range& range,
                             const char* message, uint32_t field) {
    uint64_t length = 0;
    if (!read_varint(pos, end, length, message, field)) return false;
    if (length > end - pos) {
      return fail(pos, fmt::format("field {} of {} declares {} bytes but only {} remain in its "
                                   "message",
                                   field, message, length, end - pos));
    }
    range.begin = pos;
    range.end = pos + static_cast<std::size_t>(length);
    pos = range.end;
    return true;
  }

  bool skip_field(std::size_t& pos, std::size_t end, const field_header& f, const char* message) {
    uint64_t ignored = 0;
    byte_range range;
    switch (f.wire) {
      case wire_varint: return read_varint(pos, end, ignored, message, f.number);
      case wire_fixed64: return read_fixed(pos, end, 8, ignored, message, f.number);
      case wire_fixed32: return read_fixed(pos, end, 4, ignored, message, f.number);
      case wire_length: return read_length_delimited(pos, end, range, message, f.number);
      default: break;
    }
    return fail(f.offset, fmt::format("invalid wire type {} (field {} of {})", f.wire, f.number,
                                      message));
  }

  bool expect_wire(const field_header& f, uint32_t wire, const char* message, const char* name) {
    if (f.wire == wire) return true;
    return fail(f.offset, fmt::format("field {} ({}.{}) has wire type {}, expected {}", f.number,
                                      message, name, f.wire, wire));
  }

  std::string_view view(const byte_range& r) const noexcept {
    return {reinterpret_cast<const char*>(p_) + r.begin, r.size()};
  }

  // ---- state ------------------------------------------------------------------------------
  void reset_event() {
    out_.wall_time = 0.0;
    out_.step = 0;
    reset_value();
  }

  void reset_value() {
    out_.tag = {};
    out_.has_mode = false;
    out_.mode = trialstat::mode::global;
    out_.mode_step = 0;
    out_.has_tensor = false;
    out_.proto_dtype = 0;
    out_.type = dtype::invalid;
    out_.shape.clear();
    out_.num_elements = 0;
    out_.content = {};
    out_.strings.clear();
    has_mode_step_ = false;
    content_ = {};
    typed_fields_mask_ = 0;
    tensor_offset_ = 0;
  }

  // ---- messages ---------------------------------------------------------------------------
  bool walk_event() {
    std::size_t pos = 0;
    const std::size_t end = size_;
    field_header f;
    while (pos < end) {
      if (!read_tag(pos, end, f, "Event")) return false;
      switch (f.number) {
        case event_field::wall_time: {
          if (!expect_wire(f, wire_fixed64, "Event", "wall_time")) return false;
          uint64_t bits = 0;
          if (!read_fixed(pos, end, 8, bits, "Event", f.number)) return false;
          std::memcpy(&out_.wall_time, &bits, sizeof bits);
          break;
        }
        case event_field::step: {
          if (!expect_wire(f, wire_varint, "Event", "step")) return false;
          uint64_t v = 0;
          if (!read_varint(pos, end, v, "Event", f.number)) return false;
          out_.step = static_cast<int64_t>(v);
          break;
        }
        case event_field::summary: {
          if (!expect_wire(f, wire_length, "Event", "summary")) return false;
          byte_range summary;
          if (!read_length_delimited(pos, end, summary, "Event", f.number)) return false;
          if (!walk_summary(summary)) return false;
          break;
        }
        default:
          if (!skip_field(pos, end, f, "Event")) return false;
      }
    }
    return true;
  }

  // Several `summary` fields merge (their values concatenate), so walking each in turn and
  // taking the first Value with a tensor matches protobuf's merged view.
  bool walk_summary(byte_range summary) {
    std::size_t pos = summary.begin;
    field_header f;
    while (pos < summary.end) {
      if (!read_tag(pos, summary.end, f, "Summary")) return false;
      if (f.number != summary_field::value) {
        if (!skip_field(pos, summary.end, f, "Summary")) return false;
        continue;
      }
      if (!expect_wire(f, wire_length, "Summary", "value")) return false;
      byte_range value;
      if (!read_length_delimited(pos, summary.end, value, "Summary", f.number)) return false;
      if (chosen_value_) continue;
      reset_value();
      if (!parse_value(value)) return false;
      if (out_.has_tensor) {
        chosen_value_ = true;
        chosen_range_ = value;
      } else if (!have_first_value_) {
        have_first_value_ = true;
        first_value_ = value;
      }
    }
    return true;
  }

  bool parse_value(byte_range value) {
    std::size_t pos = value.begin;
    field_header f;
    while (pos < value.end) {
      if (!read_tag(pos, value.end, f, "Summary.Value")) return false;
      switch (f.number) {
        case value_field::tag: {
          if (!expect_wire(f, wire_length, "Summary.Value", "tag")) return false;
          byte_range tag;
          if (!read_length_delimited(pos, value.end, tag, "Summary.Value", f.number)) return false;
          out_.tag = view(tag);
          break;
        }
        case value_field::simple_value:
          if (!expect_wire(f, wire_fixed32, "Summary.Value", "simple_value")) return false;
          if (!skip_field(pos, value.end, f, "Summary.Value")) return false;
          break;
        case value_field::histo:
          if (!expect_wire(f, wire_length, "Summary.Value", "histo")) return false;
          if (!skip_field(pos, value.end, f, "Summary.Value")) return false;
          break;
        case value_field::tensor: {
          if (!expect_wire(f, wire_length, "Summary.Value", "tensor")) return false;
          byte_range tensor;
          if (!read_length_delimited(pos, value.end, tensor, "Summary.Value", f.number)) {
            return false;
          }
          if (!out_.has_tensor) tensor_offset_ = f.offset;
          out_.has_tensor = true;
          if (!parse_tensor(tensor)) return false;
          break;
        }
        case value_field::metadata: {
          if (!expect_wire(f, wire_length, "Summary.Value", "metadata")) return false;
          byte_range metadata;
          if (!read_length_delimited(pos, value.end, metadata, "Summary.Value", f.number)) {
            return false;
          }
          if (!parse_metadata(metadata)) return false;
          break;
        }
        default:
          if (!skip_field(pos, value.end, f, "Summary.Value")) return false;
      }
    }
    return true;
  }

  bool parse_metadata(byte_range metadata) {
    std::size_t pos = metadata.begin;
    field_header f;
    while (pos < metadata.end) {
      if (!read_tag(pos, metadata.end, f, "SummaryMetadata")) return false;
      if (f.number != metadata_field::plugin_data) {
        if (!skip_field(pos, metadata.end, f, "SummaryMetadata")) return false;
        continue;
      }
      if (!expect_wire(f, wire_length, "SummaryMetadata", "plugin_data")) return false;
      byte_range plugin;
      if (!read_length_delimited(pos, metadata.end, plugin, "SummaryMetadata", f.number)) {
        return false;
      }
      if (!parse_plugin_data(plugin, f.offset)) return false;
    }
    return true;
  }

  bool parse_plugin_data(byte_range plugin, std::size_t plugin_offset) {
    std::size_t pos = plugin.begin;
    field_header f;
    std::string_view name;
    std::string_view content;
    while (pos < plugin.end) {
      if (!read_tag(pos, plugin.end, f, "PluginData")) return false;
      if (f.number == plugin_field::name || f.number == plugin_field::content) {
        const bool is_name = f.number == plugin_field::name;
        if (!expect_wire(f, wire_length, "PluginData", is_name ? "plugin_name" : "content")) {
          return false;
        }
        byte_range r;
        if (!read_length_delimited(pos, plugin.end, r, "PluginData", f.number)) return false;
        (is_name ? name : content) = view(r);
      } else if (!skip_field(pos, plugin.end, f, "PluginData")) {
        return false;
      }
    }
    if (name == "mode") {
      const auto m = parse_mode_number(content);
      if (!m) {
        return fail(plugin_offset, fmt::format("plugin data 'mode' has content '{}', expected "
                                               "1 (TRAIN), 2 (EVAL), 3 (PREDICT) or 4 (GLOBAL)",
                                               printable(content)));
      }
      out_.has_mode = true;
      out_.mode = *m;
    } else if (name == "mode_step") {
      int64_t v = 0;
      const char* first = content.data();
      const char* last = first + content.size();
      const auto [ptr, ec] = std::from_chars(first, last, v);
      if (content.empty() || ec != std::errc() || ptr != last) {
        return fail(plugin_offset, fmt::format("plugin data 'mode_step' has content '{}', "
                                               "expected a decimal integer",
                                               printable(content)));
      }
      out_.mode_step = v;
      has_mode_step_ = true;
    }
    return true;
  }

  bool parse_tensor(byte_range tensor) {
    std::size_t pos = tensor.begin;
    field_header f;
    while (pos < tensor.end) {
      if (!read_tag(pos, tensor.end, f, "TensorProto")) return false;
      value_encoding encoding{};
      switch (f.number) {
        case tensor_field::dtype: {
          if (!expect_wire(f, wire_varint, "TensorProto", "dtype")) return false;
          uint64_t v = 0;
          if (!read_varint(pos, tensor.end, v, "TensorProto", f.number)) return false;
          out_.proto_dtype = static_cast<int64_t>(v);
          break;
        }
        case tensor_field::shape: {
          if (!expect_wire(f, wire_length, "TensorProto", "tensor_shape")) return false;
          byte_range shape;
          if (!read_length_delimited(pos, tensor.end, shape, "TensorProto", f.number)) {
            return false;
          }
          if (!parse_shape(shape)) return false;
          break;
        }
        case tensor_field::content:
          if (!expect_wire(f, wire_length, "TensorProto", "tensor_content")) return false;
          if (!read_length_delimited(pos, tensor.end, content_, "TensorProto", f.number)) {
            return false;
          }
          break;
        case tensor_field::string_val: {
          if (!expect_wire(f, wire_length, "TensorProto", "string_val")) return false;
          byte_range s;
          if (!read_length_delimited(pos, tensor.end, s, "TensorProto", f.number)) return false;
          out_.strings.push_back(view(s));
          break;
        }
        default:
          if (is_typed_value_field(f.number, encoding)) {
            if (!check_typed_field(pos, tensor.end, f, encoding)) return false;
            typed_fields_mask_ |= field_bit(f.number);
          } else if (!skip_field(pos, tensor.end, f, "TensorProto")) {
            return false;
          }
      }
    }
    return true;
  }

  /// First pass over a typed value field: structure only (packed runs must hold whole values).
  bool check_typed_field(std::size_t& pos, std::size_t end, const field_header& f,
                         value_encoding encoding) {
    if (f.wire == wire_length) {
      byte_range run;
      if (!read_length_delimited(pos, end, run, "TensorProto", f.number)) return false;
      const std::size_t width = encoding == value_encoding::fixed32   ? 4
                                : encoding == value_encoding::fixed64 ? 8
                                                                      : 0;
      if (width != 0 && run.size() % width != 0) {
        return fail(run.begin, fmt::format("packed field {} of TensorProto holds {} bytes, not a "
                                           "multiple of {}",
                                           f.number, run.size(), width));
      }
      if (width == 0 && run.size() != 0 && (p_[run.end - 1] & 0x80u) != 0) {
        return fail(run.end - 1, fmt::format("packed field {} of TensorProto ends inside a "
                                             "varint",
                                             f.number));
      }
      return true;
    }
    if (f.wire != scalar_wire_type(encoding)) {
      return fail(f.offset, fmt::format("field {} of TensorProto has wire type {}, expected {} "
                                        "or 2 (packed)",
                                        f.number, f.wire, scalar_wire_type(encoding)));
    }
    return skip_field(pos, end, f, "TensorProto");
  }

  bool parse_shape(byte_range shape) {
    std::size_t pos = shape.begin;
    field_header f;
    while (pos < shape.end) {
      if (!read_tag(pos, shape.end, f, "TensorShapeProto")) return false;
      if (f.number == shape_field::dim) {
        if (!expect_wire(f, wire_length, "TensorShapeProto", "dim")) return false;
        byte_range dim;
        if (!read_length_delimited(pos, shape.end, dim, "TensorShapeProto", f.number)) {
          return false;
        }
        int64_t size = 0;
        if (!parse_dim(dim, size)) return false;
        out_.shape.push_back(size);
      } else if (f.number == shape_field::unknown_rank) {
        if (!expect_wire(f, wire_varint, "TensorShapeProto", "unknown_rank")) return false;
        if (!skip_field(pos, shape.end, f, "TensorShapeProto")) return false;
      } else if (!skip_field(pos, shape.end, f, "TensorShapeProto")) {
        return false;
      }
    }
    return true;
  }

  bool parse_dim(byte_range dim, int64_t& size) {
    std::size_t pos = dim.begin;
    field_header f;
    while (pos < dim.end) {
      if (!read_tag(pos, dim.end, f, "TensorShapeProto.Dim")) return false;
      if (f.number == dim_field::size) {
        if (!expect_wire(f, wire_varint, "TensorShapeProto.Dim", "size")) return false;
        uint64_t v = 0;
        if (!read_varint(pos, dim.end, v, "TensorShapeProto.Dim", f.number)) return false;
        size = static_cast<int64_t>(v);
      } else if (!skip_field(pos, dim.end, f, "TensorShapeProto.Dim")) {
        return false;
      }
    }
    return true;
  }

  // ---- tensor completion ------------------------------------------------------------------
  bool finish_tensor() {
    int64_t count = 1;
    for (std::size_t i = 0; i < out_.shape.size(); ++i) {
      const int64_t d = out_.shape[i];
      if (d < 0) {
        return fail_tensor(error_code::data_loss,
                           fmt::format("dim {} has negative size {}", i, d));
      }
      if (__builtin_mul_overflow(count, d, &count)) {
        return fail_tensor(error_code::data_loss,
                           fmt::format("element count overflows int64 at dim {}", i));
      }
    }
    out_.num_elements = count;

    const bool string_tensor =
        out_.proto_dtype == static_cast<int64_t>(dtype::string) ||
        (out_.proto_dtype == static_cast<int64_t>(dtype::invalid) && !out_.strings.empty());
    if (string_tensor) {
      out_.type = dtype::string;
      out_.content = {};
      return true;
    }
    if (out_.proto_dtype == static_cast<int64_t>(dtype::invalid)) {
      // smdebug leaves dtype 0 for string tensors; numeric bytes with it have no meaning.
      if (content_.size() != 0 || typed_fields_mask_ != 0) {
        return fail_tensor(error_code::data_loss,
                           "DT_INVALID (0) tensor carries numeric data but no string_val");
      }
      out_.type = dtype::string;  // an empty string tensor
      out_.content = {};
      return true;
    }
    const auto type = dtype_from_proto(out_.proto_dtype);
    if (!type) {
      return fail_tensor(error_code::unsupported_dtype,
                         fmt::format("unknown DataType {} (trialstat reads 1-10, 14, 17-19, 22, "
                                     "23)",
                                     out_.proto_dtype));
    }
    out_.type = *type;
    out_.strings.clear();
    const std::size_t element_bytes = dtype_size_bytes(*type);

    if (content_.size() != 0) {
      out_.content = std::span<const std::byte>(
          reinterpret_cast<const std::byte*>(p_) + content_.begin, content_.size());
    } else {
      const typed_source source = typed_source_for(*type);
      if (source.field != 0 && (typed_fields_mask_ & field_bit(source.field)) != 0) {
        std::size_t written = 0;
        if (!repack_typed_values(source, written)) return false;
        out_.content = std::span<const std::byte>(scratch_.data(), written);
      } else {
        out_.content = {};
      }
    }

    uint64_t expected_bytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(count), static_cast<uint64_t>(element_bytes),
                               &expected_bytes) ||
        expected_bytes != out_.content.size()) {
      return fail_tensor(
          error_code::data_loss,
          fmt::format("content holds {} bytes, expected {} elements x {} bytes ({}{})",
                      out_.content.size(), count, element_bytes, dtype_proto_name(*type),
                      content_.size() != 0 ? ", tensor_content" : ", typed value fields"));
    }
    return true;
  }

  // Second pass, over the chosen Value only: every occurrence of the dtype's typed field, in
  // wire order, packed or not, converted to little-endian element bytes in scratch.
  bool repack_typed_values(const typed_source& source, std::size_t& written) {
    written = 0;
    std::size_t pos = chosen_range_.begin;
    field_header f;
    while (pos < chosen_range_.end) {
      if (!read_tag(pos, chosen_range_.end, f, "Summary.Value")) return false;
      if (f.number != value_field::tensor) {
        if (!skip_field(pos, chosen_range_.end, f, "Summary.Value")) return false;
        continue;
      }
      byte_range tensor;
      if (!read_length_delimited(pos, chosen_range_.end, tensor, "Summary.Value", f.number)) {
        return false;
      }
      std::size_t tpos = tensor.begin;
      field_header t;
      while (tpos < tensor.end) {
        if (!read_tag(tpos, tensor.end, t, "TensorProto")) return false;
        if (t.number != source.field) {
          if (!skip_field(tpos, tensor.end, t, "TensorProto")) return false;
          continue;
        }
        if (t.wire == wire_length) {
          byte_range run;
          if (!read_length_delimited(tpos, tensor.end, run, "TensorProto", t.number)) return false;
          std::size_t vpos = run.begin;
          while (vpos < run.end) {
            if (!append_value(vpos, run.end, t, source, written)) return false;
          }
        } else if (!append_value(tpos, tensor.end, t, source, written)) {
          return false;
        }
      }
    }
    return true;
  }

  bool out_of_range(std::size_t value_offset, const std::string& value, uint32_t field) {
    return fail_tensor(error_code::data_loss,
                       fmt::format("value {} in field {} of TensorProto (payload byte {}) is out "
                                   "of range for {}",
                                   value, field, value_offset, dtype_proto_name(out_.type)));
  }

  bool append_value(std::size_t& pos, std::size_t end, const field_header& f,
                    const typed_source& source, std::size_t& written) {
    uint64_t v = 0;
    const std::size_t value_offset = pos;
    switch (source.encoding) {
      case value_encoding::fixed32:
        if (!read_fixed(pos, end, 4, v, "TensorProto", f.number)) return false;
        break;
      case value_encoding::fixed64:
        if (!read_fixed(pos, end, 8, v, "TensorProto", f.number)) return false;
        break;
      case value_encoding::varint: {
        if (!read_varint(pos, end, v, "TensorProto", f.number)) return false;
        if (source.as_bool) {
          v = v != 0 ? 1 : 0;
        } else if (source.min_value < 0) {
          const auto s = static_cast<int64_t>(v);
          if (s < source.min_value || (s > 0 && static_cast<uint64_t>(s) > source.max_value)) {
            return out_of_range(value_offset, std::to_string(s), f.number);
          }
        } else if (v > source.max_value) {
          return out_of_range(value_offset, std::to_string(v), f.number);
        }
        break;
      }
    }
    const std::size_t width = source.out_width_bytes;
    if (written + width > scratch_.size()) {
      try {
        scratch_.resize(std::max<std::size_t>(scratch_.size() * 2, written + width + 256));
      } catch (const std::bad_alloc&) {
        failure_ = status(error_code::out_of_memory,
                          fmt::format("cannot grow the decoder scratch to {} bytes",
                                      written + width));
        return false;
      }
    }
    for (std::size_t i = 0; i < width; ++i) {
      scratch_[written + i] = static_cast<std::byte>((v >> (8 * i)) & 0xffu);
    }
    written += width;
    return true;
  }

  const uint8_t* p_;
  std::size_t size_;
  event_record& out_;
  std::vector<std::byte>& scratch_;
  status failure_;

  bool chosen_value_ = false;
  byte_range chosen_range_;
  bool have_first_value_ = false;
  byte_range first_value_;
  bool has_mode_step_ = false;
  byte_range content_;
  uint32_t typed_fields_mask_ = 0;
  std::size_t tensor_offset_ = 0;
};

}  // namespace

status event_decoder::decode(std::span<const std::byte> payload, event_record& out) {
  decode_pass pass(payload, out, scratch_);
  return pass.run();
}

}  // namespace trialstat::decode

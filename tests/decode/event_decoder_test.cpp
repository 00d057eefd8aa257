// SPDX-License-Identifier: Apache-2.0
// event_decoder: every dtype through tensor_content and through each typed value field (packed,
// unpacked, split over several occurrences), shuffled field order, unknown fields of every wire
// type, strings, 0-d and empty tensors, mode plugin data, and malformed inputs.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "event.pb.h"
#include "tests/decode/wire_writer.hpp"
#include "trialstat/decode/event_decoder.hpp"

namespace trialstat::decode {
namespace {

using trialstat::testing::as_bytes;
using trialstat::testing::wire_writer;

// ---- expected element bytes ---------------------------------------------------------------

template <typename T>
void put(std::vector<std::byte>& out, T value) {
  std::byte raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));  // the test host is little-endian (static_assert below)
  out.insert(out.end(), raw, raw + sizeof(T));
}
static_assert(std::endian::native == std::endian::little);

enum class encoding { varint, fixed32, fixed64 };

/// One dtype case: the elements as LE bytes, and the same values as raw typed-field wire values.
struct dtype_case {
  std::string name;
  int proto_dtype = 0;
  dtype type = dtype::invalid;
  std::vector<int64_t> shape;
  std::vector<std::byte> content;
  uint32_t typed_field = 0;
  encoding enc = encoding::varint;
  std::vector<uint64_t> wire_values;
};

uint64_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
uint64_t bits_of(double d) { return std::bit_cast<uint64_t>(d); }
uint64_t sign_extend(int64_t v) { return static_cast<uint64_t>(v); }

std::vector<dtype_case> all_dtype_cases() {
  std::vector<dtype_case> cases;
  const float fnan = std::numeric_limits<float>::quiet_NaN();
  const float finf = std::numeric_limits<float>::infinity();
  {
    dtype_case c{"float32_2x3", 1, dtype::float32, {2, 3}, {}, 5, encoding::fixed32, {}};
    for (float f : {1.5f, -2.25f, 0.0f, -0.0f, finf, fnan}) {
      put(c.content, f);
      c.wire_values.push_back(bits_of(f));
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"float64_4", 2, dtype::float64, {4}, {}, 6, encoding::fixed64, {}};
    for (double d : {1e300, -1e-300, 3.25, std::numeric_limits<double>::quiet_NaN()}) {
      put(c.content, d);
      c.wire_values.push_back(bits_of(d));
    }
    cases.push_back(c);
  }
  {
    // 1.0, -2.5, 65504 (max), smallest subnormal.
    dtype_case c{"float16_2x2", 19, dtype::float16, {2, 2}, {}, 13, encoding::varint, {}};
    for (uint16_t h : {0x3C00, 0xC100, 0x7BFF, 0x0001}) {
      put(c.content, h);
      c.wire_values.push_back(h);
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"bfloat16_3", 14, dtype::bfloat16, {3}, {}, 13, encoding::varint, {}};
    for (uint16_t h : {0x3F80, 0xC040, 0x7F80}) {
      put(c.content, h);
      c.wire_values.push_back(h);
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"int8_signed", 6, dtype::int8, {4}, {}, 7, encoding::varint, {}};
    for (int8_t v : {int8_t{-1}, int8_t{127}, int8_t{-128}, int8_t{0}}) {
      put(c.content, v);
      c.wire_values.push_back(sign_extend(v));
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"uint8", 4, dtype::uint8, {3}, {}, 7, encoding::varint, {}};
    for (uint8_t v : {uint8_t{0}, uint8_t{200}, uint8_t{255}}) {
      put(c.content, v);
      c.wire_values.push_back(v);
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"int16", 5, dtype::int16, {3}, {}, 7, encoding::varint, {}};
    for (int16_t v : {int16_t{-32768}, int16_t{32767}, int16_t{-1}}) {
      put(c.content, v);
      c.wire_values.push_back(sign_extend(v));
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"uint16", 17, dtype::uint16, {2}, {}, 7, encoding::varint, {}};
    for (uint16_t v : {uint16_t{0}, uint16_t{65535}}) {
      put(c.content, v);
      c.wire_values.push_back(v);
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"int32", 3, dtype::int32, {3}, {}, 7, encoding::varint, {}};
    for (int32_t v : {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                      int32_t{-7}}) {
      put(c.content, v);
      c.wire_values.push_back(sign_extend(v));
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"int64", 9, dtype::int64, {3}, {}, 10, encoding::varint, {}};
    for (int64_t v : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                      int64_t{-1}}) {
      put(c.content, v);
      c.wire_values.push_back(sign_extend(v));
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"uint32", 22, dtype::uint32, {2}, {}, 16, encoding::varint, {}};
    for (uint32_t v : {uint32_t{0}, uint32_t{0xFFFFFFFFu}}) {
      put(c.content, v);
      c.wire_values.push_back(v);
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"uint64", 23, dtype::uint64, {2}, {}, 17, encoding::varint, {}};
    for (uint64_t v : {uint64_t{1} << 40, std::numeric_limits<uint64_t>::max()}) {
      put(c.content, v);
      c.wire_values.push_back(v);
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"bool_2x2", 10, dtype::boolean, {2, 2}, {}, 11, encoding::varint, {}};
    for (uint8_t v : {uint8_t{1}, uint8_t{0}, uint8_t{0}, uint8_t{1}}) {
      put(c.content, v);
      c.wire_values.push_back(v);
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"complex64_2", 8, dtype::complex64, {2}, {}, 9, encoding::fixed32, {}};
    for (float f : {1.0f, -2.0f, 3.5f, -4.0f}) {
      put(c.content, f);
      c.wire_values.push_back(bits_of(f));
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"complex128_1", 18, dtype::complex128, {1}, {}, 12, encoding::fixed64, {}};
    for (double d : {1e10, -0.5}) {
      put(c.content, d);
      c.wire_values.push_back(bits_of(d));
    }
    cases.push_back(c);
  }
  {
    dtype_case c{"float32_0d", 1, dtype::float32, {}, {}, 5, encoding::fixed32, {}};
    put(c.content, 2.5f);
    c.wire_values.push_back(bits_of(2.5f));
    cases.push_back(c);
  }
  {
    dtype_case c{"int64_0d", 9, dtype::int64, {}, {}, 10, encoding::varint, {}};
    put(c.content, int64_t{-42});
    c.wire_values.push_back(sign_extend(-42));
    cases.push_back(c);
  }
  return cases;
}

// ---- payload builders ---------------------------------------------------------------------

wire_writer shape_of(const std::vector<int64_t>& dims) {
  wire_writer shape;
  for (int64_t d : dims) {
    wire_writer dim;
    dim.varint(1, static_cast<uint64_t>(d)).bytes(2, "cosmetic_" + std::to_string(d));
    shape.message(2, dim);
  }
  return shape;
}

wire_writer plugin_metadata(int mode, int64_t mode_step) {
  wire_writer step_plugin, mode_plugin, metadata;
  step_plugin.bytes(1, "mode_step").bytes(2, std::to_string(mode_step));
  mode_plugin.bytes(1, "mode").bytes(2, std::to_string(mode));
  metadata.message(1, step_plugin).message(1, mode_plugin);
  return metadata;
}

/// Event{wall_time, step, summary{value{tag, tensor, metadata}}} in smdebug's field order.
std::string event_with_tensor(const wire_writer& tensor, std::string_view tag = "layer.weight",
                              int64_t step = 12, int mode = 2, int64_t mode_step = 3) {
  wire_writer value, summary, event;
  value.bytes(1, tag).message(8, tensor).message(9, plugin_metadata(mode, mode_step));
  summary.message(1, value);
  event.f64(1, 1.5e9).varint(2, static_cast<uint64_t>(step)).message(5, summary);
  return event.str();
}

std::string content_of(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

wire_writer tensor_with_content(const dtype_case& c) {
  wire_writer t;
  t.varint(1, static_cast<uint64_t>(c.proto_dtype))
      .message(2, shape_of(c.shape))
      .bytes(4, content_of(c.content));
  return t;
}

int width_of(encoding e) { return e == encoding::fixed32 ? 4 : 8; }

void put_unpacked(wire_writer& t, const dtype_case& c, uint64_t v) {
  switch (c.enc) {
    case encoding::varint: t.varint(c.typed_field, v); break;
    case encoding::fixed32: t.fixed32(c.typed_field, static_cast<uint32_t>(v)); break;
    case encoding::fixed64: t.fixed64(c.typed_field, v); break;
  }
}

void put_packed(wire_writer& t, const dtype_case& c, const std::vector<uint64_t>& values) {
  if (c.enc == encoding::varint) {
    t.packed_varints(c.typed_field, values);
  } else {
    t.packed_fixed(c.typed_field, values, width_of(c.enc));
  }
}

enum class typed_layout { packed, unpacked, split };

wire_writer tensor_with_typed(const dtype_case& c, typed_layout layout) {
  wire_writer t;
  t.varint(1, static_cast<uint64_t>(c.proto_dtype)).message(2, shape_of(c.shape));
  switch (layout) {
    case typed_layout::packed: put_packed(t, c, c.wire_values); break;
    case typed_layout::unpacked:
      for (uint64_t v : c.wire_values) put_unpacked(t, c, v);
      break;
    case typed_layout::split: {
      // First value unpacked, the rest packed, then an unrelated field in between: occurrences
      // of a repeated field concatenate in wire order.
      put_unpacked(t, c, c.wire_values.front());
      t.varint(3, 0);  // version_number
      put_packed(t, c, std::vector<uint64_t>(c.wire_values.begin() + 1, c.wire_values.end()));
      break;
    }
  }
  return t;
}

/// The same Event built by the protobuf library (packed typed fields, proto3 defaults omitted).
std::string generated_event(const dtype_case& c, bool typed) {
  smdebug::Event event;
  event.set_wall_time(1.5e9);
  event.set_step(12);
  auto* value = event.mutable_summary()->add_value();
  value->set_tag("layer.weight");
  auto* tensor = value->mutable_tensor();
  tensor->set_dtype(static_cast<smdebug::DataType>(c.proto_dtype));
  auto* shape = tensor->mutable_tensor_shape();
  for (int64_t d : c.shape) shape->add_dim()->set_size(d);
  if (!typed) {
    tensor->set_tensor_content(content_of(c.content));
  } else {
    for (uint64_t v : c.wire_values) {
      switch (c.typed_field) {
        case 5: tensor->add_float_val(std::bit_cast<float>(static_cast<uint32_t>(v))); break;
        case 6: tensor->add_double_val(std::bit_cast<double>(v)); break;
        case 7: tensor->add_int_val(static_cast<int32_t>(v)); break;
        case 9: tensor->add_scomplex_val(std::bit_cast<float>(static_cast<uint32_t>(v))); break;
        case 10: tensor->add_int64_val(static_cast<int64_t>(v)); break;
        case 11: tensor->add_bool_val(v != 0); break;
        case 12: tensor->add_dcomplex_val(std::bit_cast<double>(v)); break;
        case 13: tensor->add_half_val(static_cast<int32_t>(v)); break;
        default: ADD_FAILURE() << "field " << c.typed_field << " not in the generated class";
      }
    }
  }
  auto* metadata = value->mutable_metadata();
  auto* p1 = metadata->add_plugin_data();
  p1->set_plugin_name("mode_step");
  p1->set_content("3");
  auto* p2 = metadata->add_plugin_data();
  p2->set_plugin_name("mode");
  p2->set_content("2");
  return event.SerializeAsString();
}

void expect_decoded(const event_record& r, const dtype_case& c) {
  EXPECT_EQ(r.tag, "layer.weight");
  EXPECT_EQ(r.step, 12);
  EXPECT_EQ(r.wall_time, 1.5e9);
  EXPECT_TRUE(r.has_mode);
  EXPECT_EQ(r.mode, mode::eval);
  EXPECT_EQ(r.mode_step, 3);
  EXPECT_TRUE(r.has_tensor);
  EXPECT_EQ(r.proto_dtype, c.proto_dtype);
  EXPECT_EQ(r.type, c.type);
  EXPECT_EQ(r.shape, c.shape);
  int64_t n = 1;
  for (int64_t d : c.shape) n *= d;
  EXPECT_EQ(r.num_elements, n);
  ASSERT_EQ(r.content.size(), c.content.size());
  EXPECT_TRUE(std::equal(c.content.begin(), c.content.end(), r.content.begin()))
      << "content bytes differ";
  const tensor_view v = r.view();
  EXPECT_EQ(v.size_bytes(), c.content.size());
  EXPECT_EQ(v.data, r.content.data());
  EXPECT_EQ(v.memory, memory_kind::host);
}

status decode_string(event_decoder& decoder, const std::string& payload, event_record& out) {
  return decoder.decode(as_bytes(payload), out);
}
// `out` views the payload, so a temporary payload is kept alive until the test program ends.
status decode_string(event_decoder& decoder, std::string&& payload, event_record& out) {
  static std::deque<std::string> kept;
  kept.push_back(std::move(payload));
  return decoder.decode(as_bytes(kept.back()), out);
}

// ---- tests --------------------------------------------------------------------------------

TEST(event_decoder, every_dtype_via_tensor_content_and_typed_fields) {
  event_decoder decoder;
  event_record r;
  for (const auto& c : all_dtype_cases()) {
    SCOPED_TRACE(c.name);
    struct variant {
      const char* what;
      std::string payload;
    };
    std::vector<variant> variants = {
        {"tensor_content (wire writer)", event_with_tensor(tensor_with_content(c))},
        {"tensor_content (protobuf library)", generated_event(c, false)},
        {"typed field, packed", event_with_tensor(tensor_with_typed(c, typed_layout::packed))},
        {"typed field, unpacked",
         event_with_tensor(tensor_with_typed(c, typed_layout::unpacked))},
        {"typed field, split", event_with_tensor(tensor_with_typed(c, typed_layout::split))},
    };
    if (c.typed_field < 16) {
      variants.push_back({"typed field (protobuf library)", generated_event(c, true)});
    }
    for (const auto& v : variants) {
      SCOPED_TRACE(v.what);
      const status s = decode_string(decoder, v.payload, r);
      ASSERT_TRUE(s.ok()) << s.to_string();
      expect_decoded(r, c);
    }
  }
}

TEST(event_decoder, int8_stays_signed_unlike_smdebug) {
  // smdebug reads DT_INT8 as uint8 (-1 → 255); trialstat keeps it signed.
  const auto cases = all_dtype_cases();
  const auto& c = *std::find_if(cases.begin(), cases.end(),
                                [](const dtype_case& x) { return x.name == "int8_signed"; });
  event_decoder decoder;
  event_record r;
  for (const auto layout : {typed_layout::packed, typed_layout::unpacked}) {
    ASSERT_TRUE(decode_string(decoder, event_with_tensor(tensor_with_typed(c, layout)), r).ok());
    ASSERT_EQ(r.type, dtype::int8);
    EXPECT_EQ(static_cast<int8_t>(r.content[0]), -1);
    EXPECT_EQ(static_cast<int8_t>(r.content[2]), -128);
  }
}

TEST(event_decoder, typed_fields_of_other_kinds_are_ignored_and_content_wins) {
  const auto cases = all_dtype_cases();
  const auto& c = cases.front();  // float32 [2,3]
  // tensor_content present: typed fields (even of the matching kind) are not used.
  wire_writer t = tensor_with_content(c);
  t.packed_fixed(5, {bits_of(9.0f)}, 4).packed_varints(7, {1, 2, 3});
  event_decoder decoder;
  event_record r;
  ASSERT_TRUE(decode_string(decoder, event_with_tensor(t), r).ok());
  expect_decoded(r, c);
  // Typed fields of a kind that does not match the dtype are not re-interpreted.
  wire_writer wrong;
  wrong.varint(1, 1).message(2, shape_of({2})).packed_varints(7, {1, 2});
  const status s = decode_string(decoder, event_with_tensor(wrong), r);
  EXPECT_EQ(s.code(), error_code::data_loss) << s.to_string();
  EXPECT_NE(s.message().find("content holds 0 bytes, expected 2 elements x 4 bytes"),
            std::string::npos)
      << s.message();
}

TEST(event_decoder, shuffled_field_order_and_unknown_fields) {
  const auto cases = all_dtype_cases();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    // Every message reversed from smdebug's order, with unknown fields of every wire type.
    wire_writer shape;
    for (int64_t d : c.shape) {
      wire_writer dim;
      dim.fixed32(9, 7).bytes(2, "name").varint(1, static_cast<uint64_t>(d)).fixed64(8, 1);
      shape.varint(7, 1).message(2, dim);
    }
    shape.varint(3, 0);  // unknown_rank = false
    wire_writer tensor;
    tensor.bytes(4, content_of(c.content))
        .fixed64(15, 123)
        .message(2, shape)
        .varint(3, 0)
        .bytes(14, "resource")
        .fixed32(20, 5)
        .varint(1, static_cast<uint64_t>(c.proto_dtype));
    wire_writer mode_plugin, step_plugin, metadata;
    mode_plugin.bytes(2, "2").varint(5, 1).bytes(1, "mode");
    step_plugin.bytes(2, "3").bytes(1, "mode_step");
    metadata.bytes(2, "display name").message(1, mode_plugin).fixed32(4, 0).message(1, step_plugin);
    wire_writer value;
    value.message(9, metadata).bytes(7, "node name").message(8, tensor).varint(30, 99)
        .bytes(1, "layer.weight");
    wire_writer summary;
    summary.fixed64(3, 0).message(1, value).varint(2, 5);
    wire_writer event;
    event.bytes(99, "unknown top-level").message(5, summary).varint(2, 12).fixed32(31, 0)
        .f64(1, 1.5e9);
    event_decoder decoder;
    event_record r;
    const status s = decoder.decode(event.span(), r);
    ASSERT_TRUE(s.ok()) << s.to_string();
    expect_decoded(r, c);
  }
}

TEST(event_decoder, multi_byte_field_tags_are_skipped) {
  // Field number 2^29-1 (the largest) with each wire type.
  const uint32_t big = (1u << 29) - 1;
  wire_writer tensor;
  tensor.varint(big, 1).fixed32(big, 2).fixed64(big, 3).bytes(big, "x").varint(1, 1)
      .message(2, shape_of({})).bytes(4, std::string("\x00\x00\x80\x3f", 4));
  event_decoder decoder;
  event_record r;
  const status s = decode_string(decoder, event_with_tensor(tensor), r);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(r.num_elements, 1);
  float f;
  std::memcpy(&f, r.content.data(), 4);
  EXPECT_EQ(f, 1.0f);
}

TEST(event_decoder, strings_with_dtype_0_and_7) {
  for (const int proto_dtype : {0, 7}) {
    SCOPED_TRACE(proto_dtype);
    smdebug::Event event;
    event.set_step(4);
    auto* value = event.mutable_summary()->add_value();
    value->set_tag("labels");
    auto* tensor = value->mutable_tensor();
    tensor->set_dtype(static_cast<smdebug::DataType>(proto_dtype));
    tensor->mutable_tensor_shape()->add_dim()->set_size(3);
    tensor->add_string_val("cat");
    tensor->add_string_val("");
    tensor->add_string_val(std::string("d\0g", 3));
    const std::string payload = event.SerializeAsString();
    event_decoder decoder;
    event_record r;
    const status s = decode_string(decoder, payload, r);
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(r.type, dtype::string);
    EXPECT_EQ(r.proto_dtype, proto_dtype);
    ASSERT_EQ(r.strings.size(), 3u);
    EXPECT_EQ(r.strings[0], "cat");
    EXPECT_EQ(r.strings[1], "");
    EXPECT_EQ(r.strings[2], std::string_view("d\0g", 3));
    EXPECT_EQ(r.shape, std::vector<int64_t>{3});
    EXPECT_EQ(r.num_elements, 3);
    EXPECT_TRUE(r.content.empty());
    // Views point into the payload.
    EXPECT_GE(r.strings[0].data(), payload.data());
    EXPECT_LT(r.strings[0].data(), payload.data() + payload.size());
  }
}

TEST(event_decoder, empty_tensors) {
  event_decoder decoder;
  event_record r;
  // [0] float32: no content field at all (proto3 omits empty bytes).
  wire_writer empty_f32;
  empty_f32.varint(1, 1).message(2, shape_of({0}));
  ASSERT_TRUE(decode_string(decoder, event_with_tensor(empty_f32), r).ok());
  EXPECT_EQ(r.type, dtype::float32);
  EXPECT_EQ(r.shape, std::vector<int64_t>{0});
  EXPECT_EQ(r.num_elements, 0);
  EXPECT_TRUE(r.content.empty());
  // [2,0,3] int64, with an explicitly empty tensor_content.
  wire_writer empty_i64;
  empty_i64.varint(1, 9).message(2, shape_of({2, 0, 3})).bytes(4, "");
  ASSERT_TRUE(decode_string(decoder, event_with_tensor(empty_i64), r).ok());
  EXPECT_EQ(r.type, dtype::int64);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 0, 3}));
  EXPECT_EQ(r.num_elements, 0);
  EXPECT_TRUE(r.content.empty());
  // A 0-d tensor without content is one element short.
  wire_writer scalar_missing;
  scalar_missing.varint(1, 1).message(2, shape_of({}));
  const status s = decode_string(decoder, event_with_tensor(scalar_missing), r);
  EXPECT_EQ(s.code(), error_code::data_loss);
}

TEST(event_decoder, mode_plugin_data) {
  event_decoder decoder;
  event_record r;
  wire_writer tensor;
  tensor.varint(1, 9).message(2, shape_of({})).bytes(4, std::string(8, '\x01'));
  // Absent: GLOBAL, mode_step = step.
  {
    wire_writer value, summary, event;
    value.bytes(1, "t").message(8, tensor);
    summary.message(1, value);
    event.varint(2, 77).message(5, summary);
    ASSERT_TRUE(decoder.decode(event.span(), r).ok());
    EXPECT_FALSE(r.has_mode);
    EXPECT_EQ(r.mode, mode::global);
    EXPECT_EQ(r.mode_step, 77);
    EXPECT_EQ(r.wall_time, 0.0);
  }
  // Every mode, large mode steps; step 0 absent on the wire.
  for (int m = 1; m <= 4; ++m) {
    ASSERT_TRUE(decode_string(decoder, event_with_tensor(tensor, "t", 0, m, 123456789012), r).ok());
    EXPECT_TRUE(r.has_mode);
    EXPECT_EQ(static_cast<int>(r.mode), m);
    EXPECT_EQ(r.mode_step, 123456789012);
    EXPECT_EQ(r.step, 0);
  }
  // Bad contents are data_loss naming the content.
  for (const auto& [name, content] : std::vector<std::pair<std::string, std::string>>{
           {"mode", "5"}, {"mode", "TRAIN"}, {"mode", ""}, {"mode_step", "x1"},
           {"mode_step", "1.5"}, {"mode_step", ""}, {"mode_step", "99999999999999999999"}}) {
    SCOPED_TRACE(name + "=" + content);
    wire_writer plugin, metadata, value, summary, event;
    plugin.bytes(1, name).bytes(2, content);
    metadata.message(1, plugin);
    value.bytes(1, "t").message(8, tensor).message(9, metadata);
    summary.message(1, value);
    event.message(5, summary);
    const status s = decoder.decode(event.span(), r);
    EXPECT_EQ(s.code(), error_code::data_loss) << s.to_string();
    EXPECT_NE(s.message().find("plugin data '" + name + "'"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("payload byte"), std::string::npos) << s.message();
  }
  // Other plugins are ignored.
  {
    wire_writer plugin, metadata, value, summary, event;
    plugin.bytes(1, "scalars").bytes(2, "\x01\x02");
    metadata.message(1, plugin);
    value.bytes(1, "t").message(8, tensor).message(9, metadata);
    summary.message(1, value);
    event.varint(2, 3).message(5, summary);
    ASSERT_TRUE(decoder.decode(event.span(), r).ok());
    EXPECT_FALSE(r.has_mode);
    EXPECT_EQ(r.mode_step, 3);
  }
}

TEST(event_decoder, first_value_with_a_tensor_is_used) {
  wire_writer tensor;
  tensor.varint(1, 3).message(2, shape_of({1})).bytes(4, std::string("\x07\x00\x00\x00", 4));
  wire_writer scalar_value, tensor_value, summary, event;
  scalar_value.bytes(1, "scalar").f32(2, 1.25f);
  tensor_value.bytes(1, "tensor").message(8, tensor);
  summary.message(1, scalar_value).message(1, tensor_value).message(1, scalar_value);
  event.varint(2, 1).message(5, summary);
  event_decoder decoder;
  event_record r;
  ASSERT_TRUE(decoder.decode(event.span(), r).ok());
  EXPECT_EQ(r.tag, "tensor");
  EXPECT_TRUE(r.has_tensor);
  EXPECT_EQ(r.type, dtype::int32);

  // Only scalars/histograms (TensorBoard): the first Value's tag, no tensor.
  wire_writer histo_value, summary2, event2;
  histo_value.bytes(1, "histo").message(5, wire_writer().f64(1, 0.0).f64(2, 1.0));
  summary2.message(1, scalar_value).message(1, histo_value);
  event2.varint(2, 1).message(5, summary2);
  ASSERT_TRUE(decoder.decode(event2.span(), r).ok());
  EXPECT_EQ(r.tag, "scalar");
  EXPECT_FALSE(r.has_tensor);
  EXPECT_TRUE(r.content.empty());
  EXPECT_TRUE(r.shape.empty());

  // No summary at all (a file_version record) and an empty payload decode to nothing.
  wire_writer version;
  version.f64(1, 1.0).bytes(3, "brain.Event:2");
  ASSERT_TRUE(decoder.decode(version.span(), r).ok());
  EXPECT_FALSE(r.has_tensor);
  EXPECT_TRUE(r.tag.empty());
  ASSERT_TRUE(decoder.decode({}, r).ok());
  EXPECT_FALSE(r.has_tensor);
  EXPECT_EQ(r.step, 0);
}

// ---- malformed input ----------------------------------------------------------------------

void expect_data_loss_at(const std::string& payload, std::size_t offset, const char* fragment) {
  event_decoder decoder;
  event_record r;
  const status s = decode_string(decoder, payload, r);
  EXPECT_EQ(s.code(), error_code::data_loss) << s.to_string();
  EXPECT_NE(s.message().find("payload byte " + std::to_string(offset)), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

TEST(event_decoder, malformed_wire_format_is_data_loss_with_offset) {
  expect_data_loss_at(std::string("\x10\x80", 2), 1, "truncated varint");
  expect_data_loss_at(std::string("\x10", 1), 1, "truncated varint");
  expect_data_loss_at(std::string("\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12), 1,
                      "longer than 10 bytes");
  expect_data_loss_at(std::string("\x09\x01\x02\x03", 4), 1, "truncated 8-byte value");
  expect_data_loss_at(std::string("\x2a\x10" "abc", 5), 2, "declares 16 bytes but only 3 remain");
  expect_data_loss_at(std::string("\x12\x01" "x", 3), 0, "Event.step) has wire type 2");
  expect_data_loss_at(std::string("\x0b", 1), 0, "group wire type 3");
  expect_data_loss_at(std::string("\x0c", 1), 0, "group wire type 4");
  expect_data_loss_at(std::string("\x0e", 1), 0, "invalid wire type 6");
  expect_data_loss_at(std::string("\x00\x00", 2), 0, "invalid field tag");
  // Errors inside nested messages carry the absolute payload offset.
  {
    wire_writer tensor;
    tensor.varint(1, 1).message(2, shape_of({1})).tag(4, 0).raw("\x80");  // content as varint, cut
    const std::string payload = event_with_tensor(tensor);
    event_decoder decoder;
    event_record r;
    const status s = decode_string(decoder, payload, r);
    EXPECT_EQ(s.code(), error_code::data_loss) << s.to_string();
    EXPECT_NE(s.message().find("TensorProto.tensor_content) has wire type 0"), std::string::npos)
        << s.message();
    // The offset named is where the bad tag sits in the payload.
    const std::size_t at = payload.find(std::string("\x20\x80", 2));
    ASSERT_NE(at, std::string::npos);
    EXPECT_NE(s.message().find("payload byte " + std::to_string(at)), std::string::npos)
        << s.message();
  }
  {
    wire_writer tensor;
    tensor.varint(1, 1).tag(2, 5).raw("abcd");  // tensor_shape as fixed32
    const status s = [&] {
      event_decoder d;
      event_record r;
      return decode_string(d, event_with_tensor(tensor), r);
    }();
    EXPECT_EQ(s.code(), error_code::data_loss);
    EXPECT_NE(s.message().find("tensor_shape) has wire type 5"), std::string::npos) << s.message();
  }
  {
    wire_writer tensor;
    tensor.varint(1, 1).message(2, shape_of({1})).tag(5, 1).raw(std::string(8, '\0'));
    const status s = [&] {
      event_decoder d;
      event_record r;
      return decode_string(d, event_with_tensor(tensor), r);
    }();
    EXPECT_EQ(s.code(), error_code::data_loss);
    EXPECT_NE(s.message().find("field 5 of TensorProto has wire type 1"), std::string::npos)
        << s.message();
  }
  {
    wire_writer tensor;
    tensor.varint(1, 1).message(2, shape_of({1})).bytes(5, "abcde");  // packed floats, 5 bytes
    event_decoder d;
    event_record r;
    const status s = decode_string(d, event_with_tensor(tensor), r);
    EXPECT_EQ(s.code(), error_code::data_loss);
    EXPECT_NE(s.message().find("not a multiple of 4"), std::string::npos) << s.message();
  }
  {
    wire_writer tensor;
    tensor.varint(1, 3).message(2, shape_of({1})).bytes(7, "\x81");  // packed varints, cut
    event_decoder d;
    event_record r;
    const status s = decode_string(d, event_with_tensor(tensor), r);
    EXPECT_EQ(s.code(), error_code::data_loss);
    EXPECT_NE(s.message().find("ends inside a varint"), std::string::npos) << s.message();
  }
}

TEST(event_decoder, content_size_and_shape_errors) {
  event_decoder decoder;
  event_record r;
  struct bad {
    const char* what;
    wire_writer tensor;
    const char* fragment;
  };
  std::vector<bad> cases;
  cases.push_back({"too few bytes", wire_writer().varint(1, 1).message(2, shape_of({3}))
                                        .bytes(4, std::string(8, '\0')),
                   "content holds 8 bytes, expected 3 elements x 4 bytes (DT_FLOAT"});
  cases.push_back({"too many bytes", wire_writer().varint(1, 2).message(2, shape_of({}))
                                         .bytes(4, std::string(9, '\0')),
                   "content holds 9 bytes, expected 1 elements x 8 bytes"});
  cases.push_back({"typed values short", wire_writer().varint(1, 3).message(2, shape_of({4}))
                                             .packed_varints(7, {1, 2, 3}),
                   "content holds 12 bytes, expected 4 elements x 4 bytes"});
  cases.push_back({"negative dim", wire_writer().varint(1, 1).message(2, shape_of({2, -3})),
                   "dim 1 has negative size -3"});
  cases.push_back({"element count overflow",
                   wire_writer().varint(1, 1).message(
                       2, shape_of({int64_t{1} << 40, int64_t{1} << 40})),
                   "element count overflows"});
  cases.push_back({"byte count overflow",
                   wire_writer().varint(1, 2).message(2, shape_of({int64_t{1} << 61})),
                   "expected 2305843009213693952 elements x 8 bytes"});
  cases.push_back({"int8 out of range", wire_writer().varint(1, 6).message(2, shape_of({1}))
                                            .packed_varints(7, {200}),
                   "value 200 in field 7 of TensorProto (payload byte"});
  cases.push_back({"half out of range", wire_writer().varint(1, 19).message(2, shape_of({1}))
                                            .varint(13, 70000),
                   "out of range for DT_HALF"});
  cases.push_back({"DT_INVALID with numbers",
                   wire_writer().varint(1, 0).message(2, shape_of({1})).bytes(4, "abcd"),
                   "DT_INVALID (0) tensor carries numeric data"});
  for (auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string payload = event_with_tensor(c.tensor, "bad/tensor");
    const status s = decode_string(decoder, payload, r);
    EXPECT_EQ(s.code(), error_code::data_loss) << s.to_string();
    EXPECT_NE(s.message().find(c.fragment), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("tensor 'bad/tensor' (TensorProto at payload byte"),
              std::string::npos)
        << s.message();
  }
}

TEST(event_decoder, unknown_dtype_is_unsupported_dtype) {
  event_decoder decoder;
  event_record r;
  for (const uint64_t number : {uint64_t{11}, uint64_t{20}, uint64_t{21}, uint64_t{24},
                                uint64_t{101}, sign_extend(-1)}) {
    SCOPED_TRACE(number);
    wire_writer tensor;
    tensor.message(2, shape_of({1})).bytes(4, "abcd").varint(1, number);
    const status s = decode_string(decoder, event_with_tensor(tensor, "quantized/w"), r);
    EXPECT_EQ(s.code(), error_code::unsupported_dtype) << s.to_string();
    EXPECT_NE(s.message().find("unknown DataType " + std::to_string(static_cast<int64_t>(number))),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("quantized/w"), std::string::npos) << s.message();
  }
}

TEST(event_decoder, decoder_is_reusable_after_failures) {
  const auto cases = all_dtype_cases();
  event_decoder decoder;
  event_record r;
  for (const auto& c : cases) {
    EXPECT_FALSE(decode_string(decoder, std::string("\x0b", 1), r).ok());
    ASSERT_TRUE(
        decode_string(decoder, event_with_tensor(tensor_with_typed(c, typed_layout::split)), r)
            .ok());
    expect_decoded(r, c);
  }
}

}  // namespace
}  // namespace trialstat::decode

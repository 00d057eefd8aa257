// SPDX-License-Identifier: Apache-2.0
// The hand encoder must produce the bytes smdebug produces: checked against FORMAT §11's worked
// example, against every record of every golden trial, and against the generated protobuf
// classes (which serialize exactly like smdebug's Python protobuf) for every dtype and for
// edge cases of each field (0-d, zero-size dims, multi-byte varints, step 0, wall time 0).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "event.pb.h"
#include "tests/support/shared_trials.hpp"
#include "tests/writer/golden_walk.hpp"
#include "trialstat/io/crc32c.hpp"
#include "trialstat/writer/event_encoder.hpp"

namespace tw = trialstat::writer;
using trialstat::dtype;
using trialstat::mode;
using trialstat::tensor_view;

namespace {

std::vector<std::byte> hex_bytes(std::string_view hex) {
  std::vector<std::byte> out;
  int hi = -1;
  for (char c : hex) {
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    if (v < 0) continue;
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<std::byte>(hi * 16 + v));
      hi = -1;
    }
  }
  return out;
}

void append_le(std::vector<std::byte>& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

// Frame a payload as FORMAT §2 says (independent of the encoder's framing code).
std::vector<std::byte> frame(const std::string& payload, bool payload_crc) {
  std::vector<std::byte> out;
  append_le(out, payload.size(), 8);
  append_le(out, trialstat::io::mask_crc32c(trialstat::io::crc32c({out.data(), 8})), 4);
  for (char c : payload) out.push_back(static_cast<std::byte>(c));
  const uint32_t footer =
      payload_crc ? trialstat::io::mask_crc32c(trialstat::io::crc32c(
                        std::as_bytes(std::span<const char>(payload.data(), payload.size()))))
                  : 0x062DC0B3u;
  append_le(out, footer, 4);
  return out;
}

// The Event as smdebug's writer builds it, with the generated classes.
smdebug::Event proto_event(const tw::event_header& h, int dtype_number,
                           const std::vector<int64_t>& shape, std::string_view content,
                           const std::vector<std::string>* strings = nullptr) {
  smdebug::Event e;
  e.set_wall_time(h.wall_time);
  e.set_step(h.step);
  auto* v = e.mutable_summary()->add_value();
  v->set_tag(std::string(h.tag));
  auto* t = v->mutable_tensor();
  t->set_dtype(static_cast<smdebug::DataType>(dtype_number));
  auto* s = t->mutable_tensor_shape();
  for (int64_t d : shape) {
    auto* dim = s->add_dim();
    dim->set_size(d);
    dim->set_name(std::string(h.tag) + "_" + std::to_string(d));
  }
  if (strings != nullptr) {
    for (const auto& str : *strings) t->add_string_val(str);
  } else {
    t->set_tensor_content(std::string(content));
  }
  auto* md = v->mutable_metadata();
  auto* p1 = md->add_plugin_data();
  p1->set_plugin_name("mode_step");
  p1->set_content(std::to_string(h.mode_step));
  auto* p2 = md->add_plugin_data();
  p2->set_plugin_name("mode");
  p2->set_content(std::to_string(static_cast<int>(h.mode)));
  return e;
}

std::vector<std::byte> encode(const tw::event_header& h, dtype type, const std::vector<int64_t>& shape,
                              const std::vector<std::byte>& content,
                              tw::footer_policy footer = tw::footer_policy::smdebug_constant) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const tensor_view view{content.data(), type, shape, n};
  auto r = tw::encode_tensor_record(h, view, footer);
  EXPECT_TRUE(r.has_value()) << r.error_status().to_string();
  return r.has_value() ? *r : std::vector<std::byte>{};
}

}  // namespace

TEST(EventEncoder, FormatWorkedExampleIsByteIdentical) {
  // spec/FORMAT.md §11: CrossEntropyLoss_output_0, global step 5, TRAIN mode step 5.
  const auto expected = hex_bytes(
      "53 00 00 00 00 00 00 00 0d 7d 4e 91 09 58 f5 71 63 b5 c0 da 41 10 05 2a 46 0a 44"
      "0a 19 43726f7373456e74726f70794c6f73735f6f75747075745f30"
      "42 0a 08 01 12 00 22 04 6b b0 13 40"
      "4a 1b 0a 0e 0a 09 6d6f64655f73746570 12 01 35 0a 09 0a 04 6d6f6465 12 01 31"
      "b3 c0 2d 06");
  ASSERT_EQ(expected.size(), 99u);
  const double wall_time = std::bit_cast<double>(uint64_t{0x41dac0b56371f558});
  const uint32_t loss_bits = 0x4013B06Bu;
  std::vector<std::byte> content(4);
  std::memcpy(content.data(), &loss_bits, 4);
  const tw::event_header h{wall_time, 5, "CrossEntropyLoss_output_0", mode::train, 5};
  EXPECT_EQ(encode(h, dtype::float32, {}, content), expected);

  // The parts API splits the same bytes around the (uncopied) element bytes.
  const tensor_view view{content.data(), dtype::float32, {}, 1};
  auto parts = tw::encode_tensor_record_parts(h, view, tw::footer_policy::smdebug_constant);
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->content.data(), content.data());
  EXPECT_EQ(parts->size_bytes(), 99u);
}

TEST(EventEncoder, EveryGoldenRecordIsByteIdentical) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  std::size_t checked = 0;
  for (const auto& trial_name : trialstat::testing::shared_trial_names()) {
    const auto trial = dir / trial_name;
    for (const auto& index_rel : trialstat::testing::index_files(trial)) {
      const auto index = nlohmann::json::parse(trialstat::testing::read_text(trial / index_rel));
      if (!index["meta"].contains("event_file_name")) continue;
      const auto events = trialstat::testing::read_bytes(
          trial / index["meta"]["event_file_name"].get<std::string>());
      const mode m = *trialstat::parse_mode_name(index["meta"]["mode"].get<std::string>());
      const int64_t mode_step = index["meta"]["mode_step"].get<int64_t>();
      for (const auto& entry : index["tensor_payload"]) {
        const auto start = entry["start_idx"].get<std::size_t>();
        const auto length = entry["length"].get<std::size_t>();
        const std::string where = trial_name + "/" + index_rel.string() + " " +
                                  entry["tensorname"].get<std::string>();
        ASSERT_LE(start + length, events.size()) << where;
        std::vector<std::byte> golden(events.begin() + static_cast<std::ptrdiff_t>(start),
                                      events.begin() + static_cast<std::ptrdiff_t>(start + length));
        trialstat::testing::proto_record rec;
        ASSERT_TRUE(trialstat::testing::parse_proto_record(golden, rec)) << where;
        const auto& value = rec.event.summary().value(0);
        ASSERT_EQ(value.tag(), entry["tensorname"].get<std::string>()) << where;
        const auto& t = value.tensor();
        std::vector<int64_t> shape;
        for (const auto& d : t.tensor_shape().dim()) shape.push_back(d.size());
        const tw::event_header h{rec.event.wall_time(), rec.event.step(), value.tag(), m,
                                 mode_step};
        std::vector<std::byte> ours;
        if (t.string_val_size() > 0) {
          std::vector<std::string> strings(t.string_val().begin(), t.string_val().end());
          auto parts = tw::encode_string_record_parts(h, strings, tw::footer_policy::smdebug_constant);
          ASSERT_TRUE(parts.has_value()) << where;
          ours = parts->head;
          ours.insert(ours.end(), parts->tail.begin(), parts->tail.end());
        } else {
          const auto& c = t.tensor_content();
          std::vector<std::byte> content(c.size());
          if (!c.empty()) std::memcpy(content.data(), c.data(), c.size());
          ours = encode(h, static_cast<dtype>(t.dtype()), shape, content);
        }
        ASSERT_EQ(ours, golden) << where;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000u);  // every record of the seven trials
}

// Typed over every fixed-size dtype: the encoder equals the generated classes.
TEST(EventEncoder, MatchesGeneratedProtobufForEveryDtype) {
  const dtype types[] = {dtype::float32, dtype::float64, dtype::int32,  dtype::uint8,
                         dtype::int16,   dtype::int8,    dtype::complex64, dtype::int64,
                         dtype::boolean, dtype::bfloat16, dtype::uint16, dtype::complex128,
                         dtype::float16, dtype::uint32,  dtype::uint64};
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {1}, {3, 4}, {2, 0, 3}, {0}, {300}, {2, 1, 1, 3}, {17000}};
  const int64_t steps[] = {0, 1, 127, 128, 16384, int64_t{1} << 40};
  const double wall_times[] = {0.0, 1.7953478537806e9, 1e-300};
  const uint32_t seed = 20240611;
  std::mt19937 rng(seed);
  std::size_t checked = 0;
  for (dtype type : types) {
    for (const auto& shape : shapes) {
      for (std::size_t k = 0; k < 3; ++k) {
        const int64_t step = steps[(checked + k) % std::size(steps)];
        const double wall_time = wall_times[(checked + k) % std::size(wall_times)];
        const mode m = trialstat::all_modes[(checked + k) % 4];
        const int64_t mode_step = static_cast<int64_t>(k * 999);
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        std::vector<std::byte> content(static_cast<std::size_t>(n) * trialstat::dtype_size_bytes(type));
        for (auto& b : content) b = static_cast<std::byte>(rng());
        const std::string tag = "layer" + std::to_string(k) + "/weight:0";
        const tw::event_header h{wall_time, step, tag, m, mode_step};
        const auto e = proto_event(h, static_cast<int>(type), shape,
                                   std::string_view(reinterpret_cast<const char*>(content.data()),
                                                    content.size()));
        for (bool crc : {false, true}) {
          const auto expected = frame(e.SerializeAsString(), crc);
          const auto ours = encode(h, type, shape, content,
                                   crc ? tw::footer_policy::payload_crc
                                       : tw::footer_policy::smdebug_constant);
          ASSERT_EQ(ours, expected) << "seed " << seed << " dtype " << trialstat::dtype_name(type)
                                    << " rank " << shape.size() << " step " << step;
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, std::size(types) * shapes.size() * 3);
}

TEST(EventEncoder, StringRecordsMatchGeneratedProtobuf) {
  const std::vector<std::string> values = {"alpha", "", "gr\xc3\xbc\xc3\x9f", std::string(200, 'x')};
  const tw::event_header h{1.5e9, 42, "labels", mode::eval, 7};
  auto parts = tw::encode_string_record_parts(h, values, tw::footer_policy::payload_crc);
  ASSERT_TRUE(parts.has_value()) << parts.error_status().to_string();
  EXPECT_TRUE(parts->content.empty());
  std::vector<std::byte> ours = parts->head;
  ours.insert(ours.end(), parts->tail.begin(), parts->tail.end());
  const auto e = proto_event(h, 0, {static_cast<int64_t>(values.size())}, {}, &values);
  EXPECT_EQ(ours, frame(e.SerializeAsString(), true));

  auto empty = tw::encode_string_record_parts(h, {}, tw::footer_policy::smdebug_constant);
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error_status().code(), trialstat::error_code::invalid_argument);
}

TEST(EventEncoder, PayloadMatchesRecordWithoutFraming) {
  const float x[6] = {1.f, -2.f, NAN, INFINITY, -0.f, 3.5f};
  const std::vector<int64_t> shape = {2, 3};
  const tensor_view view{reinterpret_cast<const std::byte*>(x), dtype::float32, shape, 6};
  const tw::event_header h{123.25, 9, "w", mode::predict, 2};
  auto payload = tw::encode_tensor_payload(h, view);
  auto record = tw::encode_tensor_record(h, view, tw::footer_policy::smdebug_constant);
  ASSERT_TRUE(payload.has_value() && record.has_value());
  ASSERT_EQ(record->size(), payload->size() + 16);
  EXPECT_TRUE(std::equal(payload->begin(), payload->end(), record->begin() + 12));
  smdebug::Event e;
  ASSERT_TRUE(e.ParseFromArray(payload->data(), static_cast<int>(payload->size())));
  EXPECT_EQ(e.summary().value(0).tensor().tensor_content().size(), sizeof(x));
  EXPECT_EQ(std::memcmp(e.summary().value(0).tensor().tensor_content().data(), x, sizeof(x)), 0);
}

TEST(EventEncoder, RejectsBadInput) {
  const float x[4] = {1, 2, 3, 4};
  const std::vector<int64_t> shape = {2, 2};
  const std::vector<int64_t> bad_shape = {3};
  const std::vector<int64_t> negative = {-1};
  const auto* d = reinterpret_cast<const std::byte*>(x);
  const auto code = [](const tw::event_header& h, const tensor_view& v) {
    return tw::encode_tensor_record(h, v, tw::footer_policy::smdebug_constant).error_status().code();
  };
  using trialstat::error_code;
  const tw::event_header ok{1.0, 1, "t", mode::train, 1};
  EXPECT_EQ(code(ok, {d, dtype::float32, shape, 4}), error_code::ok);
  EXPECT_EQ(code({1.0, 1, "", mode::train, 1}, {d, dtype::float32, shape, 4}),
            error_code::invalid_argument);
  EXPECT_EQ(code({1.0, -1, "t", mode::train, 1}, {d, dtype::float32, shape, 4}),
            error_code::invalid_argument);
  EXPECT_EQ(code({1.0, 1, "t", mode::train, -3}, {d, dtype::float32, shape, 4}),
            error_code::invalid_argument);
  // −1 is what smdebug stamps on a scalar flushed right after set_mode (HOOK_API §6.5).
  EXPECT_EQ(code({1.0, 1, "t", mode::eval, -1}, {d, dtype::float32, shape, 4}), error_code::ok);
  EXPECT_EQ(code({1.0, 1, "t", static_cast<mode>(7), 1}, {d, dtype::float32, shape, 4}),
            error_code::invalid_argument);
  EXPECT_EQ(code(ok, {d, dtype::float32, bad_shape, 4}), error_code::invalid_argument);
  EXPECT_EQ(code(ok, {d, dtype::float32, negative, -1}), error_code::invalid_argument);
  EXPECT_EQ(code(ok, {nullptr, dtype::float32, shape, 4}), error_code::invalid_argument);
  EXPECT_EQ(code(ok, {d, dtype::string, shape, 4}), error_code::invalid_argument);
  EXPECT_EQ(code(ok, {d, dtype::float32, shape, 4, trialstat::memory_kind::device}),
            error_code::invalid_argument);
  // Zero elements need no data.
  const std::vector<int64_t> empty = {2, 0};
  EXPECT_EQ(code(ok, {nullptr, dtype::int64, empty, 0}), error_code::ok);
}

TEST(EventEncoder, ReductionTagsFollowSmdebug) {
  EXPECT_EQ(tw::reduction_tag("MLP_fc1.weight", "min", false), "smdebug/reductions/min/MLP_fc1.weight");
  EXPECT_EQ(tw::reduction_tag("gradient/MLP_fc1.bias", "l2", true),
            "smdebug/reductions/abs_l2/gradient/MLP_fc1.bias");
  EXPECT_EQ(tw::reduction_tag("dense/kernel:0", "mean", false), "smdebug/reductions/mean/dense/kernel");
  EXPECT_EQ(tw::reduction_tag("a:12/b:3x", "max", false), "smdebug/reductions/max/a/bx");
  EXPECT_EQ(tw::reduction_tag("a:", "max", false), "smdebug/reductions/max/a:");
}

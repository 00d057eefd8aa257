// SPDX-License-Identifier: Apache-2.0
// Read-back round trip: what trial_writer writes, trialstat's own reader (io::read_file,
// io::record_scanner / io::parse_record, decode::event_decoder, decode::read_tensor_record)
// gives back exactly — every dtype, 0-d and empty tensors, strings, both footer kinds.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/support/shared_trials.hpp"
#include "tests/writer/golden_walk.hpp"
#include "trialstat/decode/event_decoder.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/decode/indexed_record.hpp"
#include "trialstat/io/record_reader.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace tw = trialstat::writer;
namespace fs = std::filesystem;
using trialstat::dtype;
using trialstat::mode;

namespace {

struct written_tensor {
  std::string name;
  dtype type;
  std::vector<int64_t> shape;
  std::vector<std::byte> content;
  std::vector<std::string> strings;  // string tensors only
};

std::vector<written_tensor> make_tensors(uint32_t seed) {
  const dtype types[] = {dtype::float32, dtype::float64, dtype::int32,      dtype::uint8,
                         dtype::int16,   dtype::int8,    dtype::complex64,  dtype::int64,
                         dtype::boolean, dtype::bfloat16, dtype::uint16,    dtype::complex128,
                         dtype::float16, dtype::uint32,  dtype::uint64};
  const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3, 4}, {2, 0, 3}};
  std::mt19937 rng(seed);
  std::vector<written_tensor> out;
  for (dtype t : types) {
    for (const auto& shape : shapes) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      written_tensor w{std::string("t_") + std::string(trialstat::dtype_name(t)) + "_r" +
                           std::to_string(shape.size()),
                       t, shape, {}, {}};
      w.content.resize(static_cast<std::size_t>(n) * trialstat::dtype_size_bytes(t));
      for (auto& b : w.content) b = static_cast<std::byte>(rng());
      if (t == dtype::boolean) {
        for (auto& b : w.content) b = static_cast<std::byte>(static_cast<int>(b) & 1);
      }
      out.push_back(std::move(w));
    }
  }
  written_tensor s{"labels", dtype::invalid, {3}, {}, {"cat", "", "\xc3\xa9t\xc3\xa9"}};
  out.push_back(std::move(s));
  return out;
}

void write_all(tw::trial_writer& w, const std::vector<written_tensor>& tensors) {
  for (const auto& t : tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    trialstat::status s;
    if (!t.strings.empty()) {
      s = w.add_strings(t.name, t.strings, 1.25e9);
    } else {
      s = w.add_tensor(t.name, {t.content.data(), t.type, t.shape, n}, 1.25e9);
    }
    ASSERT_TRUE(s.ok()) << t.name << ": " << s.to_string();
  }
}

void expect_record_matches(const trialstat::decode::event_record& rec, const written_tensor& t,
                           int64_t step, mode m, int64_t mode_step) {
  SCOPED_TRACE(t.name);
  EXPECT_EQ(rec.tag, t.name);
  EXPECT_EQ(rec.step, step);
  EXPECT_EQ(rec.wall_time, 1.25e9);
  EXPECT_TRUE(rec.has_mode);
  EXPECT_EQ(rec.mode, m);
  EXPECT_EQ(rec.mode_step, mode_step);
  EXPECT_TRUE(rec.has_tensor);
  EXPECT_EQ(rec.shape, t.shape);
  if (!t.strings.empty()) {
    EXPECT_EQ(rec.proto_dtype, 0);
    ASSERT_EQ(rec.strings.size(), t.strings.size());
    for (std::size_t i = 0; i < t.strings.size(); ++i) EXPECT_EQ(rec.strings[i], t.strings[i]);
    return;
  }
  EXPECT_EQ(rec.proto_dtype, static_cast<int64_t>(t.type));
  EXPECT_EQ(rec.type, t.type);
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  EXPECT_EQ(rec.num_elements, n);
  // Empty tensors carry no tensor_content; a reader may fall back to (empty) typed fields.
  ASSERT_EQ(rec.content.size(), t.content.size());
  if (!t.content.empty()) {
    EXPECT_EQ(std::memcmp(rec.content.data(), t.content.data(), t.content.size()), 0);
  }
}

}  // namespace

class RoundTrip : public ::testing::TestWithParam<tw::footer_policy> {};

TEST_P(RoundTrip, EveryDtypeThroughScannerAndIndex) {
  const uint32_t seed = 1234;
  const auto tensors = make_tensors(seed);
  const auto root = trialstat::testing::make_scratch_dir("writer_roundtrip");
  tw::writer_options options;
  options.footer = GetParam();
  auto w = tw::trial_writer::create(root, "worker_0", options);
  ASSERT_TRUE(w.has_value());
  ASSERT_TRUE(w->begin_step(1001, mode::eval, 17).ok());
  write_all(*w, tensors);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(w->end_step().ok());
  ASSERT_TRUE(w->close().ok());

  const auto event_path = root / tw::trial_writer::event_file_path(1001, "worker_0");
  // 1) Sequential scan of the whole file.
  std::vector<std::byte> file;
  auto size = trialstat::io::read_file(event_path, file);
  ASSERT_TRUE(size.has_value()) << size.error_status().to_string();
  trialstat::io::record_scanner scanner(std::span<const std::byte>(file.data(), *size),
                                        event_path.string());
  trialstat::decode::event_decoder decoder;
  trialstat::decode::event_record rec;
  const auto expected_footer = GetParam() == tw::footer_policy::payload_crc
                                   ? trialstat::io::footer_kind::payload_crc
                                   : trialstat::io::footer_kind::smdebug_constant;
  std::size_t i = 0;
  std::vector<uint64_t> offsets;
  for (;; ++i) {
    auto frame = scanner.next();
    if (!frame.has_value()) {
      EXPECT_EQ(frame.error_status().code(), trialstat::error_code::end_of_stream)
          << frame.error_status().to_string();
      break;
    }
    ASSERT_LT(i, tensors.size());
    EXPECT_EQ(frame->footer, expected_footer);
    offsets.push_back(frame->offset_bytes);
    const auto s = decoder.decode(frame->payload, rec);
    ASSERT_TRUE(s.ok()) << "seed " << seed << ": " << s.to_string();
    expect_record_matches(rec, tensors[i], 1001, mode::eval, 17);
  }
  EXPECT_EQ(i, tensors.size());

  // 2) Index-driven reads, as the catalog does them.
  const auto index = nlohmann::json::parse(trialstat::testing::read_text(
      root / tw::trial_writer::index_file_path(1001, "worker_0")));
  EXPECT_EQ(index["meta"]["mode"], "EVAL");
  EXPECT_EQ(index["meta"]["mode_step"], 17);
  auto reader = trialstat::io::file_reader::open(event_path);
  ASSERT_TRUE(reader.has_value());
  trialstat::decode::record_read_buffers buffers;
  ASSERT_EQ(index["tensor_payload"].size(), tensors.size());
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const auto& e = index["tensor_payload"][k];
    EXPECT_EQ(e["tensorname"], tensors[k].name);
    EXPECT_EQ(e["start_idx"].get<uint64_t>(), offsets[k]);
    const auto s = trialstat::decode::read_tensor_record(
        *reader, {e["start_idx"].get<uint64_t>(), e["length"].get<uint64_t>()}, buffers, rec);
    ASSERT_TRUE(s.ok()) << s.to_string();
    expect_record_matches(rec, tensors[k], 1001, mode::eval, 17);
  }
  fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(Footers, RoundTrip,
                         ::testing::Values(tw::footer_policy::smdebug_constant,
                                           tw::footer_policy::payload_crc));

TEST(RoundTrip, ReductionRecordsDecodeAsZeroDimFloat32) {
  const auto root = trialstat::testing::make_scratch_dir("writer_reduction");
  auto w = tw::trial_writer::create(root, "worker_0");
  ASSERT_TRUE(w.has_value());
  ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
  ASSERT_TRUE(w->add_reduction("MLP_fc1.weight", "variance", false, 0.125f, 3.0).ok());
  ASSERT_TRUE(w->end_step().ok());
  const auto index = nlohmann::json::parse(trialstat::testing::read_text(
      root / tw::trial_writer::index_file_path(0, "worker_0")));
  const auto& e = index["tensor_payload"][0];
  EXPECT_EQ(e["tensorname"], "smdebug/reductions/variance/MLP_fc1.weight");
  auto reader = trialstat::io::file_reader::open(root / tw::trial_writer::event_file_path(0, "worker_0"));
  ASSERT_TRUE(reader.has_value());
  trialstat::decode::record_read_buffers buffers;
  trialstat::decode::event_record rec;
  ASSERT_TRUE(trialstat::decode::read_tensor_record(
                  *reader, {e["start_idx"].get<uint64_t>(), e["length"].get<uint64_t>()},
                  buffers, rec)
                  .ok());
  EXPECT_EQ(rec.step, 0);  // absent on the wire
  EXPECT_EQ(rec.type, dtype::float32);
  EXPECT_TRUE(rec.shape.empty());
  EXPECT_EQ(rec.num_elements, 1);
  float v = 0;
  ASSERT_EQ(rec.content.size(), 4u);
  std::memcpy(&v, rec.content.data(), 4);
  EXPECT_EQ(v, 0.125f);
  fs::remove_all(root);
}

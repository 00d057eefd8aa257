// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the TensorBoard event writer and its readers (host/writer/
// tensorboard_event_file.cpp; read back by host/io/record_reader.cpp and host/decode/
// event_decoder.cpp). The input is a list of scalars and histograms (tag, step, wall time,
// values). Tags pass through `tensorboard_tag` as the exporter does (only [-/\w.], no leading
// '/'). The written file must read back record for record: TensorBoard footers (payload CRCs),
// the same steps, wall times and tags from trialstat's decoder, and the same scalar values and
// histogram fields from protobuf's own parser of the same payload.
#include <fuzzer/FuzzedDataProvider.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "event.pb.h"
#include "tests/fuzz/fuzz_check.hpp"
#include "tests/fuzz/fuzz_files.hpp"
#include "trialstat/decode/event_decoder.hpp"
#include "trialstat/io/record_reader.hpp"
#include "trialstat/writer/tensorboard_event_file.hpp"

namespace fs = std::filesystem;
using namespace trialstat;

namespace {

struct written {
  bool histogram = false;
  int64_t step = 0;
  double wall_time = 0.0;
  std::string tag;
  float scalar = 0.0f;
  std::vector<double> limits;
  std::vector<int64_t> counts;
  writer::tensorboard_histogram h;
};

fs::path out_dir;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  out_dir = fuzz::make_scratch_folder("trialstat_fuzz_tensorboard_");
  FUZZ_CHECK(!out_dir.empty(), "cannot create a scratch folder");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  std::vector<written> records;
  while (in.remaining_bytes() > 0 && records.size() < 64) {
    written w;
    w.histogram = in.ConsumeBool();
    w.step = in.ConsumeIntegral<int64_t>();
    w.wall_time = in.ConsumeFloatingPoint<double>();
    const std::string raw_tag = in.ConsumeRandomLengthString(128);
    w.tag = writer::tensorboard_tag(raw_tag);
    for (const char c : w.tag) {
      FUZZ_CHECK(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '/' || c == '.',
                 "tensorboard_tag kept a character TensorBoard does not: " + w.tag);
    }
    FUZZ_CHECK(w.tag.empty() || w.tag.front() != '/', "tensorboard_tag kept a leading '/'");
    FUZZ_CHECK(w.tag.size() <= raw_tag.size(), "tensorboard_tag made a tag longer");
    if (!w.histogram) {
      w.scalar = in.ConsumeFloatingPoint<float>();
    } else {
      w.h.min = in.ConsumeFloatingPoint<double>();
      w.h.max = in.ConsumeFloatingPoint<double>();
      w.h.num = in.ConsumeFloatingPoint<double>();
      w.h.sum = in.ConsumeFloatingPoint<double>();
      w.h.sum_squares = in.ConsumeFloatingPoint<double>();
      const int buckets = in.ConsumeIntegralInRange(0, 16);
      for (int b = 0; b < buckets; ++b) {
        w.limits.push_back(in.ConsumeFloatingPoint<double>());
        w.counts.push_back(in.ConsumeIntegral<int64_t>());
      }
    }
    records.push_back(std::move(w));
  }

  auto file = writer::tensorboard_event_file::create(out_dir, 1.5e9);
  FUZZ_CHECK(file.has_value(), file.error_status().to_string());
  for (written& w : records) {
    status s;
    if (w.histogram) {
      w.h.limits = w.limits;
      w.h.counts = w.counts;
      s = file->add_histogram(w.step, w.wall_time, w.tag, w.h);
    } else {
      s = file->add_scalar(w.step, w.wall_time, w.tag, w.scalar);
    }
    FUZZ_CHECK(s.ok(), s.to_string());
  }
  FUZZ_CHECK(file->close().ok(), "close failed");
  FUZZ_CHECK(file->records() == static_cast<int64_t>(records.size()) + 1, "record count");

  const auto bytes = fuzz::read_file_bytes(file->path());
  io::record_scanner scanner(bytes, file->path().string());
  decode::event_decoder decoder;
  for (std::size_t r = 0; r <= records.size(); ++r) {
    const auto frame = scanner.next();
    FUZZ_CHECK(frame.has_value(), frame.error_status().to_string());
    FUZZ_CHECK(frame->footer == io::footer_kind::payload_crc, "TensorBoard footer expected");
    decode::event_record decoded;
    const status s = decoder.decode(frame->payload, decoded);
    FUZZ_CHECK(s.ok(), s.to_string());
    smdebug::Event event;
    FUZZ_CHECK(event.ParseFromArray(frame->payload.data(), static_cast<int>(frame->payload.size())),
               "protobuf cannot parse a written event");
    if (r == 0) {
      FUZZ_CHECK(event.file_version() == "brain.Event:2", "first record is not the file version");
      continue;
    }
    const written& w = records[r - 1];
    FUZZ_CHECK(decoded.step == w.step && event.step() == w.step, "step differs");
    FUZZ_CHECK(same_bits(decoded.wall_time, w.wall_time) && same_bits(event.wall_time(), w.wall_time),
               "wall time differs");
    FUZZ_CHECK(decoded.tag == w.tag && !decoded.has_tensor, "tag differs");
    FUZZ_CHECK(event.summary().value_size() == 1, "one value per event");
    const auto& v = event.summary().value(0);
    FUZZ_CHECK(v.tag() == w.tag, "protobuf reads another tag");
    if (!w.histogram) {
      const float got = v.simple_value();
      FUZZ_CHECK(v.has_simple_value() && std::memcmp(&got, &w.scalar, sizeof got) == 0, "scalar differs");
      continue;
    }
    FUZZ_CHECK(v.has_histo(), "histogram missing");
    const auto& h = v.histo();
    FUZZ_CHECK(same_bits(h.min(), w.h.min) && same_bits(h.max(), w.h.max) && same_bits(h.num(), w.h.num) &&
                   same_bits(h.sum(), w.h.sum) && same_bits(h.sum_squares(), w.h.sum_squares),
               "histogram summary fields differ");
    FUZZ_CHECK(h.bucket_limit_size() == static_cast<int>(w.limits.size()) &&
                   h.bucket_size() == static_cast<int>(w.counts.size()),
               "bucket count differs");
    for (std::size_t b = 0; b < w.limits.size(); ++b) {
      FUZZ_CHECK(same_bits(h.bucket_limit(static_cast<int>(b)), w.limits[b]), "bucket limit differs");
      FUZZ_CHECK(h.bucket(static_cast<int>(b)) == static_cast<double>(w.counts[b]), "bucket count differs");
    }
  }
  const auto end = scanner.next();
  FUZZ_CHECK(!end.has_value() && end.error_status().code() == error_code::end_of_stream, "records after the last");
  std::error_code ec;
  fs::remove(file->path(), ec);
  return 0;
}

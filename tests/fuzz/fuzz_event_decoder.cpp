// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the Event -> Summary -> Value -> TensorProto wire walk (host/decode/
// event_decoder.cpp). The input is one record payload. A decode is ok, data_loss or
// unsupported_dtype; an ok tensor has a shape whose product is `num_elements` and element bytes
// of exactly num_elements x element size, inside the payload or the decoder's scratch (ASan
// checks every byte is readable). Decoding the same payload twice with one decoder (its scratch
// reused) gives the same record.
#include <cstdint>
#include <cstring>
#include <string>

#include "tests/fuzz/fuzz_check.hpp"
#include "trialstat/decode/event_decoder.hpp"

using namespace trialstat;

namespace {

/// The parts of a decoded record that must not depend on the decoder's history.
std::string summary_of(const decode::event_record& r) {
  std::string s;
  s += std::to_string(r.step) + '|' + std::string(r.tag) + '|' + std::to_string(r.mode_step) + '|' +
       std::to_string(static_cast<int>(r.mode)) + '|' + std::to_string(r.proto_dtype) + '|' +
       std::to_string(r.num_elements) + '|' + std::to_string(r.strings.size()) + '|';
  for (const int64_t d : r.shape) s += std::to_string(d) + ',';
  s.append(reinterpret_cast<const char*>(r.content.data()), r.content.size());
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto payload = fuzz::as_bytes(data, size);
  static decode::event_decoder decoder;  // reused across inputs, as the readers do
  decode::event_record record;
  const status s = decoder.decode(payload, record);
  if (!s.ok()) {
    FUZZ_CHECK(s.code() == error_code::data_loss || s.code() == error_code::unsupported_dtype,
               s.to_string());
    FUZZ_CHECK(!s.message().empty(), "an error without a message");
    return 0;
  }
  if (record.has_tensor && record.type != dtype::string) {
    int64_t product = 1;
    for (const int64_t d : record.shape) {
      FUZZ_CHECK(d >= 0, "negative dimension decoded");
      FUZZ_CHECK(!__builtin_mul_overflow(product, d, &product), "shape product overflows");
    }
    FUZZ_CHECK(product == record.num_elements, "num_elements is not the shape's product");
    const std::size_t element = dtype_size_bytes(record.type);
    FUZZ_CHECK(element == 0 || record.content.size() ==
                                   static_cast<std::size_t>(record.num_elements) * element,
               "content size is not num_elements x element size");
    volatile unsigned char sink = 0;  // every content byte must be readable
    for (const std::byte b : record.content) sink = sink ^ static_cast<unsigned char>(b);
    (void)sink;
  }
  for (const std::string_view item : record.strings) {
    FUZZ_CHECK(item.data() >= reinterpret_cast<const char*>(data) &&
                   item.data() + item.size() <= reinterpret_cast<const char*>(data) + size,
               "a string item outside the payload");
  }
  const std::string first = summary_of(record);
  decode::event_record again;
  FUZZ_CHECK(decoder.decode(payload, again).ok(), "a second decode failed");
  FUZZ_CHECK(summary_of(again) == first, "a second decode gave a different record");
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: index JSON files (host/trial/index_json.cpp, simdjson On-Demand). The input
// is one index file. It parses, or fails with data_loss and a message; a parsed index names an
// event file when it lists tensors, every name lies inside the name arena and every shape's dims
// inside the dims array. The padded and unpadded entry points, and a parser reused after any
// earlier input, give the same result.
#include <cstdint>
#include <string>
#include <vector>

#include "host/trial/index_json.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace trialstat;
using trialstat::trial::detail::index_json_padding_bytes;
using trialstat::trial::detail::index_json_parser;
using trialstat::trial::detail::parsed_index;

namespace {

std::string summary_of(const parsed_index& p) {
  std::string s = p.event_file_name + '|' + std::to_string(p.mode ? static_cast<int>(*p.mode) : -1) +
                  '|' + std::to_string(p.mode_step.value_or(-1)) + '|';
  for (const auto& t : p.tensors) {
    s += std::string(p.name(t.name_offset, t.name_length)) + ':' + std::to_string(t.start_bytes) +
         ':' + std::to_string(t.length_bytes) + ';';
  }
  for (const auto& sh : p.shapes) {
    s += std::string(p.name(sh.name_offset, sh.name_length)) + '[';
    for (uint32_t i = 0; i < sh.dims_count; ++i) s += std::to_string(p.dims[sh.dims_offset + i]) + ',';
    s += ']';
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  static index_json_parser reused;  // keeps its buffers across inputs, as a catalog load does
  parsed_index out;
  const status s = reused.parse_unpadded(text, out);
  if (!s.ok()) {
    FUZZ_CHECK(s.code() == error_code::data_loss || s.code() == error_code::out_of_memory, s.to_string());
    FUZZ_CHECK(!s.message().empty(), "an error without a message");
  } else {
    FUZZ_CHECK(out.tensors.empty() || out.has_event_file_name, "tensors without an event file name");
    for (const auto& t : out.tensors) {
      FUZZ_CHECK(uint64_t{t.name_offset} + t.name_length <= out.names.size(), "name outside the arena");
    }
    for (const auto& sh : out.shapes) {
      FUZZ_CHECK(uint64_t{sh.name_offset} + sh.name_length <= out.names.size(), "name outside the arena");
      FUZZ_CHECK(uint64_t{sh.dims_offset} + sh.dims_count <= out.dims.size(), "dims outside the array");
    }
    for (const int64_t d : out.dims) FUZZ_CHECK(d >= 0, "a negative dimension parsed");
  }

  // The padded entry point over an exactly padded buffer, with a fresh parser.
  std::vector<char> padded(size + index_json_padding_bytes, '\0');
  std::copy(text.begin(), text.end(), padded.begin());
  index_json_parser fresh;
  parsed_index out2;
  const status s2 = fresh.parse(std::string_view(padded.data(), size), padded.size(), out2);
  FUZZ_CHECK(s2.ok() == s.ok() && s2.code() == s.code(), "padded and unpadded parses disagree");
  if (s.ok()) {
    FUZZ_CHECK(summary_of(out) == summary_of(out2), "a reused parser gave a different index");
  } else {
    FUZZ_CHECK(s.message() == s2.message(), "a reused parser gave a different error");
  }
  return 0;
}

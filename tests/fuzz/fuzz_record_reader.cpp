// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: TFRecord framing (host/io/record_reader.cpp). The input is one whole event
// file. `record_scanner` must walk it to a clean end, a truncated tail or past every corrupt
// record with a message naming the file and the record's offset; every frame it returns lies
// inside the file, frames do not overlap, and `parse_record` at a frame's offset agrees with it.
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_check.hpp"
#include "trialstat/io/record_reader.hpp"

using namespace trialstat;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto file = fuzz::as_bytes(data, size);
  const std::string name = "fuzz.tfevents";
  io::record_scanner scanner(file, name);
  uint64_t end_of_last = 0;
  // Each call either returns a frame past the last one, moves the cursor forward past a corrupt
  // record, or stops: at most size + 1 calls.
  for (std::size_t calls = 0;; ++calls) {
    FUZZ_CHECK(calls <= size + 1, "record_scanner does not advance");
    const uint64_t before = scanner.offset_bytes();
    const auto frame = scanner.next();
    if (frame.has_value()) {
      FUZZ_CHECK(frame->offset_bytes == before, "frame not at the cursor");
      FUZZ_CHECK(frame->offset_bytes >= end_of_last, "frames overlap");
      FUZZ_CHECK(frame->offset_bytes + frame->size_bytes() <= size, "frame past the end of the file");
      FUZZ_CHECK(frame->payload.data() == file.data() + frame->offset_bytes + io::record_header_bytes,
                 "payload not inside its record");
      FUZZ_CHECK(scanner.offset_bytes() == frame->offset_bytes + frame->size_bytes(),
                 "cursor not after the record");
      const auto again = io::parse_record(file.subspan(frame->offset_bytes), frame->offset_bytes, name);
      FUZZ_CHECK(again.has_value() && again->payload.size() == frame->payload.size() &&
                     again->footer == frame->footer,
                 "parse_record disagrees with record_scanner");
      end_of_last = scanner.offset_bytes();
      continue;
    }
    const status problem = frame.error_status();
    if (problem.code() == error_code::end_of_stream) {
      FUZZ_CHECK(scanner.offset_bytes() == size, "end_of_stream before the end");
      break;
    }
    FUZZ_CHECK(fuzz::starts_with(problem.message(), name + ": record at byte " + std::to_string(before)),
               problem.message());
    if (problem.code() == error_code::truncated_record) {
      FUZZ_CHECK(scanner.offset_bytes() == before, "a truncated tail moved the cursor");
      break;
    }
    FUZZ_CHECK(problem.code() == error_code::data_loss, problem.message());
    FUZZ_CHECK(scanner.offset_bytes() > before, "a corrupt record did not move the cursor");
  }
  return 0;
}

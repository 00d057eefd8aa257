// SPDX-License-Identifier: Apache-2.0
// Entries of an event file without a usable index file: see event_file_scan.hpp.
#include "host/trial/event_file_scan.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "trialstat/decode/event_decoder.hpp"
#include "trialstat/io/record_reader.hpp"

namespace trialstat::trial::detail {

void scan_event_file_records(std::span<const std::byte> bytes, std::string_view rel, const step_file_name& name,
                             parsed_index& out, std::vector<load_warning>& warnings) {
  const auto warn = [&](error_code code, std::string message) {
    warnings.push_back({std::filesystem::path(rel), status(code, std::move(message))});
  };
  out.clear();
  io::record_scanner scanner(bytes, std::string(rel));
  decode::event_decoder decoder;
  decode::event_record record;
  bool first = true;
  bool step_mismatch_reported = false;
  for (;;) {
    const uint64_t before = scanner.offset_bytes();
    auto frame = scanner.next();
    if (!frame.has_value()) {
      const status s = frame.error_status();
      if (s.code() == error_code::end_of_stream) break;
      warn(s.code(),
           fmt::format("event file {} (step {}, worker {}), scanned because it has no usable "
                       "index: {}",
                       rel, name.step, name.worker, s.message()));
      if (s.code() == error_code::data_loss && scanner.offset_bytes() > before) continue;
      break;
    }
    const status decoded = decoder.decode(frame->payload, record);
    if (!decoded.ok()) {
      warn(decoded.code(),
           fmt::format("event file {} (step {}, worker {}): record at byte {}: {}; record ignored",
                       rel, name.step, name.worker, frame->offset_bytes, decoded.message()));
      continue;
    }
    if (first) {
      first = false;
      out.mode = record.has_mode ? record.mode : trialstat::mode::global;
      out.mode_step = record.has_mode ? record.mode_step : record.step;
    }
    if (record.step != name.step && !step_mismatch_reported) {
      step_mismatch_reported = true;
      warn(error_code::data_loss,
           fmt::format("event file {}: record at byte {} has Event.step {} but the file name "
                       "says step {}; the file name's step is used",
                       rel, frame->offset_bytes, record.step, name.step));
    }
    out.add_tensor(record.tag, frame->offset_bytes, frame->size_bytes());
  }
}

}  // namespace trialstat::trial::detail

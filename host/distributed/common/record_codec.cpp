// SPDX-License-Identifier: Apache-2.0
// Step messages between MPI ranks: a header (magic, step, record count), then each record as
// stats/record_codec.hpp writes it.
#include "trialstat/distributed/record_codec.hpp"

#include <cstring>

#include <fmt/format.h>

#include "trialstat/stats/record_codec.hpp"

namespace trialstat::distributed {
namespace {

constexpr uint32_t step_magic = 0x54535350;  // "TSSP"

template <typename T>
void put(std::vector<std::byte>& out, const T& value) {
  const std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

/// Appends the message for `step` to `out` (what pack_step writes).
void write_step(int64_t step, std::span<const stats::statistics_record> records, std::vector<std::byte>& out) {
  put(out, step_magic);
  put(out, step);
  put(out, static_cast<uint64_t>(records.size()));
  for (const auto& r : records) stats::append_record(r, out);
}

}  // namespace

void pack_step(int64_t step, std::span<const stats::statistics_record> records, std::vector<std::byte>& out) {
  out.clear();
  write_step(step, records, out);
}

void append_step(int64_t step, std::span<const stats::statistics_record> records, std::vector<std::byte>& batch) {
  const std::size_t at = batch.size();
  uint64_t length = 0;  // filled in once the message is written
  batch.resize(at + sizeof length);
  write_step(step, records, batch);
  length = batch.size() - at - sizeof length;
  std::memcpy(batch.data() + at, &length, sizeof length);
}

result<std::span<const std::byte>> next_batched_step(std::span<const std::byte> batch, std::size_t& at) {
  uint64_t length = 0;
  if (at > batch.size() || batch.size() - at < sizeof length) {
    return status(error_code::data_loss, fmt::format("step batch of {} bytes: cut short at byte {}", batch.size(), at));
  }
  std::memcpy(&length, batch.data() + at, sizeof length);
  if (batch.size() - at - sizeof length < length) {
    return status(error_code::data_loss, fmt::format("step batch of {} bytes: a step of {} bytes at byte {} runs past "
                                                     "its end", batch.size(), length, at));
  }
  const auto step = batch.subspan(at + sizeof length, static_cast<std::size_t>(length));
  at += sizeof length + static_cast<std::size_t>(length);
  return step;
}

result<unpacked_step> unpack_step(std::span<const std::byte> bytes) {
  uint32_t magic = 0;
  unpacked_step out;
  uint64_t count = 0;
  constexpr std::size_t header_bytes = sizeof magic + sizeof out.step + sizeof count;
  if (bytes.size() >= header_bytes) {
    std::memcpy(&magic, bytes.data(), sizeof magic);
    std::memcpy(&out.step, bytes.data() + sizeof magic, sizeof out.step);
    std::memcpy(&count, bytes.data() + sizeof magic + sizeof out.step, sizeof count);
  }
  if (bytes.size() < header_bytes || magic != step_magic || count > bytes.size()) {
    return status(error_code::data_loss,
                  fmt::format("step message of {} bytes: bad header (magic {:#x})", bytes.size(), magic));
  }
  out.records.resize(count);
  std::size_t at = header_bytes;
  bool ok = true;
  for (auto& r : out.records) {
    if (!(ok = stats::read_record(bytes, at, r))) break;
  }
  if (!ok || at != bytes.size()) {
    return status(error_code::data_loss,
                  fmt::format("step message of {} bytes for step {}: cut short or malformed", bytes.size(),
                              out.step));
  }
  return out;
}

}  // namespace trialstat::distributed

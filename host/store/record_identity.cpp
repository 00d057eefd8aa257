// SPDX-License-Identifier: Apache-2.0
#include "host/store/record_identity.hpp"

#include <charconv>

#include "trialstat/plan/read_plan.hpp"

namespace trialstat::store::detail {

status identity_cache::probe() {
  for (const trial::tensor_entry& entry : trial_.entries()) {
    if (!entry.raw && entry.reductions.empty()) continue;
    const trial::file_id file = entry.raw ? entry.raw->event_file : entry.reductions.front().location.event_file;
    auto known = trial_.source().identify(trial_.event_file_key(file));
    if (!known && known.error_status().code() == error_code::invalid_argument) return known.error_status();
    files_.emplace(file, known ? *known : std::nullopt);
    return status::success();
  }
  return status::success();
}

std::optional<row_identity> identity_cache::of(const trial::tensor_entry& entry,
                                               const stats::statistics_request& request) {
  row_identity out;
  if (!of(entry, request, out)) return std::nullopt;
  return out;
}

bool identity_cache::of(const trial::tensor_entry& entry, const stats::statistics_request& request,
                        row_identity& out) {
  out.ranges.clear();
  out.previous.clear();
  std::optional<trial::file_id> file;
  plan::for_each_needed_record(entry, request, [&](const trial::record_location& at) {
    if (!out.ranges.empty()) out.ranges.push_back(';');
    char text[48];  // "start+length"
    char* end = std::to_chars(text, text + 20, at.start_bytes).ptr;
    *end++ = '+';
    end = std::to_chars(end, text + sizeof text, at.length_bytes).ptr;
    out.ranges.append(text, static_cast<std::size_t>(end - text));
    file = at.event_file;
  });
  if (!file) return false;
  auto it = files_.find(*file);
  if (it == files_.end()) {
    auto known = trial_.source().identify(trial_.event_file_key(*file));
    it = files_.emplace(*file, known ? *known : std::nullopt).first;
  }
  if (!it->second) return false;
  out.event_file.assign(trial_.event_file_key(*file));
  out.file_size_bytes = it->second->size_bytes;
  out.file_version.assign(it->second->version);
  return true;
}

uint64_t identity_hash(const row_identity& identity) noexcept {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64
  const auto add = [&](std::string_view text) {
    for (const char c : text) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3ULL;
    }
  };
  char size[24];
  const char* const size_end = std::to_chars(size, size + sizeof size, identity.file_size_bytes).ptr;
  add(identity.event_file);
  add(":");
  add(identity.ranges);
  add(":");
  add(std::string_view(size, static_cast<std::size_t>(size_end - size)));
  add(":");
  add(identity.file_version);
  return hash;
}

void append_previous_item(std::string& out, int64_t step, uint64_t hash) {
  char text[48];  // "step:" and 16 hex digits, without fmt's parsing of a format (once per row)
  char* end = std::to_chars(text, text + 24, step).ptr;
  *end++ = ':';
  static constexpr char digits[] = "0123456789abcdef";
  for (int shift = 60; shift >= 0; shift -= 4) *end++ = digits[(hash >> shift) & 0xf];
  out.append(text, static_cast<std::size_t>(end - text));
}

}  // namespace trialstat::store::detail

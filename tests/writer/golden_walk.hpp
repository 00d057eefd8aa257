// SPDX-License-Identifier: Apache-2.0
// Test helpers for tests/writer: walk a golden smdebug trial's index files and read the raw
// record bytes they point at, and decode records with the generated protobuf classes (an
// implementation independent of both the encoder and the decoder under test).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "event.pb.h"

namespace trialstat::testing {

inline std::vector<std::byte> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::transform(chars.begin(), chars.end(), out.begin(), [](char c) { return std::byte(c); });
  return out;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// Every file under `root` (recursively), relative to it, sorted.
inline std::vector<std::filesystem::path> list_files(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) out.push_back(std::filesystem::relative(e.path(), root));
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The index files of a trial (relative paths), sorted (= by global step, then worker).
inline std::vector<std::filesystem::path> index_files(const std::filesystem::path& trial) {
  std::vector<std::filesystem::path> out;
  for (const auto& p : list_files(trial)) {
    if (p.begin()->string() == "index" && p.extension() == ".json") out.push_back(p);
  }
  return out;
}

/// Global step from "<S12>_<worker>.json".
inline int64_t step_of(const std::filesystem::path& index_file) {
  return std::stoll(index_file.filename().string().substr(0, 12));
}
inline std::string worker_of(const std::filesystem::path& index_file) {
  const std::string name = index_file.stem().string();
  return name.substr(13);
}

/// A decoded golden record: the framing-stripped payload parsed with the generated classes.
struct proto_record {
  smdebug::Event event;
  std::vector<std::byte> bytes;  ///< the whole record, framing included
};

inline bool parse_proto_record(std::vector<std::byte> bytes, proto_record& out) {
  if (bytes.size() < 16) return false;
  out.bytes = std::move(bytes);
  return out.event.ParseFromArray(out.bytes.data() + 12, static_cast<int>(out.bytes.size() - 16));
}

}  // namespace trialstat::testing

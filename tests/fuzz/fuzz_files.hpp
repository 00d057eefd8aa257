// SPDX-License-Identifier: Apache-2.0
// Files for the fuzz targets and the seed generator: a scratch folder removed at exit, and a
// whole file read as bytes.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

namespace trialstat::fuzz {

/// @brief A new empty folder `<temp>/<prefix>XXXXXX`, removed (with its contents) when the
/// process exits normally. The empty path when it cannot be created.
inline std::filesystem::path make_scratch_folder(const std::string& prefix) {
  static std::vector<std::filesystem::path> created;
  std::string templ = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (mkdtemp(templ.data()) == nullptr) return {};
  if (created.empty()) {
    std::atexit([] {
      std::error_code ec;
      for (const auto& p : created) std::filesystem::remove_all(p, ec);
    });
  }
  created.emplace_back(templ);
  return created.back();
}

/// @brief The whole file as bytes (empty when it cannot be read).
inline std::vector<std::byte> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

}  // namespace trialstat::fuzz

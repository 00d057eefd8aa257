// SPDX-License-Identifier: Apache-2.0
#include "host/io/local_source.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trialstat/io/file_reader.hpp"

namespace trialstat::io::detail {

namespace fs = std::filesystem;

std::string local_source::display_name(std::string_view key) const { return (root_ / key).string(); }

status local_source::check_root() const {
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) {
    return status(error_code::not_found,
                  fmt::format("trial folder {} does not exist or is not a directory", location_));
  }
  return status::success();
}

status local_source::list(std::string_view sub, std::string_view start_after,
                          std::vector<object_info>& out) const {
  out.clear();
  const fs::path dir = root_ / sub;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    // Absent is an empty listing; a folder that cannot be looked at is an error, not empty.
    if (!ec || ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
      return status::success();
    }
    return status(error_code::io_error, fmt::format("cannot access {}: {}", dir.string(), ec.message()));
  }
  const std::string dir_string = dir.string();
  fs::recursive_directory_iterator it(dir, ec);
  if (ec) {
    return status(error_code::io_error, fmt::format("cannot list {}: {}", dir_string, ec.message()));
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    const std::string& full = it->path().native();
    if (full.size() <= dir_string.size()) continue;
    std::string key(sub);
    key.append(full, dir_string.size(), std::string::npos);
    if (!start_after.empty() && key <= start_after) continue;
    out.push_back({std::move(key), 0});  // no stat per file: sizes come from object_size
  }
  if (ec) {
    return status(error_code::io_error, fmt::format("cannot list {}: {}", dir_string, ec.message()));
  }
  std::sort(out.begin(), out.end(), [](const object_info& a, const object_info& b) { return a.key < b.key; });
  return status::success();
}

result<uint64_t> local_source::read_object(std::string_view key, std::vector<std::byte>& out,
                                           uint64_t max_bytes) const {
  return read_file(root_ / key, out, max_bytes);
}

result<std::optional<uint64_t>> local_source::object_size(std::string_view key) const {
  std::error_code ec;
  const auto size = fs::file_size(root_ / key, ec);
  if (ec == std::errc::no_such_file_or_directory) return std::optional<uint64_t>();
  if (ec) {
    return status(error_code::io_error,
                  fmt::format("{}: cannot stat: {}", display_name(key), ec.message()));
  }
  return std::optional<uint64_t>(static_cast<uint64_t>(size));
}

result<std::unique_ptr<object_reader>> local_source::open(std::string_view key) const {
  auto file = file_reader::open(root_ / key);
  if (!file) return file.error_status();
  return std::unique_ptr<object_reader>(std::make_unique<file_reader>(std::move(*file)));
}

}  // namespace trialstat::io::detail

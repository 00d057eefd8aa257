// SPDX-License-Identifier: Apache-2.0
/// @file file_reader.hpp
/// @brief Reading byte ranges of local files (the "source" stage of DESIGN.md for local trials).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "trialstat/io/object_reader.hpp"
#include "trialstat/status.hpp"

namespace trialstat::io {

/// @brief A read-only memory mapping of a whole file followed by at least
/// `record_padding_bytes` zero bytes (page-granular). The bytes are the page cache's own: no
/// copy is made. Move-only; unmapped on destruction.
///
/// A mapped file that another process truncates while it is mapped makes reads of the lost pages
/// fault (SIGBUS): map only files that are not rewritten in place (smdebug appends and renames,
/// never truncates); live readers use `file_reader::read_at` instead.
class mapped_bytes {
 public:
  mapped_bytes() = default;
  mapped_bytes(mapped_bytes&& other) noexcept;
  mapped_bytes& operator=(mapped_bytes&& other) noexcept;
  mapped_bytes(const mapped_bytes&) = delete;
  mapped_bytes& operator=(const mapped_bytes&) = delete;
  ~mapped_bytes();

  /// @brief The file's bytes (`size_bytes()` of them); the padding follows `data() + size`.
  [[nodiscard]] const std::byte* data() const noexcept { return data_; }
  /// @brief The file size in bytes when it was mapped.
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_bytes_; }
  [[nodiscard]] explicit operator bool() const noexcept { return data_ != nullptr; }
  /// @brief Unmap now (no-op when empty).
  void reset() noexcept;

 private:
  friend class file_reader;
  mapped_bytes(const std::byte* data, std::size_t mapped_bytes_total, std::size_t size_bytes)
      : data_(data), mapped_total_(mapped_bytes_total), size_bytes_(size_bytes) {}
  const std::byte* data_ = nullptr;
  std::size_t mapped_total_ = 0;  // file pages + padding pages
  std::size_t size_bytes_ = 0;
};

/// @brief An open local file read with pread (thread-safe: no shared cursor): the local
/// implementation of `object_reader`.
class file_reader final : public object_reader {
 public:
  /// @brief Open `path` read-only. Errors: io_error (missing, unreadable), naming the path.
  [[nodiscard]] static result<file_reader> open(const std::filesystem::path& path);

  file_reader(file_reader&& other) noexcept;
  file_reader& operator=(file_reader&& other) noexcept;
  file_reader(const file_reader&) = delete;
  file_reader& operator=(const file_reader&) = delete;
  ~file_reader() override;

  /// @brief File size in bytes at open time (call `refresh_size` for a growing file).
  [[nodiscard]] uint64_t size_bytes() const noexcept override { return size_bytes_; }
  /// @brief Re-read the size of a file that may have grown (live trials). Errors: io_error.
  [[nodiscard]] status refresh_size() override;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  /// @brief Read exactly `out.size()` bytes at `offset_bytes`.
  /// Errors: truncated_record when the file ends first (names path, offset and lengths);
  /// io_error when the OS read fails.
  [[nodiscard]] status read_at(uint64_t offset_bytes, std::span<std::byte> out) const override;
  [[nodiscard]] std::string display_name() const override { return path_.string(); }
  [[nodiscard]] const file_reader* local_file() const noexcept override { return this; }

  /// @brief Map the whole file (`size_bytes()` at open time) read-only, pages populated up
  /// front (MAP_POPULATE), followed by zeroed padding (see `mapped_bytes`). Errors: io_error
  /// naming the path when the OS refuses the mapping (e.g. out of address space).
  [[nodiscard]] result<mapped_bytes> map_all() const;

 private:
  file_reader(int fd, uint64_t size_bytes, std::filesystem::path path)
      : fd_(fd), size_bytes_(size_bytes), path_(std::move(path)) {}
  int fd_ = -1;
  uint64_t size_bytes_ = 0;
  std::filesystem::path path_;
};

/// @brief Read a whole file into `out` (resized to the file size + `record_padding_bytes`, the
/// padding zeroed). Returns the file size in bytes. Errors: io_error.
[[nodiscard]] result<uint64_t> read_file(const std::filesystem::path& path,
                                         std::vector<std::byte>& out);

}  // namespace trialstat::io

// SPDX-License-Identifier: Apache-2.0
/// @file file_reader.hpp
/// @brief Reading byte ranges of local files (the "source" stage of DESIGN.md for local trials).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/io/object_reader.hpp"
#include "trialstat/status.hpp"

namespace trialstat::io {

/// @brief How many guarded mappings may exist at once (process-wide).
inline constexpr std::size_t mapped_guard_slots = 256;

/// @brief A read-only memory mapping of a whole file followed by at least
/// `record_padding_bytes` zero bytes (page-granular). The bytes are the page cache's own: no
/// copy is made. Move-only; unmapped on destruction.
///
/// A mapped file that another process truncates while it is mapped makes reads of the lost pages
/// fault (SIGBUS). Every mapping is guarded: a process-wide SIGBUS handler (installed on the
/// first mapping, chaining to any previous handler for faults elsewhere) replaces a lost page of
/// a live mapping with zeros and marks the mapping `damaged()`; callers check it after using the
/// bytes and discard what they computed from them. Live readers use `file_reader::read_at`.
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
  /// @brief Whether a read of the mapping faulted because the file shrank after it was mapped:
  /// the lost pages then read as zeros, so anything computed from them must be discarded.
  [[nodiscard]] bool damaged() const noexcept;

 private:
  friend class file_reader;
  mapped_bytes(const std::byte* data, std::size_t mapped_bytes_total, std::size_t size_bytes, int guard)
      : data_(data), mapped_total_(mapped_bytes_total), size_bytes_(size_bytes), guard_(guard) {}
  const std::byte* data_ = nullptr;
  std::size_t mapped_total_ = 0;  // file pages + padding pages
  std::size_t size_bytes_ = 0;
  int guard_ = -1;                // slot in the SIGBUS guard's table
};

/// @brief An open local file read with pread (thread-safe: no shared cursor): the local
/// implementation of `object_reader`.
class file_reader final : public object_reader {
 public:
  /// @brief Open `path` read-only without blocking (O_NONBLOCK: a FIFO never hangs the open).
  /// Errors: io_error naming the path when it is missing, unreadable, or not a regular file
  /// (a FIFO, a folder, a device).
  [[nodiscard]] static result<file_reader> open(const std::filesystem::path& path);
  /// @brief `open` of `name` (one path component, or a relative path) inside the folder open
  /// as `dir_fd` (openat: the kernel looks up only `name`, not the whole path from the root,
  /// which is what reading many small files of one folder costs). `path` is the file's full
  /// path, used in messages only. Errors: as `open`.
  [[nodiscard]] static result<file_reader> open_at(int dir_fd, const char* name, std::filesystem::path path);

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
  /// front (MAP_POPULATE), followed by zeroed padding, guarded against truncation (see
  /// `mapped_bytes`). Errors: io_error naming the path when the OS refuses the mapping (e.g. out
  /// of address space) or every guard slot (`mapped_guard_slots`) is in use: read it instead.
  [[nodiscard]] result<mapped_bytes> map_all() const;

 private:
  // Adopts the descriptor it opened when a read without fstat was not conclusive.
  friend result<uint64_t> read_file_at(int dir_fd, const char* name, const std::filesystem::path& root,
                                       std::string_view key, std::vector<std::byte>& out, uint64_t max_bytes);
  file_reader(int fd, uint64_t size_bytes, std::filesystem::path path)
      : fd_(fd), size_bytes_(size_bytes), path_(std::move(path)) {}
  int fd_ = -1;
  uint64_t size_bytes_ = 0;
  std::filesystem::path path_;
};

/// @brief Size cap for whole-file reads of JSON metadata (index, collections, rule configs):
/// smdebug writes them in kilobytes; anything larger is refused rather than read whole.
inline constexpr uint64_t json_file_limit_bytes = uint64_t{64} << 20;

/// @brief Read a whole regular file into `out` (resized to the file size +
/// `record_padding_bytes`, the padding zeroed). Returns the file size in bytes.
/// Errors: io_error (as `file_reader::open`, or the read failing); out_of_memory naming the path,
/// the size and the limit when the file is larger than `max_bytes`, or the allocation fails.
[[nodiscard]] result<uint64_t> read_file(const std::filesystem::path& path,
                                         std::vector<std::byte>& out,
                                         uint64_t max_bytes = UINT64_MAX);

/// @brief `read_file` of the file `name` in the folder open as `dir_fd`, for many small files of
/// one listing (index files: ~1 KB each, where the open/read/close system calls are most of the
/// cost). `out` is a buffer reused from call to call: it is grown, never shrunk, so afterwards
/// `out.size() >= size + record_padding_bytes` and the `record_padding_bytes` after the content
/// are zero. The size comes from the read itself when the file ends before the buffer does (a
/// short read of a regular file is its end), sparing an fstat per file; a read that fills the
/// buffer, returns nothing or fails falls back to fstat, which refuses anything that is not a
/// regular file (the file is opened with O_NONBLOCK, so a FIFO never blocks). `root / key` names
/// the file in messages (built only for them). Errors: as `read_file`.
[[nodiscard]] result<uint64_t> read_file_at(int dir_fd, const char* name, const std::filesystem::path& root,
                                            std::string_view key, std::vector<std::byte>& out,
                                            uint64_t max_bytes = UINT64_MAX);

/// @brief `read_file` into a string (no padding), for text parsed by nlohmann::json and the like.
/// Errors: as `read_file`.
[[nodiscard]] status read_text_file(const std::filesystem::path& path, std::string& out,
                                    uint64_t max_bytes = json_file_limit_bytes);

}  // namespace trialstat::io

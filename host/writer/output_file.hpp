// SPDX-License-Identifier: Apache-2.0
// Private to trialstat_writer: a file written as `<final>.tmp` through a write buffer and
// renamed to `<final>` on commit (smdebug's writers do the same, FORMAT §1), so a reader never
// sees a partial file under its final name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "trialstat/status.hpp"

namespace trialstat::writer::detail {

class output_file {
 public:
  output_file() = default;
  output_file(output_file&& other) noexcept;
  output_file& operator=(output_file&& other) noexcept;
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  /// Discards an uncommitted file (deletes the .tmp).
  ~output_file();

  /// @brief Create the parent folders and open `<final_path>.tmp` for writing (truncating).
  /// Errors: io_error naming the path and the OS reason.
  [[nodiscard]] static result<output_file> create(std::filesystem::path final_path,
                                                  std::size_t buffer_bytes);

  /// @brief Append bytes. Pieces of at least the buffer size bypass the buffer.
  /// Errors: io_error naming the .tmp path and byte offset.
  [[nodiscard]] status append(std::span<const std::byte> bytes);
  [[nodiscard]] status append(std::string_view text) {
    return append(std::as_bytes(std::span<const char>(text.data(), text.size())));
  }

  /// @brief Bytes appended so far (the offset of the next byte).
  [[nodiscard]] uint64_t size_bytes() const noexcept { return size_bytes_; }
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  [[nodiscard]] const std::filesystem::path& final_path() const noexcept { return final_path_; }

  /// @brief Flush, close and rename `.tmp` → final (replacing an existing file).
  /// Errors: io_error naming the file; the .tmp is then deleted.
  [[nodiscard]] status commit();

  /// @brief Close and delete the .tmp file (no-op when nothing is open).
  void discard() noexcept;

 private:
  [[nodiscard]] status flush_buffer();
  [[nodiscard]] status write_all(const std::byte* data, std::size_t n);
  [[nodiscard]] std::filesystem::path tmp_path() const;

  int fd_ = -1;
  std::filesystem::path final_path_;
  std::vector<std::byte> buffer_;
  std::size_t buffered_ = 0;
  uint64_t size_bytes_ = 0;
};

/// @brief Write a whole small file through `<path>.tmp` + rename. Errors: io_error.
[[nodiscard]] status write_file_atomically(const std::filesystem::path& path,
                                           std::string_view contents);

}  // namespace trialstat::writer::detail

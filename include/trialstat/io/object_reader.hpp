// SPDX-License-Identifier: Apache-2.0
/// @file object_reader.hpp
/// @brief Byte-range reads of one object of a trial — a local event file or an S3 object — the
/// read half of the source stage (DESIGN.md §1). Everything above the source stage reads event
/// files through this interface and never learns where the bytes live.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "trialstat/status.hpp"

namespace trialstat::io {

class file_reader;

/// @brief Tail padding added after every buffer of whole files or objects (`read_file`,
/// `trial_source::read_object`), so wide or varint loads may run past the end of the payload
/// without touching unmapped memory (simdjson's rule).
inline constexpr std::size_t record_padding_bytes = 64;

/// @brief A byte range `[offset_bytes, offset_bytes + length_bytes)` of one object.
struct byte_range {
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
};

/// @brief Most bytes one read of ranges may ask for (their lengths added): 1 TiB. Lengths come
/// from index files; a sum above this (or one that would wrap) is a corrupt index, not a read.
inline constexpr uint64_t max_ranges_total_bytes = uint64_t{1} << 40;

/// @brief The lengths of `ranges` added, checked: data_loss naming `name` (the object) when
/// they add up to more than max_ranges_total_bytes, so nothing is allocated or fetched for it.
[[nodiscard]] result<uint64_t> total_range_bytes(std::span<const byte_range> ranges, std::string_view name);

/// @brief A buffer a source hands over with the bytes of a read (its own receive buffer) instead
/// of copying them into the caller's; given back to the source when destroyed. Move-only.
class taken_bytes {
 public:
  /// Gives `data` back to its source (`release(data)`); called once, from any thread.
  using release_fn = std::function<void(std::byte*)>;

  taken_bytes() = default;
  /// `capacity_bytes` writable bytes at `data`, owned until `release` takes them back.
  taken_bytes(std::byte* data, std::size_t capacity_bytes, release_fn release)
      : data_(data, std::move(release)), capacity_bytes_(capacity_bytes) {}

  [[nodiscard]] std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t capacity_bytes() const noexcept { return capacity_bytes_; }
  explicit operator bool() const noexcept { return data_ != nullptr; }
  /// Give the buffer back now.
  void reset() noexcept {
    data_.reset();
    capacity_bytes_ = 0;
  }

 private:
  std::unique_ptr<std::byte, release_fn> data_{nullptr, release_fn()};
  std::size_t capacity_bytes_ = 0;
};

/// @brief One open object of a trial, read by byte ranges. Implementations are thread-safe for
/// concurrent reads (no shared cursor).
class object_reader {
 public:
  virtual ~object_reader() = default;

  /// @brief Name used in messages: the local path, or `s3://bucket/key`.
  [[nodiscard]] virtual std::string display_name() const = 0;

  /// @brief Object size in bytes when it was opened (local: fstat; S3: the listing or a HEAD).
  [[nodiscard]] virtual uint64_t size_bytes() const noexcept = 0;

  /// @brief Read exactly `out.size()` bytes at `offset_bytes`.
  /// Errors: truncated_record when the object ends first (names the object, offset and
  /// lengths); io_error when the read fails (after the S3 retries, for S3 objects).
  [[nodiscard]] virtual status read_at(uint64_t offset_bytes, std::span<std::byte> out) const = 0;

  /// @brief Read many ranges at once, back to back into `out`: range i lands at the sum of the
  /// lengths of ranges 0..i-1. `available[i]` receives how many bytes of range i the object has
  /// (less than its length when the object ends first; the rest of its slot is left as is).
  /// `out` holds at least the sum of the lengths; `available.size() == ranges.size()`.
  /// S3 objects fetch the ranges concurrently (coalesced, from the read-ahead when one runs);
  /// local files read them one by one. Errors: io_error when a read fails (after retries).
  [[nodiscard]] virtual status read_ranges(std::span<const byte_range> ranges, std::byte* out,
                                           std::span<uint64_t> available) const;

  /// @brief The bytes of `ranges` in a buffer the source hands over, without a copy, when it
  /// already holds them laid out as read_ranges would write them (the S3 read-ahead's receive
  /// buffer of exactly this read). The buffer holds at least the sum of the lengths plus
  /// `padding_bytes` writable bytes after them; `available` is set as by read_ranges. Returns
  /// nullopt when the source has no such buffer (local files, reads that were not fetched ahead,
  /// or whose coalesced parts include gaps between ranges, which stay fetched for read_ranges to
  /// copy): the caller then calls read_ranges. Errors: none here (a fetch-ahead that failed also
  /// gives nullopt, and read_ranges fetches again and reports what still fails).
  [[nodiscard]] virtual std::optional<taken_bytes> take_ranges(std::span<const byte_range> ranges,
                                                               std::size_t padding_bytes,
                                                               std::span<uint64_t> available) const {
    (void)ranges, (void)padding_bytes, (void)available;
    return std::nullopt;
  }

  /// @brief Re-read the size of an object that may have grown or appeared (live trials).
  /// Errors: io_error.
  [[nodiscard]] virtual status refresh_size() { return status::success(); }

  /// @brief The local file behind this reader (it can be memory-mapped), or nullptr for remote
  /// objects.
  [[nodiscard]] virtual const file_reader* local_file() const noexcept { return nullptr; }
};

}  // namespace trialstat::io

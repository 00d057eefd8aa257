// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: one process's share of a catalog load done by a group of processes
// (catalog_options::group, issue 10). A share is the outcome of reading and parsing a contiguous
// slice of the sorted index listing, as bytes that the group exchanges; every process then
// applies every share in listing order, as if it had parsed all files itself. Not a public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "host/trial/index_json.hpp"
#include "trialstat/io/trial_source.hpp"
#include "trialstat/status.hpp"

namespace trialstat::trial::detail {

/// @brief What reading and parsing one index file gave: its parsed form (in a `parsed_index`
/// beside it), or the problem.
struct index_outcome {
  enum class kind : uint8_t { parsed = 0, read_failed = 1, parse_failed = 2 };
  kind what = kind::parsed;
  status problem;  ///< when not parsed: the source's or the parser's status (message without the file name)
};

/// @brief The slice [first, first + count) of `files` listed files that process `rank` of `size`
/// reads: contiguous, sizes differing by at most one.
struct share_bounds {
  std::size_t first = 0;
  std::size_t count = 0;
};
[[nodiscard]] share_bounds share_of(std::size_t files, int rank, int size) noexcept;

/// @brief FNV-1a over the keys of a listing, to check that the processes of a group listed the
/// same files.
[[nodiscard]] uint64_t listing_fingerprint(std::span<const std::string> keys) noexcept;

/// @brief Writes a share: a header (the listing's size and fingerprint, the slice), then one
/// outcome per file of the slice, in order.
class share_writer {
 public:
  share_writer(std::size_t listed, uint64_t fingerprint, share_bounds slice);
  /// @brief Append one file's outcome (`parsed` is read only when it was parsed).
  void add(const index_outcome& outcome, const parsed_index& parsed);
  /// @brief The bytes (the writer is empty afterwards).
  [[nodiscard]] std::vector<std::byte> take() noexcept { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

/// @brief Reads a share written by `share_writer`. Errors are data_loss naming what is wrong
/// (a share from a process that listed other files; truncated or malformed bytes).
class share_reader {
 public:
  /// @param bytes the share (must outlive the reader)
  /// @param listed, fingerprint this process's listing, which the share's must match
  /// @param expected the slice this share must cover
  [[nodiscard]] static result<share_reader> open(std::span<const std::byte> bytes, int from_rank, std::size_t listed,
                                                 uint64_t fingerprint, share_bounds expected);
  /// @brief The next file's outcome into `outcome` and, when parsed, `parsed` (cleared first).
  [[nodiscard]] status next(index_outcome& outcome, parsed_index& parsed);
  /// @brief Whether every byte was read (call after the slice's last file).
  [[nodiscard]] status finish() const;

 private:
  share_reader(std::span<const std::byte> bytes, int from_rank) : bytes_(bytes), rank_(from_rank) {}
  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
  int rank_ = 0;
};

/// @brief A listing share: what one process listed of a folder listed by the group
/// (`trial_source::list_share` with its rank), or the error it met, as bytes to exchange.
[[nodiscard]] std::vector<std::byte> write_listing_share(const status& listed,
                                                         std::span<const io::object_info> objects);
/// @brief Append the keys of listing share `bytes` (of rank `from_rank`) to `keys`.
/// @return the listing error that rank met (its message names the folder), or success;
///   data_loss when the bytes are not a listing share or are cut short.
[[nodiscard]] status read_listing_share(std::span<const std::byte> bytes, int from_rank,
                                        std::vector<std::string>& keys);

}  // namespace trialstat::trial::detail

// SPDX-License-Identifier: Apache-2.0
// Which requests fetch a set of byte ranges of one object: ranges closer than a gap are merged,
// and merged parts longer than a part size are split so that they are fetched in parallel.
// Plain arithmetic (overflow-checked), tested on its own. Internal to host/io.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/io/object_reader.hpp"

namespace trialstat::io::detail {

/// One request: `[offset_bytes, offset_bytes + length_bytes)` of the object.
struct coalesced_part {
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
};

/// A piece of requested range `range` that lies in part `part`: `length_bytes` bytes starting
/// `part_offset_bytes` into the part, which go `out_offset_bytes` into the caller's buffer
/// (ranges are laid out back to back there, as `object_reader::read_ranges` does).
struct range_slice {
  std::size_t range = 0;
  std::size_t part = 0;
  uint64_t part_offset_bytes = 0;
  uint64_t out_offset_bytes = 0;
  uint64_t length_bytes = 0;
};

struct coalesced_reads {
  std::vector<coalesced_part> parts;  ///< ascending by offset, disjoint
  std::vector<range_slice> slices;    ///< by range, then by offset within it
};

/// Plan the requests for `ranges` (any order, overlaps allowed; empty ranges get no slice; a
/// range whose end would pass 2^64 is cut at 2^64 - 1): ranges whose gap is at most
/// `gap_bytes` share a part; parts longer than `part_bytes` (> 0) are split.
[[nodiscard]] coalesced_reads coalesce_ranges(std::span<const byte_range> ranges, uint64_t gap_bytes,
                                              uint64_t part_bytes);

/// Copy the fetched parts into `out` along `plan.slices` and set `available[i]` to the bytes of
/// range i that were present: a part with fewer bytes than asked (`part_received[p]`, the object
/// ended) gives the range only its contiguous bytes from the start.
void scatter_parts(const coalesced_reads& plan, std::span<const std::byte* const> part_data,
                   std::span<const uint64_t> part_received, std::byte* out, std::span<uint64_t> available);

}  // namespace trialstat::io::detail

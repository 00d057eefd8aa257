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

/// Where part p starts in one buffer that holds the parts back to back: the lengths of parts
/// 0..p-1 added (one entry per part).
[[nodiscard]] std::vector<uint64_t> packed_part_offsets(const coalesced_reads& plan);

/// Whether the parts, back to back in one buffer (packed_part_offsets), are already the layout
/// `object_reader::read_ranges` writes: every slice's bytes sit at its `out_offset_bytes`. True
/// when the ranges ascend without overlap and no part spans a gap between two of them; such a
/// buffer can be handed to the reader as it is, without a copy.
[[nodiscard]] bool packed_parts_are_read_layout(const coalesced_reads& plan);

/// Copy the fetched parts into `out` along `plan.slices` and set `available[i]` to the bytes of
/// range i that were present: a part with fewer bytes than asked (`part_received[p]`, the object
/// ended) gives the range only its contiguous bytes from the start. With `out == nullptr` only
/// `available` is set (the parts already are the layout: packed_parts_are_read_layout).
void scatter_parts(const coalesced_reads& plan, std::span<const std::byte* const> part_data,
                   std::span<const uint64_t> part_received, std::byte* out, std::span<uint64_t> available);

}  // namespace trialstat::io::detail

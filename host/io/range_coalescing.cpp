// SPDX-License-Identifier: Apache-2.0
#include "host/io/range_coalescing.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

namespace trialstat::io::detail {
namespace {

constexpr uint64_t max_u64 = std::numeric_limits<uint64_t>::max();

uint64_t end_of(const byte_range& r) noexcept {
  return r.length_bytes > max_u64 - r.offset_bytes ? max_u64 : r.offset_bytes + r.length_bytes;
}

}  // namespace

coalesced_reads coalesce_ranges(std::span<const byte_range> ranges, uint64_t gap_bytes, uint64_t part_bytes) {
  coalesced_reads plan;
  part_bytes = std::max<uint64_t>(part_bytes, 1);
  std::vector<std::size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return ranges[a].offset_bytes < ranges[b].offset_bytes; });
  // Merge by gap.
  std::vector<coalesced_part> merged;
  for (const std::size_t i : order) {
    const byte_range& r = ranges[i];
    if (r.length_bytes == 0) continue;
    const uint64_t end = end_of(r);
    if (!merged.empty()) {
      coalesced_part& last = merged.back();
      const uint64_t last_end = last.offset_bytes + last.length_bytes;
      const uint64_t reach = gap_bytes > max_u64 - last_end ? max_u64 : last_end + gap_bytes;
      if (r.offset_bytes <= reach) {
        last.length_bytes = std::max(last_end, end) - last.offset_bytes;
        continue;
      }
    }
    merged.push_back({r.offset_bytes, end - r.offset_bytes});
  }
  // Split long parts.
  for (const coalesced_part& m : merged) {
    for (uint64_t done = 0; done < m.length_bytes; done += std::min(part_bytes, m.length_bytes - done)) {
      plan.parts.push_back({m.offset_bytes + done, std::min(part_bytes, m.length_bytes - done)});
    }
  }
  // Slices: each range over the parts that cover it.
  uint64_t out_offset = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const byte_range& r = ranges[i];
    const uint64_t end = end_of(r);
    uint64_t at = r.offset_bytes;
    // First part whose end is past `at`.
    auto p = std::partition_point(plan.parts.begin(), plan.parts.end(), [&](const coalesced_part& part) {
      return part.offset_bytes + part.length_bytes <= at;
    });
    while (at < end && p != plan.parts.end()) {
      const uint64_t part_end = p->offset_bytes + p->length_bytes;
      const uint64_t stop = std::min(end, part_end);
      plan.slices.push_back({i, static_cast<std::size_t>(p - plan.parts.begin()), at - p->offset_bytes,
                             out_offset + (at - r.offset_bytes), stop - at});
      at = stop;
      ++p;
    }
    out_offset += r.length_bytes;
  }
  return plan;
}

std::vector<uint64_t> packed_part_offsets(const coalesced_reads& plan) {
  std::vector<uint64_t> offsets(plan.parts.size());
  uint64_t at = 0;
  for (std::size_t p = 0; p < plan.parts.size(); ++p) {
    offsets[p] = at;
    at += plan.parts[p].length_bytes;
  }
  return offsets;
}

bool packed_parts_are_read_layout(const coalesced_reads& plan) {
  const std::vector<uint64_t> offsets = packed_part_offsets(plan);
  return std::all_of(plan.slices.begin(), plan.slices.end(), [&](const range_slice& s) {
    return offsets[s.part] + s.part_offset_bytes == s.out_offset_bytes;
  });
}

void scatter_parts(const coalesced_reads& plan, std::span<const std::byte* const> part_data,
                   std::span<const uint64_t> part_received, std::byte* out, std::span<uint64_t> available) {
  std::fill(available.begin(), available.end(), uint64_t{0});
  std::vector<bool> broken(available.size(), false);  // a range stops at its first short slice
  for (const range_slice& s : plan.slices) {
    if (broken[s.range]) continue;
    const uint64_t received = part_received[s.part];
    const uint64_t have = received > s.part_offset_bytes ? std::min(s.length_bytes, received - s.part_offset_bytes) : 0;
    if (have > 0 && out != nullptr) {
      std::memcpy(out + s.out_offset_bytes, part_data[s.part] + s.part_offset_bytes, static_cast<std::size_t>(have));
    }
    available[s.range] += have;
    if (have < s.length_bytes) broken[s.range] = true;
  }
}

}  // namespace trialstat::io::detail

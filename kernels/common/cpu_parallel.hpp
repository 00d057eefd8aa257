// SPDX-License-Identifier: Apache-2.0
/// @file cpu_parallel.hpp
/// @brief How the CPU twins split a segmented batch: every segment is cut into fixed-size chunks
/// of `cpu_chunk_elements` (independent of the thread count), the chunks of all segments form
/// one work list run with OpenMP, and each segment's chunk results are merged in chunk order.
/// Results therefore do not depend on OMP_NUM_THREADS (deterministic), and one list covers both
/// "many small tensors" and "one huge tensor".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/stats/backend.hpp"

namespace trialstat::kernels {

/// @brief Elements per block: converted to float64 once into a stack buffer (8 KiB, L1).
inline constexpr int64_t cpu_block_elements = 1024;
/// @brief Elements per chunk (the unit of parallel work): 64 blocks.
inline constexpr int64_t cpu_chunk_elements = 64 * cpu_block_elements;

/// @brief One chunk: elements [begin, begin + count) of segment `segment`.
struct cpu_work_item {
  int64_t segment = 0;
  int64_t begin = 0;
  int64_t count = 0;
};

/// @brief The chunk list of a batch: items of segment s are items[first[s] .. first[s+1]).
/// Empty segments get no item. Throws std::bad_alloc only (callers catch it).
struct cpu_work_plan {
  std::vector<cpu_work_item> items;
  std::vector<int64_t> first;  ///< [num_segments + 1]
};

[[nodiscard]] inline cpu_work_plan plan_cpu_chunks(std::span<const stats::segment> segments,
                                                   int64_t chunk_elements = cpu_chunk_elements) {
  cpu_work_plan plan;
  plan.first.resize(segments.size() + 1);
  std::size_t total = 0;
  for (const auto& s : segments) {
    total += static_cast<std::size_t>((s.num_elements + chunk_elements - 1) / chunk_elements);
  }
  plan.items.reserve(total);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    plan.first[i] = static_cast<int64_t>(plan.items.size());
    for (int64_t begin = 0; begin < segments[i].num_elements; begin += chunk_elements) {
      const int64_t left = segments[i].num_elements - begin;
      plan.items.push_back({static_cast<int64_t>(i), begin,
                            left < chunk_elements ? left : chunk_elements});
    }
  }
  plan.first[segments.size()] = static_cast<int64_t>(plan.items.size());
  return plan;
}

/// @brief Run body(i) for i in [0, n) on the OpenMP team (dynamic schedule: chunks differ in
/// cost when segments have different dtypes). body must not throw.
template <class Body>
void cpu_parallel_for(int64_t n, Body&& body) {
#if defined(_OPENMP)
  if (n > 1) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace trialstat::kernels

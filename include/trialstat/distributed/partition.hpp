// SPDX-License-Identifier: Apache-2.0
/// @file partition.hpp
/// @brief How the read plan of one trial is split across MPI ranks (issue 10): balanced by the
/// bytes each (step, worker) needs, by worker when the trial has enough workers for an even
/// split, else by contiguous step ranges (chunks, dealt round-robin) with a halo of earlier steps
/// for the pairwise statistics. Plain arithmetic, no MPI: every rank computes the same partition
/// from the same catalog and plan, so nothing is exchanged to agree on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/plan/read_plan.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::distributed {

/// @brief How a partition splits the work.
enum class split_kind : uint8_t {
  by_worker,  ///< each rank reads every step of its workers (no halo: history is per worker)
  by_steps,   ///< each rank reads every worker of its step chunks (plus each chunk's halo)
};

/// @brief A contiguous range of the visited steps, read by one rank.
struct step_chunk {
  std::size_t begin = 0;       ///< index into `partition::steps` of the first step
  std::size_t end = 0;         ///< one past the last
  /// First step index read only to rebuild pairwise history (≤ begin; == begin: no halo).
  std::size_t halo_begin = 0;
  int rank = 0;
};

/// @brief The split of one run.
struct partition {
  split_kind kind = split_kind::by_steps;
  int ranks = 1;
  std::vector<int64_t> steps;            ///< global steps visited, ascending
  std::vector<int> worker_rank;          ///< by_worker: rank per worker_id
  std::vector<step_chunk> chunks;        ///< by_steps: in step order, non-empty
  std::vector<uint64_t> rank_bytes;      ///< [ranks] bytes assigned (halo excluded)
  uint64_t halo_bytes = 0;               ///< bytes read again for halos (history tensors only)

  /// @brief Ranks whose records make up the step at index `i` (ascending): every rank that
  /// reads a worker for by_worker, the chunk's owner for by_steps.
  [[nodiscard]] std::vector<int> owners(std::size_t i) const;
  /// @brief The workers `rank` reads (by_worker; empty = every worker, for by_steps).
  [[nodiscard]] std::vector<trial::worker_id> workers_of(int rank) const;
  /// @brief max(rank_bytes) / mean(rank_bytes); 1 for a perfect split.
  [[nodiscard]] double imbalance() const noexcept;
};

/// @brief Longest-processing-time assignment of workers to ranks: workers by bytes descending
/// (ties: lower id first), each to the least-loaded rank (ties: lower rank).
/// @param worker_bytes [num_workers] bytes each worker's records need
/// @return [num_workers] rank per worker, each in [0, ranks). Deterministic.
[[nodiscard]] std::vector<int> assign_workers_by_bytes(std::span<const uint64_t> worker_bytes, int ranks);

/// @brief Split a sequence into `parts` contiguous ranges of about equal weight.
/// @param weights [n] weight of each element (bytes)
/// @return [parts + 1] non-decreasing boundaries, first 0, last n: part p is [b[p], b[p+1]).
///   Boundary p is placed where the running sum first reaches p·total/parts (the nearer side).
[[nodiscard]] std::vector<std::size_t> split_contiguous_by_weight(std::span<const uint64_t> weights,
                                                                  std::size_t parts);

/// @brief First step index a chunk [begin, end) must read so that every series (the saved step
/// indices of one tensor and worker that keeps history) has its `depth` last saved steps before
/// `begin` rebuilt before the chunk starts.
/// @param series each sorted ascending (step indices)
/// @return ≤ begin; begin when no series with a step in the chunk has one before it.
[[nodiscard]] std::size_t halo_begin(std::span<const std::vector<std::size_t>> series,
                                     std::size_t begin, std::size_t end, int depth);

/// @brief Options of `make_partition`.
struct partition_options {
  int ranks = 1;
  /// by_worker is chosen when it splits the bytes within this factor of even (max / mean).
  double worker_imbalance_limit = 1.10;
  /// by_steps: aim for chunks of at most this many bytes (more chunks: smaller records in flight
  /// on each rank, more halo reads); at least one chunk per rank.
  uint64_t chunk_bytes = uint64_t{256} << 20;
  std::optional<split_kind> force;       ///< tests and benchmarks
};

/// @brief The partition of `plan` over `trial` (steps in range of the plan and `options`,
/// as `pipeline::run_statistics` visits them).
/// @return the partition; errors: invalid_argument when ranks < 1.
[[nodiscard]] result<partition> make_partition(const trial::catalog& trial, const plan::read_plan& plan,
                                               const pipeline::pipeline_options& options,
                                               const partition_options& how);

/// @brief The global steps `run_statistics` visits for `plan` and `options` (every saved step
/// in both ranges), ascending.
[[nodiscard]] std::vector<int64_t> visited_steps(const trial::catalog& trial, const plan::read_plan& plan,
                                                 const pipeline::pipeline_options& options);

}  // namespace trialstat::distributed

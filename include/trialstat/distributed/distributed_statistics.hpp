// SPDX-License-Identifier: Apache-2.0
/// @file distributed_statistics.hpp
/// @brief `pipeline::run_statistics` over the ranks of an MPI job (issue 10): each rank computes
/// its share of the read plan (distributed/partition.hpp), sends rank 0 each step's records as
/// soon as they are computed, and rank 0 hands `on_step` every visited step in ascending order
/// with the records in the order one process gives them — so `trialstat stats` and `rules`
/// write byte-identical output for any number of ranks.
///
/// Memory on rank 0: one step's records per rank in flight (never the whole trial's). Other
/// ranks: their statistics stream plus the step messages not yet received by rank 0, at most
/// a few hundred MiB (`transport::send` waits beyond that).
#pragma once

#include <functional>
#include <string>

#include "trialstat/distributed/partition.hpp"
#include "trialstat/distributed/world.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"

namespace trialstat::distributed {

/// @brief Options of a distributed run.
struct distributed_options {
  /// How to split (`ranks` is taken from the transport).
  partition_options partitioning;
  /// A record whose event file the operating system refused to open or read (`io_error`) ends
  /// the run with that error instead of costing only its record: a rank cannot tell whether the
  /// file is unreadable for every rank or only for itself (a node with a stale mount), and a
  /// result with records silently missing must not end with exit 0.
  bool fail_on_unreadable_files = true;
  /// Called at once with a failure of this rank (e.g. the job's abort); when it returns, the
  /// run stops at the next step and returns the failure.
  std::function<void(const status&)> on_rank_failure;
  /// Rank 0: called once with the partition in words (`TRIALSTAT_MPI_VERBOSE` in tools).
  std::function<void(const std::string&)> describe;
};

/// @brief The statistics of `plan` over `trial`, computed by the ranks of `ranks` together. Every
/// rank calls it with the same catalog, plan and options. Only rank 0 calls `on_step`: for every
/// step `run_statistics` visits, ascending, with the same records in the same order.
/// @return this rank's counters (rank 0: its own reads); errors: a failure of this rank (the
///   statistics stream's, a transport error, a malformed message, an unreadable event file).
[[nodiscard]] result<pipeline::pipeline_counters> run_statistics_on(
    transport& ranks, const trial::catalog& trial, const plan::read_plan& plan,
    const pipeline::pipeline_options& options, const pipeline::step_callback& on_step,
    const distributed_options& how = {});

/// @brief Drop-in for `pipeline::run_statistics` in tools: one process (no MPI launcher) runs
/// `pipeline::run_statistics`; under MPI, `run_statistics_on(world(), ...)`, and a failure of
/// any rank ends the whole job with exit status 2 and that rank's message (`world().abort`).
/// `TRIALSTAT_MPI_SPLIT=workers|steps` forces the split and `TRIALSTAT_MPI_CHUNK_BYTES` sets
/// `partition_options::chunk_bytes` (tests and benchmarks); `TRIALSTAT_MPI_VERBOSE` prints the split.
[[nodiscard]] result<pipeline::pipeline_counters> run_statistics(const trial::catalog& trial,
                                                                 const plan::read_plan& plan,
                                                                 const pipeline::pipeline_options& options,
                                                                 const pipeline::step_callback& on_step);

}  // namespace trialstat::distributed

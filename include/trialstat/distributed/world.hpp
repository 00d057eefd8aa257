// SPDX-License-Identifier: Apache-2.0
/// @file world.hpp
/// @brief The processes of one `trialstat` job (issue 10): under `mpirun -np N` the MPI ranks,
/// otherwise one process. `transport` is what the distributed statistics need from MPI
/// (point-to-point messages to and from rank 0); `world()` is the process's own, backed by MPI
/// when the build has it and the process was started by an MPI launcher.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/status.hpp"

namespace trialstat::distributed {

/// @brief Ordered point-to-point messages between the ranks of a job. Messages from one rank to
/// another arrive in the order sent. Used from one thread only.
class transport {
 public:
  virtual ~transport() = default;
  [[nodiscard]] virtual int rank() const noexcept = 0;
  [[nodiscard]] virtual int size() const noexcept = 0;
  /// @brief Send `message` to rank `to` without waiting for it to be received; blocks only while
  /// more than a bounded number of bytes (a few hundred MiB) are still in flight from this rank.
  /// Errors: io_error when the transport failed.
  [[nodiscard]] virtual status send(int to, std::vector<std::byte> message) = 0;
  /// @brief The next message from rank `from` (waits for it).
  [[nodiscard]] virtual result<std::vector<std::byte>> receive(int from) = 0;
  /// @brief Wait until every message sent has been received.
  [[nodiscard]] virtual status flush() = 0;
};

/// @brief This process's place in the job and its transport.
class process_world : public transport {
 public:
  /// @brief Whether `init` initialised MPI: the process was started by an MPI launcher
  /// (mpirun/mpiexec/srun set `OMPI_COMM_WORLD_SIZE`, `PMI_SIZE` or `PMIX_RANK`) with more than
  /// one process, and the build has MPI. Without a launcher, or alone (`mpirun -np 1`), the
  /// process is one rank and MPI is never initialised (no MPI start-up cost).
  [[nodiscard]] virtual bool distributed() const noexcept = 0;
  /// @brief Rank among the ranks on the same node (for one GPU per rank); 0 for one process.
  [[nodiscard]] virtual int local_rank() const noexcept = 0;
  /// @brief Initialise (MPI when launched by MPI with more than one process; no-op otherwise). On ranks other than 0,
  /// standard output goes to /dev/null so that rank 0 alone writes results. Idempotent.
  /// Errors: io_error when MPI cannot be initialised.
  [[nodiscard]] virtual status init(int* argc, char*** argv) = 0;
  /// @brief End the job normally: every rank returns rank 0's `exit_code` (collective; waits
  /// without spinning) and MPI is finalised.
  [[nodiscard]] virtual int finish(int exit_code) = 0;
  /// @brief End the whole job now with exit status `exit_code` after printing
  /// "trialstat: rank R of N: <message>" to standard error (MPI_Abort on every rank; a plain
  /// exit for one process).
  [[noreturn]] virtual void abort(const status& why, int exit_code) = 0;
};

/// @brief The process's world (MPI when built with it, else one process).
[[nodiscard]] process_world& world();

/// @brief The device a rank should use on a node with several GPUs: entry
/// `local_rank mod count` of the visible devices. `visible` is `CUDA_VISIBLE_DEVICES` split at
/// commas (empty: devices 0..count−1 are visible, count from the driver).
/// @return the `CUDA_VISIBLE_DEVICES` value for this rank, or nullopt when there is at most one
///   visible device (nothing to choose).
[[nodiscard]] std::optional<std::string> visible_device_for_rank(int local_rank,
                                                                 std::span<const std::string> visible,
                                                                 int count);

/// @brief Under a multi-rank job, give this rank one GPU (issue 10 item 4): set
/// `CUDA_VISIBLE_DEVICES` per `visible_device_for_rank` before CUDA is initialised. The device
/// count without CUDA comes from /proc/driver/nvidia/gpus. No-op for one process.
void assign_gpu_for_rank(int local_rank);

}  // namespace trialstat::distributed

// SPDX-License-Identifier: Apache-2.0
// Internal to host/distributed: shared by the MPI and the one-process world.
#pragma once

namespace trialstat::distributed {

/// Whether an MPI launcher started this process (its environment variables are set).
[[nodiscard]] bool launched_by_mpi() noexcept;
/// The number of processes the launcher started (1 when none or unknown).
[[nodiscard]] int launcher_world_size() noexcept;
/// Whether the launcher says it started this process alone (`mpirun -np 1`: Open MPI's
/// OMPI_COMM_WORLD_SIZE or MPICH's PMI_SIZE is 1). False when it does not say.
[[nodiscard]] bool launched_alone() noexcept;

}  // namespace trialstat::distributed

// SPDX-License-Identifier: Apache-2.0
// Internal to host/distributed: shared by the MPI and the one-process world.
#pragma once

namespace trialstat::distributed {

/// Whether an MPI launcher started this process (its environment variables are set).
[[nodiscard]] bool launched_by_mpi() noexcept;
/// The number of processes the launcher started (1 when none or unknown).
[[nodiscard]] int launcher_world_size() noexcept;

}  // namespace trialstat::distributed

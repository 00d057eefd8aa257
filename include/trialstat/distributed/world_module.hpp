// SPDX-License-Identifier: Apache-2.0
/// @file world_module.hpp
/// @brief How an MPI build's CLI finds its MPI world at run time (host/distributed/loader): the
/// shared module `mpi_world_module`, installed beside the `trialstat` executable, exports the C
/// function `mpi_world_entry` (`trialstat::distributed::process_world* ()`, the process's MPI
/// world, valid for the process's life). Linking MPI into the executable instead would cost every
/// process MPI's start-up (~2.7 ms), also when no MPI launcher started it.
#pragma once

namespace trialstat::distributed {

/// @brief The module's file name (built into the CLI's folder; installed beside it).
inline constexpr const char* mpi_world_module = "libtrialstat_mpi_world.so";
/// @brief The name of its entry point.
inline constexpr const char* mpi_world_entry = "trialstat_mpi_world";

}  // namespace trialstat::distributed

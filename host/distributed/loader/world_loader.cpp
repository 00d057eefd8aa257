// SPDX-License-Identifier: Apache-2.0
// The world of an MPI build. MPI (libmpi, Open MPI's open-pal and open-rte, hwloc, libevent: ~2.7
// ms of every process's start, bench/RESULTS.md "Statistics store", twelfth session) is not linked
// into the CLI: the MPI world is a module (`mpi_world_module`, host/distributed/mpi/world_mpi.cpp)
// loaded only when an MPI launcher started more than one process. A plain `trialstat`, and
// `mpirun -np 1`, run as one process without loading it.
#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "host/distributed/common/single_world.hpp"
#include "host/distributed/common/world_common.hpp"
#include "trialstat/distributed/world.hpp"
#include "trialstat/distributed/world_module.hpp"

namespace trialstat::distributed {
namespace {

/// The folder of the running executable ("" when /proc cannot tell).
std::filesystem::path executable_folder() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self.parent_path();
}

/// The MPI world from the module beside the executable (else on the loader's search path), or
/// why it cannot be had. RTLD_GLOBAL: Open MPI loads its own components later and they need
/// libmpi's symbols in the global scope.
process_world* load_mpi_world(status& failure) {
  const std::filesystem::path beside = executable_folder() / mpi_world_module;
  void* handle = beside.empty() ? nullptr : ::dlopen(beside.c_str(), RTLD_NOW | RTLD_GLOBAL);
  std::string why_beside;
  if (handle == nullptr) {
    const char* why = ::dlerror();
    why_beside = why != nullptr ? why : "unknown";
    handle = ::dlopen(mpi_world_module, RTLD_NOW | RTLD_GLOBAL);
  }
  if (handle == nullptr) {
    const char* why = ::dlerror();
    failure = status(error_code::io_error,
                     fmt::format("started by an MPI launcher with several processes, but the MPI world ({}) "
                                 "cannot be loaded: {}; {}",
                                 mpi_world_module, why_beside, why != nullptr ? why : "unknown"));
    return nullptr;
  }
  auto* make = reinterpret_cast<process_world* (*)()>(::dlsym(handle, mpi_world_entry));
  if (make == nullptr) {
    failure = status(error_code::io_error,
                     fmt::format("{}: no {} (a module of another trialstat build?)", mpi_world_module, mpi_world_entry));
    return nullptr;
  }
  return make();
}

process_world& choose() {
  if (!launched_by_mpi() || launched_alone()) {
    static single_world one;
    return one;
  }
  status failure;
  if (process_world* mpi = load_mpi_world(failure)) return *mpi;
  static single_world failed(failure);  // its init reports why
  return failed;
}

}  // namespace

process_world& world() {
  static process_world& w = choose();
  return w;
}

}  // namespace trialstat::distributed

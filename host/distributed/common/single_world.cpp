// SPDX-License-Identifier: Apache-2.0
// The world of one process (single_world.hpp).
#include "host/distributed/common/single_world.hpp"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "host/distributed/common/world_common.hpp"

namespace trialstat::distributed {

status single_world::send(int, std::vector<std::byte>) {
  return status(error_code::invalid_argument, "one process: no other rank to send to");
}

result<std::vector<std::byte>> single_world::receive(int) {
  return status(error_code::invalid_argument, "one process: no other rank to receive from");
}

status single_world::init(int*, char***) {
  if (!init_error_.ok()) return init_error_;
  if (launcher_world_size() > 1) {
    return status(error_code::invalid_argument,
                  "started by mpirun, but this trialstat was built without MPI "
                  "(TRIALSTAT_ENABLE_MPI, libopenmpi-dev): run it without mpirun");
  }
  return status::success();
}

void single_world::abort(const status& why, int exit_code) {
  std::fflush(stdout);
  fmt::print(stderr, "trialstat: {}\n", why.to_string());
  std::exit(exit_code);
}

}  // namespace trialstat::distributed

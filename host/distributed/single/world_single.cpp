// SPDX-License-Identifier: Apache-2.0
// The world of a build without MPI: always one process (N copies started by an MPI launcher would
// each run the whole job and write it N times, so that case is refused).
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "host/distributed/common/world_common.hpp"
#include "trialstat/distributed/world.hpp"

namespace trialstat::distributed {
namespace {

class single_world final : public process_world {
 public:
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 1; }
  bool distributed() const noexcept override { return false; }
  int local_rank() const noexcept override { return 0; }
  status send(int, std::vector<std::byte>) override {
    return status(error_code::invalid_argument, "one process: no other rank to send to");
  }
  result<std::vector<std::byte>> receive(int) override {
    return status(error_code::invalid_argument, "one process: no other rank to receive from");
  }
  status flush() override { return status::success(); }
  status init(int*, char***) override {
    if (launcher_world_size() > 1) {
      return status(error_code::invalid_argument,
                    "started by mpirun, but this trialstat was built without MPI "
                    "(TRIALSTAT_ENABLE_MPI, libopenmpi-dev): run it without mpirun");
    }
    return status::success();
  }
  int finish(int exit_code) override { return exit_code; }
  [[noreturn]] void abort(const status& why, int exit_code) override {
    std::fflush(stdout);
    fmt::print(stderr, "trialstat: {}\n", why.to_string());
    std::exit(exit_code);
  }
};

}  // namespace

process_world& world() {
  static single_world w;
  return w;
}

}  // namespace trialstat::distributed

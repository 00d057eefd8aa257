// SPDX-License-Identifier: Apache-2.0
// Internal to host/distributed: the world of one process (no MPI), shared by the build without
// MPI and by the MPI build's loader (a process not started by an MPI launcher, or started alone).
#pragma once

#include "trialstat/distributed/world.hpp"

namespace trialstat::distributed {

/// @brief One process: rank 0 of 1, no transport. `init` fails with `init_error` when it is set
/// (the MPI world could not be loaded), and when an MPI launcher started more than one process
/// (N copies would each run the whole job and write it N times).
class single_world final : public process_world {
 public:
  explicit single_world(status init_error = status::success()) : init_error_(std::move(init_error)) {}
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 1; }
  bool distributed() const noexcept override { return false; }
  int local_rank() const noexcept override { return 0; }
  status send(int to, std::vector<std::byte> message) override;
  result<std::vector<std::byte>> receive(int from) override;
  status flush() override { return status::success(); }
  status init(int* argc, char*** argv) override;
  int finish(int exit_code) override { return exit_code; }
  [[noreturn]] void abort(const status& why, int exit_code) override;

 private:
  status init_error_;
};

}  // namespace trialstat::distributed

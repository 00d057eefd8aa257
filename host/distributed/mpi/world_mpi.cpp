// SPDX-License-Identifier: Apache-2.0
// The MPI world, built as a module of its own (world_module.hpp) that the CLI loads only when an
// MPI launcher started more than one process (host/distributed/loader): a plain `trialstat`, and
// `mpirun -np 1`, neither load nor touch MPI. Waiting is done by polling with short sleeps
// (MPI_Improbe / MPI_Test), never in a blocking MPI call: Open MPI's blocking calls spin, which
// would take a core from the statistics of another rank on the same node.
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <deque>
#include <thread>

#include <fmt/format.h>

#include "host/distributed/common/world_common.hpp"
#include "trialstat/distributed/world.hpp"
#include "trialstat/distributed/world_module.hpp"

namespace trialstat::distributed {
namespace {

constexpr int step_tag = 7;
/// Bytes a rank may have sent but not yet delivered before `send` waits (bounded memory).
constexpr std::size_t max_in_flight_bytes = std::size_t{256} << 20;

/// Sleeps growing from 20 µs to 1 ms between polls.
class backoff {
 public:
  void wait() {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    delay_us_ = std::min(delay_us_ * 2, 1000);
  }

 private:
  int delay_us_ = 20;
};

status mpi_error(int code, std::string_view what) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return status(error_code::io_error, fmt::format("MPI {}: {}", what, std::string_view(text, length)));
}

class mpi_world final : public process_world {
 public:
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  bool distributed() const noexcept override { return initialised_; }
  int local_rank() const noexcept override { return local_rank_; }

  status init(int* argc, char*** argv) override {
    // One process (`mpirun -np 1`) has no one to talk to: it runs as a plain process (the
    // one-process code path, byte-identical by definition) and skips MPI_Init's start-up cost.
    if (initialised_ || !launched_by_mpi() || launched_alone()) return status::success();
    int provided = 0;
    int code = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (code != MPI_SUCCESS) return mpi_error(code, "init");
    initialised_ = true;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm node = MPI_COMM_NULL;
    if (MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
      MPI_Comm_rank(node, &local_rank_);
      MPI_Comm_free(&node);
    }
    if (rank_ != 0) {
      // Rank 0 alone writes results; the others' stdout goes nowhere.
      if (std::freopen("/dev/null", "w", stdout) == nullptr) {
        return status(error_code::io_error, "cannot send standard output of a rank to /dev/null");
      }
    }
    if (size_ > 1) assign_gpu_for_rank(local_rank_);
    return status::success();
  }

  status send(int to, std::vector<std::byte> message) override {
    if (message.size() > static_cast<std::size_t>(INT_MAX)) {
      return status(error_code::invalid_argument,
                    fmt::format("a step message of {} bytes exceeds MPI's 2 GiB count", message.size()));
    }
    pending_.push_back({std::move(message), MPI_REQUEST_NULL});
    in_flight_bytes_ += pending_.back().bytes.size();
    auto& p = pending_.back();
    int code = MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_BYTE, to, step_tag, comm_,
                         &p.request);
    if (code != MPI_SUCCESS) return mpi_error(code, "send");
    TRIALSTAT_RETURN_IF_ERROR(reap(false));
    while (in_flight_bytes_ > max_in_flight_bytes) TRIALSTAT_RETURN_IF_ERROR(reap(true));
    return status::success();
  }

  result<std::vector<std::byte>> receive(int from) override {
    backoff wait;
    for (;;) {
      int found = 0;
      MPI_Message message;
      MPI_Status probe;
      int code = MPI_Improbe(from, step_tag, comm_, &found, &message, &probe);
      if (code != MPI_SUCCESS) return mpi_error(code, "probe");
      if (found != 0) {
        int count = 0;
        MPI_Get_count(&probe, MPI_BYTE, &count);
        std::vector<std::byte> bytes(static_cast<std::size_t>(count));
        code = MPI_Mrecv(bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS) return mpi_error(code, "receive");
        return bytes;
      }
      TRIALSTAT_RETURN_IF_ERROR(reap(false));
      wait.wait();
    }
  }

  status flush() override {
    while (!pending_.empty()) TRIALSTAT_RETURN_IF_ERROR(reap(true));
    return status::success();
  }

  int finish(int exit_code) override {
    if (!initialised_) return exit_code;
    if (!flush().ok()) abort(status(error_code::io_error, "messages could not be delivered"), 2);
    // Every rank leaves with rank 0's exit status.
    int code = exit_code;
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ibcast(&code, 1, MPI_INT, 0, comm_, &request);
    wait_for(request);
    MPI_Comm_free(&comm_);
    MPI_Finalize();
    initialised_ = false;
    return code;
  }

  [[noreturn]] void abort(const status& why, int exit_code) override {
    std::fflush(stdout);
    if (!initialised_) {
      fmt::print(stderr, "trialstat: {}\n", why.to_string());
      std::exit(exit_code);
    }
    fmt::print(stderr, "trialstat: rank {} of {}: {}\n", rank_, size_, why.to_string());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::exit(exit_code);  // not reached
  }

 private:
  struct pending_send {
    std::vector<std::byte> bytes;
    MPI_Request request;
  };

  void wait_for(MPI_Request& request) {
    backoff wait;
    for (;;) {
      int done = 0;
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done != 0) return;
      wait.wait();
    }
  }

  /// Drop delivered sends from the front; with `block`, wait for the oldest one first.
  status reap(bool block) {
    if (block && !pending_.empty()) wait_for(pending_.front().request), release_front();
    while (!pending_.empty()) {
      int done = 0;
      int code = MPI_Test(&pending_.front().request, &done, MPI_STATUS_IGNORE);
      if (code != MPI_SUCCESS) return mpi_error(code, "send");
      if (done == 0) break;
      release_front();
    }
    return status::success();
  }
  void release_front() {
    in_flight_bytes_ -= pending_.front().bytes.size();
    pending_.pop_front();
  }

  bool initialised_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  std::deque<pending_send> pending_;
  std::size_t in_flight_bytes_ = 0;
};

}  // namespace

}  // namespace trialstat::distributed

/// The module's entry point (world_module.hpp `mpi_world_entry`).
extern "C" __attribute__((visibility("default"))) trialstat::distributed::process_world* trialstat_mpi_world() {
  static trialstat::distributed::mpi_world w;
  return &w;
}

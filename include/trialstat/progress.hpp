// SPDX-License-Identifier: Apache-2.0
/// @file progress.hpp
/// @brief Progress of a long operation (a statistics pass, an export, an S3 download): steps and
/// bytes done out of a total, with rate and ETA. A tiny interface so that any stage can report
/// (the statistics stream calls it once per step; a source may call it per object) and any
/// front end can show it; `make_terminal_progress` is the CLI's: one line on stderr, redrawn at
/// most 5 times a second, only when stderr is a terminal unless forced.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace trialstat {

/// @brief Receives progress. Calls come from one thread at a time (the one doing the work):
/// `begin`, any number of `advance`, `end`. A reporter may be reused for several begin/end
/// rounds (each is a new operation). Implementations must not throw.
class progress_reporter {
 public:
  virtual ~progress_reporter() = default;
  /// @brief A new operation of `total_steps` steps and about `total_bytes` bytes (0 = unknown).
  virtual void begin(int64_t total_steps, int64_t total_bytes) = 0;
  /// @brief `steps` more steps and `bytes` more bytes are done.
  virtual void advance(int64_t steps, int64_t bytes) = 0;
  /// @brief `records` more records of the steps done came from a statistics store instead of
  /// being read (issue 26); called before that step's `advance`. Default: ignored.
  virtual void served(int64_t records) { (void)records; }
  /// @brief The operation ended (completely or not).
  virtual void end() = 0;
};

/// @brief `--progress` / `--no-progress` / neither.
enum class progress_mode : uint8_t {
  automatic,  ///< on when the stream is a terminal (isatty)
  on,
  off,
};

/// @brief A reporter drawing `<label>: <steps>/<total> steps, <MB>/<MB> MB, <MB/s>, ETA <m:ss>`
/// on one line of `out` (carriage return, no newline until `end`), at most every 200 ms. With
/// records from a statistics store, `, <N> records from the store` follows the steps; a run
/// that reads no bytes shows neither bytes nor a rate (its ETA comes from the steps).
/// @return the reporter, or nullptr when `mode` is off, or automatic and `out` is not a terminal
///   (nothing is written then, so callers just skip a null reporter).
[[nodiscard]] std::unique_ptr<progress_reporter> make_terminal_progress(progress_mode mode,
                                                                        std::string label,
                                                                        std::FILE* out = stderr);

}  // namespace trialstat

// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: index files read and parsed on a thread of their own, a bounded number
// of files ahead of the catalog that applies them in listing order. Not a public header.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "host/trial/index_json.hpp"
#include "host/trial/index_share.hpp"
#include "trialstat/io/trial_source.hpp"

namespace trialstat::trial::detail {

/// @brief Read and parse one index file whose bytes (followed by `io::record_padding_bytes`
/// zero bytes, as simdjson needs) a source read — or the error reading it met — into `out`.
/// @return what happened: parsed (the parsed form is in `out`), read_failed or parse_failed
///   with the status (its message does not name the file).
[[nodiscard]] index_outcome parse_index_outcome(const result<std::span<const std::byte>>& bytes,
                                                index_json_parser& parser, parsed_index& out);

/// @brief The index files `keys` read (`trial_source::read_objects`) and parsed on a thread of
/// its own, at most `capacity` files ahead of the caller, who takes their outcomes in the order
/// of `keys` with `next`. Opening a trial costs reading and parsing its index files plus
/// applying them to the catalog; this overlaps the two.
///
/// Threads: `next` from one thread (the one that applies); the source must allow its const
/// methods from another thread (trial_source's contract). Destroying it before the last `next`
/// stops parsing (what is left is still read by the source, then dropped) and joins the thread.
class index_read_ahead {
 public:
  /// @param source, keys must outlive this object
  /// @param capacity files parsed ahead at most (at least 16 are)
  index_read_ahead(const io::trial_source& source, std::span<const std::string> keys, std::size_t capacity = 64);
  ~index_read_ahead();
  index_read_ahead(const index_read_ahead&) = delete;
  index_read_ahead& operator=(const index_read_ahead&) = delete;

  /// @brief The next file's outcome; when parsed, its parsed form is swapped into `parsed`
  /// (which gives its storage back for a later file). Call at most keys.size() times. A file
  /// whose parsed form could not be allocated is read_failed with out_of_memory; one the source
  /// never handed over (a source breaking read_objects' contract) read_failed with io_error.
  [[nodiscard]] index_outcome next(parsed_index& parsed);

 private:
  struct slot {
    index_outcome outcome;
    parsed_index parsed;
  };
  void produce();

  const io::trial_source& source_;
  std::span<const std::string> keys_;
  std::vector<slot> slots_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t produced_ = 0;  ///< files whose outcome is in a slot (guarded by mutex_)
  std::size_t taken_ = 0;     ///< files handed to the caller (guarded by mutex_)
  std::size_t consumer_wants_ = 0;  ///< produced_ the waiting caller waits for (0: not waiting)
  std::size_t producer_wants_ = 0;  ///< taken_ the waiting producer waits for (0: not waiting)
  bool stopping_ = false;
  bool finished_ = false;  ///< the source's read_objects returned (guarded by mutex_)
  std::thread thread_;
};

}  // namespace trialstat::trial::detail

// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: index files read and parsed on threads of their own, a bounded number
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

/// @brief Keys a parsing thread reads with one `read_objects` call, at least and at most: the
/// threads take these blocks in turn (thread t the blocks t, t + threads, …), so each reads and
/// parses files of its own while the caller applies them in order. Small blocks start every
/// thread sooner on a trial of a few hundred files; large ones open each folder less often on a
/// trial of tens of thousands (bench/RESULTS.md, twentieth session).
inline constexpr std::size_t index_read_ahead_min_block_keys = 16;
inline constexpr std::size_t index_read_ahead_max_block_keys = 64;

/// @brief The index files `keys` read (`trial_source::read_objects`) and parsed on threads of
/// their own, at most `capacity` files ahead of the caller, who takes their outcomes in the order
/// of `keys` with `next`. Opening a trial costs reading and parsing its index files plus
/// applying them to the catalog; this overlaps the two, and spreads the parsing (most of it)
/// over the cores.
///
/// Threads: `next` from one thread (the one that applies); the source must allow its const
/// methods from other threads (trial_source's contract). Destroying it before the last `next`
/// stops parsing (what is left of a block is still read by the source, then dropped) and joins
/// the threads.
class index_read_ahead {
 public:
  /// @param source, keys must outlive this object
  /// @param capacity files parsed ahead at most (at least two blocks per thread are)
  /// @param threads parsing threads (0: one per core, at most 4; never more than there are
  ///   blocks of keys)
  index_read_ahead(const io::trial_source& source, std::span<const std::string> keys, std::size_t capacity = 64,
                   unsigned threads = 0);
  ~index_read_ahead();
  index_read_ahead(const index_read_ahead&) = delete;
  index_read_ahead& operator=(const index_read_ahead&) = delete;

  /// @brief The next file's outcome; when parsed, its parsed form is swapped into `parsed`
  /// (which gives its storage back for a later file). Call at most keys.size() times. A file
  /// whose parsed form could not be allocated is read_failed with out_of_memory; one the source
  /// never handed over (a source breaking read_objects' contract) read_failed with io_error.
  [[nodiscard]] index_outcome next(parsed_index& parsed);

  /// @brief The parsing threads started.
  [[nodiscard]] std::size_t threads() const noexcept { return threads_.size(); }
  /// @brief Keys per block: about an eighth of a thread's share, within the bounds above.
  [[nodiscard]] std::size_t block_keys() const noexcept { return block_keys_; }

 private:
  struct slot {
    index_outcome outcome;
    parsed_index parsed;
    bool ready = false;  ///< filled and not yet taken (guarded by mutex_)
  };
  void produce(std::size_t first_block, std::size_t block_stride);
  /// Wait (holding `lock`) until file `i`'s slot is free, or stopping; false when stopping.
  bool wait_for_room(std::unique_lock<std::mutex>& lock, std::size_t i);
  /// Mark file `i` filled (holding `lock`), advance `contiguous_`, and say whether to wake the caller.
  bool mark_ready(std::size_t i);

  const io::trial_source& source_;
  std::span<const std::string> keys_;
  std::size_t block_keys_ = index_read_ahead_min_block_keys;
  std::vector<slot> slots_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t contiguous_ = 0;      ///< files 0 … contiguous_ − 1 are filled (guarded by mutex_)
  std::size_t taken_ = 0;           ///< files handed to the caller (guarded by mutex_)
  std::size_t consumer_wants_ = 0;  ///< contiguous_ the waiting caller waits for (0: not waiting)
  std::size_t producer_wants_ = 0;  ///< taken_ the first waiting thread waits for (0: none waits)
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace trialstat::trial::detail

// SPDX-License-Identifier: Apache-2.0
// Index files parsed on threads ahead of the catalog (index_read_ahead.hpp): blocks of keys taken
// by the threads in turn, and a ring of slots handed over in order under one mutex (a slot is
// marked ready when filled; the caller takes the longest ready prefix). Each side that has to
// wait asks for a batch (8 files or what is left) before it is woken, so a fast side sleeps once
// per batch, not once per file.
#include "host/trial/index_read_ahead.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "trialstat/io/file_reader.hpp"
#include "trialstat/io/record_reader.hpp"

namespace trialstat::trial::detail {
namespace {
constexpr std::size_t wake_batch = 8;
/// Parsing threads when the caller does not say: one per core, at most this many.
constexpr unsigned max_default_threads = 4;
}  // namespace

index_outcome parse_index_outcome(const result<std::span<const std::byte>>& bytes, index_json_parser& parser,
                                  parsed_index& out) {
  using kind = index_outcome::kind;
  if (!bytes.has_value()) return {kind::read_failed, bytes.error_status()};
  const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  status parsed = parser.parse(text, bytes->size() + io::record_padding_bytes, out);
  if (!parsed.ok()) return {kind::parse_failed, std::move(parsed)};
  return {kind::parsed, status::success()};
}

index_read_ahead::index_read_ahead(const io::trial_source& source, std::span<const std::string> keys,
                                   std::size_t capacity, unsigned threads)
    : source_(source), keys_(keys) {
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, max_default_threads);
  block_keys_ = std::clamp<std::size_t>(keys_.size() / (8 * std::size_t{threads}), index_read_ahead_min_block_keys,
                                        index_read_ahead_max_block_keys);
  const std::size_t blocks = (keys_.size() + block_keys_ - 1) / block_keys_;
  const std::size_t count = std::max<std::size_t>(1, std::min<std::size_t>(threads, blocks));
  // Room for two blocks per thread, so that a thread ahead by a block never waits for one behind.
  slots_.resize(std::max({capacity, 2 * wake_batch, 2 * count * block_keys_}));
  threads_.reserve(count);
  try {
    for (std::size_t t = 0; t < count; ++t) threads_.emplace_back([this, t, count] { produce(t, count); });
  } catch (...) {  // a thread that could not start: stop and join those that did
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads_) t.join();
    throw;
  }
}

index_read_ahead::~index_read_ahead() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool index_read_ahead::wait_for_room(std::unique_lock<std::mutex>& lock, std::size_t i) {
  // Slot i mod capacity is free once file i − capacity is taken.
  while (!stopping_ && i >= taken_ + slots_.size()) {  // the ring is full: wait for a batch to be taken
    const std::size_t want = std::min(i + 1 - slots_.size() + wake_batch, keys_.size());
    producer_wants_ = producer_wants_ == 0 ? want : std::min(producer_wants_, want);
    changed_.wait(lock);
  }
  return !stopping_;
}

bool index_read_ahead::mark_ready(std::size_t i) {
  slots_[i % slots_.size()].ready = true;
  // A slot past taken_ + capacity − 1 is that of a file not taken yet: the prefix stops there.
  while (contiguous_ < keys_.size() && contiguous_ < taken_ + slots_.size() &&
         slots_[contiguous_ % slots_.size()].ready) {
    ++contiguous_;
  }
  return consumer_wants_ != 0 && contiguous_ >= consumer_wants_;
}

void index_read_ahead::produce(std::size_t first_block, std::size_t block_stride) {
  index_json_parser parser;
  const std::size_t block_keys = block_keys_;
  static_assert(index_read_ahead_max_block_keys <= 64, "a block's delivered keys fit one 64-bit mask");
  const std::size_t blocks = (keys_.size() + block_keys - 1) / block_keys;
  // Fill slot i (the thread's alone until it is marked ready) with `fill`, waiting for room.
  const auto publish = [&](std::size_t i, const auto& fill) {
    {
      std::unique_lock lock(mutex_);
      if (!wait_for_room(lock, i)) return false;
    }
    fill(slots_[i % slots_.size()]);
    bool wake = false;
    {
      const std::lock_guard lock(mutex_);
      wake = mark_ready(i);
    }
    if (wake) changed_.notify_all();
    return true;
  };
  for (std::size_t b = first_block; b < blocks; b += block_stride) {
    const std::size_t begin = b * block_keys;
    const std::size_t size = std::min(keys_.size() - begin, block_keys);
    uint64_t delivered = 0;
    bool stopped = false;
    source_.read_objects(keys_.subspan(begin, size), [&](std::size_t j, result<std::span<const std::byte>> bytes) {
      if (stopped || j >= size || ((delivered >> j) & 1U) != 0) return;  // stopping, or a key handed over twice
      delivered |= uint64_t{1} << j;
      stopped = !publish(begin + j, [&](slot& s) {
        try {
          s.outcome = parse_index_outcome(bytes, parser, s.parsed);
        } catch (const std::exception& e) {  // allocation: as the file's problem (no exception may leave a thread)
          s.outcome = {index_outcome::kind::read_failed,
                       status(error_code::out_of_memory, fmt::format("cannot hold its parsed form: {}", e.what()))};
        }
      });
    }, io::json_file_limit_bytes);
    if (stopped) return;
    // Keys the source did not hand over (against its contract): a read failure each, not a hang.
    for (std::size_t j = 0; j < size; ++j) {
      if (((delivered >> j) & 1U) != 0) continue;
      if (!publish(begin + j, [](slot& s) {
            s.outcome = {index_outcome::kind::read_failed,
                         status(error_code::io_error, "the trial source did not read it")};
          })) {
        return;
      }
    }
  }
}

index_outcome index_read_ahead::next(parsed_index& parsed) {
  std::size_t i = 0;
  {
    std::unique_lock lock(mutex_);
    i = taken_;
    while (contiguous_ <= i) {
      consumer_wants_ = std::min(i + wake_batch, keys_.size());
      changed_.wait(lock);
    }
    consumer_wants_ = 0;
  }
  slot& s = slots_[i % slots_.size()];  // the caller's until taken_ passes i
  index_outcome outcome = std::move(s.outcome);
  std::swap(parsed, s.parsed);
  bool wake = false;
  {
    const std::lock_guard lock(mutex_);
    s.ready = false;
    taken_ = i + 1;
    wake = producer_wants_ != 0 && taken_ >= producer_wants_;
    if (wake) producer_wants_ = 0;
  }
  if (wake) changed_.notify_all();
  return outcome;
}

}  // namespace trialstat::trial::detail

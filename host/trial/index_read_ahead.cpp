// SPDX-License-Identifier: Apache-2.0
// Index files parsed on a thread ahead of the catalog (index_read_ahead.hpp): a ring of slots
// handed over in order under one mutex. Each side that has to wait asks for a batch (8 files or
// what is left) before it is woken, so a fast side sleeps once per batch, not once per file.
#include "host/trial/index_read_ahead.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "trialstat/io/file_reader.hpp"
#include "trialstat/io/record_reader.hpp"

namespace trialstat::trial::detail {
namespace {
constexpr std::size_t wake_batch = 8;
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
                                   std::size_t capacity)
    : source_(source), keys_(keys), slots_(std::max(capacity, 2 * wake_batch)) {
  thread_ = std::thread([this] { produce(); });
}

index_read_ahead::~index_read_ahead() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void index_read_ahead::produce() {
  index_json_parser parser;
  source_.read_objects(keys_, [&](std::size_t i, result<std::span<const std::byte>> bytes) {
    {
      std::unique_lock lock(mutex_);
      if (i >= taken_ + slots_.size()) {  // the ring is full: wait for a batch to be taken
        producer_wants_ = std::min(i + 1 - slots_.size() + wake_batch, keys_.size());
        changed_.wait(lock, [&] { return stopping_ || i < taken_ + slots_.size(); });
        producer_wants_ = 0;
      }
      if (stopping_) return;
    }
    // Slot i mod capacity is the producer's alone until produced_ passes i.
    slot& s = slots_[i % slots_.size()];
    try {
      s.outcome = parse_index_outcome(bytes, parser, s.parsed);
    } catch (const std::exception& e) {  // allocation: as the file's problem (no exception may leave a thread)
      s.outcome = {index_outcome::kind::read_failed,
                   status(error_code::out_of_memory, fmt::format("cannot hold its parsed form: {}", e.what()))};
    }
    bool wake = false;
    {
      const std::lock_guard lock(mutex_);
      produced_ = i + 1;
      wake = consumer_wants_ != 0 && produced_ >= consumer_wants_;
    }
    if (wake) changed_.notify_all();
  }, io::json_file_limit_bytes);
  {
    const std::lock_guard lock(mutex_);
    finished_ = true;
  }
  changed_.notify_all();
}

index_outcome index_read_ahead::next(parsed_index& parsed) {
  std::size_t i = 0;
  {
    std::unique_lock lock(mutex_);
    i = taken_;
    if (produced_ <= i) {
      consumer_wants_ = std::min(i + wake_batch, keys_.size());
      changed_.wait(lock, [&] { return produced_ >= consumer_wants_ || finished_; });
      consumer_wants_ = 0;
      if (produced_ <= i) {  // a source that skipped keys (against its contract): no hang
        return {index_outcome::kind::read_failed,
                status(error_code::io_error, "the trial source did not read it")};
      }
    }
  }
  slot& s = slots_[i % slots_.size()];
  index_outcome outcome = std::move(s.outcome);
  std::swap(parsed, s.parsed);
  bool wake = false;
  {
    const std::lock_guard lock(mutex_);
    taken_ = i + 1;
    wake = producer_wants_ != 0 && taken_ >= producer_wants_;
  }
  if (wake) changed_.notify_all();
  return outcome;
}

}  // namespace trialstat::trial::detail

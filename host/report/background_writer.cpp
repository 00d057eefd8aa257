// SPDX-License-Identifier: Apache-2.0
// The background statistics writer: one producer (the pipeline's consumer thread) copies steps
// into recycled slots, one formatting thread drains them in order through the wrapped writer.
#include "trialstat/report/background_writer.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace trialstat::report {
namespace {

/// One queued step: the records are copies owned by the slot, reused by the next step.
struct step_slot {
  const trial::catalog* trial = nullptr;
  int64_t step = 0;
  trialstat::mode mode = trialstat::mode::global;
  int64_t mode_step = 0;
  std::vector<stats::statistics_record> records;
  std::size_t count = 0;  // records[0, count) belong to this step; the rest keep capacity
};

class background_writer final : public statistics_writer {
 public:
  background_writer(std::unique_ptr<statistics_writer> inner, std::size_t max_queued_records)
      : inner_(std::move(inner)),
        max_queued_(std::max<std::size_t>(max_queued_records, 1)),
        wake_records_(std::max<std::size_t>(max_queued_ / 4, 1)) {
    thread_ = std::thread([this] { drain(); });
  }

  ~background_writer() override { stop(); }

  void write_step(const trial::catalog& trial, const stats::step_statistics& step) override {
    std::unique_ptr<step_slot> slot;
    {
      std::unique_lock lock(mutex_);
      if (stopping_) {  // after finish(): nothing drains the queue any more, write in place
        lock.unlock();
        inner_->write_step(trial, step);
        return;
      }
      // Back pressure: wait while the queue is over its budget (a lone big step still goes in),
      // with the formatting thread awake to drain it.
      const auto fits = [&] {
        return failure_ || queued_records_ == 0 || queued_records_ + step.records.size() <= max_queued_;
      };
      if (!fits()) {
        if (drain_waiting_) work_.notify_one();
        space_.wait(lock, fits);
      }
      rethrow_failure();
      if (!free_.empty()) {
        slot = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!slot) slot = std::make_unique<step_slot>();
    slot->trial = &trial;
    slot->step = step.step;
    slot->mode = step.mode;
    slot->mode_step = step.mode_step;
    slot->count = step.records.size();
    if (slot->records.size() < slot->count) slot->records.resize(slot->count);
    for (std::size_t i = 0; i < slot->count; ++i) {
      stats::statistics_record& copy = slot->records[i];
      copy = step.records[i];  // copy-assignment: the slot's vectors keep their capacity
      copy.values_data = nullptr;  // the batch's memory: not the slot's to read
    }
    bool wake = false;
    {
      std::lock_guard lock(mutex_);
      queued_records_ += slot->count;
      queue_.push_back(std::move(slot));
      // A sleeping formatting thread is woken once a run of steps is queued, not for each:
      // small steps would otherwise cost a futex wake and a context switch apiece.
      wake = drain_waiting_ && queued_records_ >= wake_records_;
    }
    if (wake) work_.notify_one();
  }

  void finish() override {
    stop();
    rethrow_failure();
    inner_->finish();
  }

 private:
  void drain() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (!stopping_ && queue_.empty()) {
        drain_waiting_ = true;
        work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        drain_waiting_ = false;
      }
      if (queue_.empty()) return;  // stopping and drained
      std::unique_ptr<step_slot> slot = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      std::exception_ptr failed;
      if (!failure_) {  // after a failure the rest is dropped: finish() reports it
        try {
          inner_->write_step(*slot->trial, {slot->step, slot->mode, slot->mode_step,
                                            std::span<const stats::statistics_record>(slot->records.data(), slot->count)});
        } catch (...) {
          failed = std::current_exception();
        }
      }
      lock.lock();
      if (failed) failure_ = failed;
      queued_records_ -= slot->count;
      free_.push_back(std::move(slot));
      space_.notify_one();
    }
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (!thread_.joinable()) return;
      stopping_ = true;
    }
    work_.notify_one();
    thread_.join();
  }

  /// Rethrow (once) what the formatting thread caught. Called with mutex_ held, or after the
  /// thread has been joined (failure_ is written under mutex_ by the formatting thread only).
  void rethrow_failure() {
    if (failure_ && !reported_) {
      reported_ = true;
      std::rethrow_exception(failure_);
    }
  }

  std::unique_ptr<statistics_writer> inner_;
  std::size_t max_queued_;
  std::size_t wake_records_;  // queued records that wake a waiting formatting thread
  std::mutex mutex_;
  std::condition_variable work_;   // the formatting thread waits for steps
  std::condition_variable space_;  // the producer waits for the queue to drain below budget
  std::deque<std::unique_ptr<step_slot>> queue_;
  std::vector<std::unique_ptr<step_slot>> free_;
  std::size_t queued_records_ = 0;
  bool stopping_ = false;
  bool drain_waiting_ = false;  // the formatting thread sleeps on work_ (under mutex_)
  std::exception_ptr failure_;
  bool reported_ = false;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<statistics_writer> make_background_writer(std::unique_ptr<statistics_writer> inner,
                                                          std::size_t max_queued_records) {
  return std::make_unique<background_writer>(std::move(inner), max_queued_records);
}

}  // namespace trialstat::report

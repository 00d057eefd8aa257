// SPDX-License-Identifier: Apache-2.0
// The statistics stream: a reader thread (read + decode steps ahead) feeding an executor,
// records emitted in global-step order.
#include "trialstat/pipeline/statistics_pipeline.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "host/pipeline/step_reader.hpp"
#include "trialstat/stats/statistics_executor.hpp"

namespace trialstat::pipeline {
namespace {

/// Step batches circulate between the reader thread and the consumer: the reader fills free
/// ones while the consumer computes and emits full ones, in order. With more than two, each
/// side is woken only when there is a run of work for it (the reader when half the batches
/// are free again, the consumer when half of them — or all the steps it still waits for — are
/// full), so small steps do not cost a thread hand-off each.
class batch_exchange {
 public:
  explicit batch_exchange(std::vector<detail::step_batch*> free)
      : free_(free.begin(), free.end()), refill_(std::max<std::size_t>(1, free.size() / 2)) {}

  detail::step_batch* take_free() {
    std::unique_lock lock(mutex_);
    if (free_.empty() && !closed_) {
      reader_waiting_ = true;
      free_ready_.wait(lock, [&] { return free_.size() >= refill_ || closed_; });
      reader_waiting_ = false;
    }
    return pop(free_);
  }
  void give_free(detail::step_batch* b) {
    std::lock_guard lock(mutex_);
    free_.push_back(b);
    if (reader_waiting_ && free_.size() >= refill_) free_ready_.notify_one();
  }
  /// @param remaining steps the consumer still expects (>= 1)
  detail::step_batch* take_full(std::size_t remaining) {
    std::unique_lock lock(mutex_);
    if (full_.empty() && !closed_) {
      consumer_wants_ = std::min(refill_, remaining);
      full_ready_.wait(lock, [&] { return full_.size() >= consumer_wants_ || closed_; });
      consumer_wants_ = 0;
    }
    return pop(full_);
  }
  void give_full(detail::step_batch* b) {
    std::lock_guard lock(mutex_);
    full_.push_back(b);
    if (consumer_wants_ > 0 && full_.size() >= consumer_wants_) full_ready_.notify_one();
  }
  /// Wake everybody and make every later take return nullptr (end of input or an error).
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    free_ready_.notify_all();
    full_ready_.notify_all();
  }

 private:
  detail::step_batch* pop(std::deque<detail::step_batch*>& q) {
    if (closed_ || q.empty()) return nullptr;
    auto* b = q.front();
    q.pop_front();
    return b;
  }
  std::mutex mutex_;
  std::condition_variable free_ready_, full_ready_;
  std::deque<detail::step_batch*> free_, full_;
  std::size_t refill_;
  std::size_t consumer_wants_ = 0;  // while the consumer waits: full batches that wake it
  bool reader_waiting_ = false;
  bool closed_ = false;
};

/// Steps the reader may hold ahead of the consumer (2 = double buffering): as many as fit in
/// `lookahead_bytes` of the largest step's held bytes (`step_size::held`), from 2 to
/// `max_batches`. Small steps then cost no thread hand-off each; big ones, or many workers'
/// files per step, keep the memory of two steps. The CUDA executor's pinned staging buffers are
/// sized for two steps, so with a staging pool it stays at 2.
std::size_t batches_for(int64_t largest_held_bytes, bool staging_pool) {
  constexpr int64_t lookahead_bytes = int64_t{64} << 20;
  constexpr int64_t max_batches = 8;
  if (staging_pool) return 2;
  return static_cast<std::size_t>(std::clamp<int64_t>(lookahead_bytes / std::max<int64_t>(1, largest_held_bytes), 2, max_batches));
}

/// Live trials: whether every record of `info` that `plan` needs lies wholly inside its event
/// file as the file is now. A file that is missing or shorter than the index says is a record
/// cut short at the tail (truncated_record: retry later). Other stat failures are left to the
/// reader, which reports them per record.
status check_step_files(const trial::catalog& trial, const plan::read_plan& plan,
                        const pipeline_options& options, const trial::step_info& info) {
  std::vector<std::pair<trial::file_id, uint64_t>> ends;  // (file, largest record end), few
  const auto note = [&](const trial::record_location& at) {
    const uint64_t end = at.start_bytes + at.length_bytes;
    for (auto& [file, largest] : ends) {
      if (file == at.event_file) {
        largest = std::max(largest, end);
        return;
      }
    }
    ends.emplace_back(at.event_file, end);
  };
  for (const trial::tensor_entry& entry : trial.entries_at(info.step)) {
    const stats::statistics_request* request = plan.find(entry.tensor);
    if (request == nullptr || !plan.reads_worker(entry.worker)) continue;
    if (options.read_entry && !options.read_entry(entry)) continue;  // not read (statistics store)
    plan::for_each_needed_record(entry, *request, note);
  }
  for (const auto& [file, end] : ends) {
    const std::string_view rel = trial.event_file_key(file);
    const auto size = trial.source().object_size(rel);
    if (size && !size->has_value()) {
      return status(error_code::truncated_record,
                    fmt::format("{}: event file of step {} not there yet (its index file is)",
                                rel, info.step));
    }
    if (size && **size < end) {
      return status(error_code::truncated_record,
                    fmt::format("{}: {} bytes, but the index of step {} lists records up to byte "
                                "{} (a record cut short at the tail)",
                                rel, **size, info.step, end));
    }
  }
  return status::success();
}

}  // namespace

bool step_in_range(int64_t step, const plan::read_plan& plan, const pipeline_options& options) noexcept {
  for (const auto& begin : {plan.step_begin, options.step_begin}) {
    if (begin && step < *begin) return false;
  }
  for (const auto& end : {plan.step_end, options.step_end}) {
    if (end && step >= *end) return false;
  }
  return options.only_steps.empty() ||
         std::binary_search(options.only_steps.begin(), options.only_steps.end(), step);
}

struct statistics_stream::state {
  const trial::catalog& trial;
  plan::read_plan plan;
  pipeline_options options;
  std::unique_ptr<stats::statistics_executor> executor;
  std::optional<int64_t> last_step;
  /// The step batches: at least two; more for small steps (see `batches_for`).
  std::vector<std::unique_ptr<detail::step_batch>> batches;
  stats::tensor_batch work;

  /// Bytes of the records `plan` needs at `step` (what progress counts), and the bytes the step
  /// reader holds for them: per worker's event file, the whole file when it is small (<= 1 MiB)
  /// or mostly wanted, else the wanted records (step_reader.cpp's rule), the file's size taken
  /// as the end of its last indexed record.
  struct step_size {
    int64_t wanted = 0;
    int64_t held = 0;
  };
  /// Lengths and offsets come from index files (hostile input, issue 12): sums saturate.
  static int64_t saturated(uint64_t bytes) {
    return bytes > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(bytes);
  }
  static void add_saturated(int64_t& total, int64_t bytes) { total = bytes > INT64_MAX - total ? INT64_MAX : total + bytes; }
  step_size step_bytes(int64_t step) const {
    constexpr int64_t small_file_bytes = int64_t{1} << 20;
    step_size size;
    int64_t worker_wanted = 0;
    int64_t worker_file_end = 0;
    std::optional<trial::worker_id> worker;
    const auto end_worker = [&] {
      if (worker && worker_wanted > 0) {
        const bool whole = worker_file_end <= small_file_bytes || worker_wanted >= worker_file_end / 2;
        add_saturated(size.held, whole ? std::max(worker_file_end, worker_wanted) : worker_wanted);
      }
      worker_wanted = 0;
      worker_file_end = 0;
    };
    const auto note_end = [&](const trial::record_location& at) {
      const uint64_t end = at.length_bytes > UINT64_MAX - at.start_bytes ? UINT64_MAX : at.start_bytes + at.length_bytes;
      worker_file_end = std::max(worker_file_end, saturated(end));
    };
    for (const trial::tensor_entry& entry : trial.entries_at(step)) {
      if (worker != entry.worker) {
        end_worker();
        worker = entry.worker;
      }
      if (entry.raw) note_end(*entry.raw);
      for (const auto& reduction : entry.reductions) note_end(reduction.location);
      const stats::statistics_request* request = plan.find(entry.tensor);
      if (request == nullptr || (options.read_entry && !options.read_entry(entry))) continue;
      int64_t bytes = 0;
      plan::for_each_needed_record(entry, *request, [&](const trial::record_location& at) {
        add_saturated(bytes, saturated(at.length_bytes));
      });
      add_saturated(size.wanted, bytes);
      add_saturated(worker_wanted, bytes);
    }
    end_worker();
    return size;
  }

  /// Hand one step's segments to the executor (file buffers, then typed-field fallbacks).
  status compute(detail::step_batch& batch) { return detail::compute_step_batch(*executor, plan, batch, work); }
};

statistics_stream::statistics_stream(const trial::catalog& trial, plan::read_plan plan,
                                     pipeline_options options)
    : state_(std::make_unique<state>(
          state{trial, std::move(plan), options, nullptr, std::nullopt, {}, {}})) {}
statistics_stream::~statistics_stream() = default;
statistics_stream::statistics_stream(statistics_stream&&) noexcept = default;
statistics_stream& statistics_stream::operator=(statistics_stream&&) noexcept = default;

std::optional<int64_t> statistics_stream::last_step() const noexcept { return state_->last_step; }
void statistics_stream::set_plan(plan::read_plan plan) { state_->plan = std::move(plan); }
void statistics_stream::set_stop_at_unfinished_records(bool stop) noexcept {
  state_->options.stop_at_unfinished_records = stop;
}
const plan::read_plan& statistics_stream::plan() const noexcept { return state_->plan; }

result<pipeline_counters> statistics_stream::advance(const step_callback& on_step,
                                                     bool include_incomplete) {
  state& s = *state_;
  if (!s.executor) {
    stats::executor_options executor_config;
    executor_config.pinned_pool_bytes = s.options.pinned_pool_bytes;
    auto made = stats::make_statistics_executor(s.options.backend, executor_config);
    if (!made) return made.error_status();
    s.executor = std::move(*made);
  }
  // The steps to process now: after the last one, in range, up to the first incomplete one.
  std::vector<trial::step_info> todo;
  for (const trial::step_info& info : s.trial.step_infos()) {
    if (s.last_step && info.step <= *s.last_step) continue;
    if (!include_incomplete && !s.trial.is_complete(info.step)) break;
    if (step_in_range(info.step, s.plan, s.options)) todo.push_back(info);
  }
  pipeline_counters counters;
  if (todo.empty()) return counters;
  progress_reporter* progress = s.options.progress;
  std::vector<int64_t> todo_bytes;
  int64_t total = 0;
  int64_t largest = 0;
  for (const trial::step_info& info : todo) {
    const state::step_size size = s.step_bytes(info.step);
    state::add_saturated(total, todo_bytes.emplace_back(size.wanted));
    largest = std::max(largest, size.held);
  }
  if (progress != nullptr) progress->begin(static_cast<int64_t>(todo.size()), total);
  const std::size_t batch_count = batches_for(largest, s.executor->staging_pool() != nullptr);
  while (s.batches.size() < batch_count) s.batches.push_back(std::make_unique<detail::step_batch>());
  std::vector<detail::step_batch*> circulating;
  for (std::size_t i = 0; i < batch_count; ++i) circulating.push_back(s.batches[i].get());

  // Remote sources fetch the reads of the steps ahead while these are decoded and computed.
  detail::step_reader planner(s.trial, s.plan, s.options);
  std::size_t planned_step = 0;
  std::deque<io::object_read> planned;
  auto read_ahead = s.trial.source().start_read_ahead([&](io::object_read& next) {
    while (planned.empty() && planned_step < todo.size()) {
      planner.for_each_read(todo[planned_step++], [&](trial::file_id file, const std::vector<io::byte_range>& ranges) {
        planned.push_back({std::string(s.trial.event_file_key(file)), ranges});
      });
    }
    if (planned.empty()) return false;
    next = std::move(planned.front());
    planned.pop_front();
    return true;
  });
  batch_exchange exchange(std::move(circulating));
  detail::step_reader reader(s.trial, s.plan, s.options, s.executor->staging_pool());
  std::thread reader_thread([&] {
    for (const trial::step_info& info : todo) {
      detail::step_batch* batch = exchange.take_free();
      if (batch == nullptr) return;  // the consumer stopped
      status& unfinished = batch->unfinished;
      batch->failure = status::success();
      try {  // no exception may leave this thread (std::terminate): it becomes the run's error
        unfinished = s.options.stop_at_unfinished_records ? check_step_files(s.trial, s.plan, s.options, info)
                                                          : status::success();
        if (unfinished.ok()) {
          (void)reader.read_step(info, *batch);
        } else {
          batch->info = info;  // not read: the consumer stops before it
        }
      } catch (const std::exception& e) {
        batch->info = info;
        batch->failure = status(error_code::out_of_memory,
                                fmt::format("step {}: reading failed: {}", info.step, e.what()));
      }
      exchange.give_full(batch);
    }
  });
  // The reader thread is joined however this function leaves (a callback may throw).
  struct join_reader {
    batch_exchange& exchange;
    std::thread& thread;
    ~join_reader() {
      exchange.close();
      thread.join();
    }
  } joiner{exchange, reader_thread};
  status failure;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    detail::step_batch* batch = exchange.take_full(todo.size() - i);
    if (batch == nullptr) break;
    if (!batch->failure.ok()) {
      failure = batch->failure;
      exchange.close();
      break;
    }
    if (s.options.stop_at_unfinished_records) {
      status unfinished = batch->unfinished;
      for (const auto& r : batch->records) {
        if (!unfinished.ok()) break;
        if (r.raw_status.code() == error_code::truncated_record) unfinished = r.raw_status;
      }
      if (!unfinished.ok()) {  // retry this step after the next refresh
        counters.unfinished_step = batch->info.step;
        counters.unfinished_reason = std::move(unfinished);
        exchange.close();
        break;
      }
    }
    failure = s.compute(*batch);
    if (!failure.ok()) {
      exchange.close();
      break;
    }
    detail::discard_damaged(*batch);  // a mapped file truncated meanwhile: no zeros as values
    counters.steps += 1;
    counters.records += static_cast<int64_t>(batch->records.size());
    counters.bytes_read += batch->bytes_read;
    counters.tensor_bytes += batch->tensor_bytes;
    for (const auto& r : batch->records) counters.failed_records += r.raw_status.ok() ? 0 : 1;
    on_step(stats::step_statistics{batch->info.step, batch->info.mode, batch->info.mode_step, batch->records});
    s.last_step = batch->info.step;
    exchange.give_free(batch);
    if (progress != nullptr) progress->advance(1, todo_bytes[i]);
  }
  if (progress != nullptr) progress->end();
  if (!failure.ok()) return failure;
  return counters;
}

result<pipeline_counters> run_statistics(const trial::catalog& trial, const plan::read_plan& plan,
                                         const pipeline_options& options, const step_callback& on_step) {
  statistics_stream stream(trial, plan, options);
  return stream.advance(on_step, /*include_incomplete=*/true);
}

result<pipeline_counters> run_statistics_from(const statistics_source& source, const trial::catalog& trial,
                                              const plan::read_plan& plan, const pipeline_options& options,
                                              const step_callback& on_step) {
  return source ? source(trial, plan, options, on_step) : run_statistics(trial, plan, options, on_step);
}

}  // namespace trialstat::pipeline

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

#include "host/pipeline/device_verification.hpp"
#include "host/pipeline/step_reader.hpp"
#include "trialstat/stats/fault_injection.hpp"
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

status step_records_written(const trial::catalog& trial, const plan::read_plan& plan, const pipeline_options& options,
                            const trial::step_info& info) {
  return check_step_files(trial, plan, options, info);
}

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

namespace detail {

/// Where a pass left the device for the CPU: the position of the step in the pass that failed
/// its check (or whose computation failed on the device), and why.
struct device_fallback {
  std::size_t position = 0;
  std::string reason;
};

/// How a pass ended: a failure of the run, a fallback to redo on the CPU, or neither.
struct pass_outcome {
  status failure;
  std::optional<device_fallback> fallback;
};

}  // namespace detail

struct statistics_stream::state {
  const trial::catalog& trial;
  plan::read_plan plan;
  pipeline_options options;
  std::unique_ptr<stats::statistics_executor> executor;
  /// Verified batches of a device run (set with the executor).
  std::optional<detail::device_verifier> verifier;
  std::optional<int64_t> last_step;
  /// `resume_after`: the next `advance` first reads the steps of the pairwise history it needs.
  bool prime_history = false;
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

  /// The executor for `options.backend` (with TRIALSTAT_FAULT_INJECT's wrapper) and its
  /// verifier, on the first `advance`. Errors: make_statistics_executor's, a bad switch value.
  status prepare_executor();
  /// Emits one step: counters, the callback, the last step, progress.
  using emit_function = std::function<void(const trial::step_info&, std::span<const stats::statistics_record>,
                                           int64_t bytes_read, int64_t tensor_bytes, int64_t progress_bytes)>;
  /// `progress_bytes[i]`: what progress counts for steps[i]; `largest_held_bytes`: the most
  /// bytes one of `steps` holds while read ahead (`step_size::held`; sizes the read-ahead).
  detail::pass_outcome run_pass(const std::vector<trial::step_info>& steps, std::size_t first_emitted,
                        const std::vector<int64_t>& progress_bytes, int64_t largest_held_bytes,
                        const emit_function& emit, pipeline_counters& counters);
  detail::pass_outcome fall_back(const std::vector<trial::step_info>& todo, std::size_t fallback_position,
                         const std::string& reason, const std::vector<int64_t>& todo_bytes,
                         int64_t largest_held_bytes, const emit_function& emit, pipeline_counters& counters);
  /// The most bytes one of `steps` holds while read ahead (`step_size::held`).
  int64_t largest_held(const std::vector<trial::step_info>& steps) const;
};

statistics_stream::statistics_stream(const trial::catalog& trial, plan::read_plan plan,
                                     pipeline_options options)
    : state_(std::make_unique<state>(
          state{trial, std::move(plan), std::move(options), nullptr, std::nullopt, std::nullopt, false, {}, {}})) {}
statistics_stream::~statistics_stream() = default;
statistics_stream::statistics_stream(statistics_stream&&) noexcept = default;
statistics_stream& statistics_stream::operator=(statistics_stream&&) noexcept = default;

std::optional<int64_t> statistics_stream::last_step() const noexcept { return state_->last_step; }
void statistics_stream::set_plan(plan::read_plan plan) { state_->plan = std::move(plan); }
void statistics_stream::resume_after(int64_t step) {
  state_->last_step = step;
  state_->prime_history = true;
}
void statistics_stream::set_stop_at_unfinished_records(bool stop) noexcept {
  state_->options.stop_at_unfinished_records = stop;
}
const plan::read_plan& statistics_stream::plan() const noexcept { return state_->plan; }


/// One pass of the stream over `steps` (ascending): a reader thread reads them ahead while the
/// executor computes them in order. Steps before `first_emitted` only ready the executor's
/// pairwise history (after a fallback); the others are emitted through `emit`, or, while the
/// device is verified, held until the next passed check (device_verification.hpp).
detail::pass_outcome statistics_stream::state::run_pass(const std::vector<trial::step_info>& steps, std::size_t first_emitted,
                                                const std::vector<int64_t>& progress_bytes,
                                                int64_t largest_held_bytes, const emit_function& emit,
                                                pipeline_counters& counters) {
  detail::pass_outcome outcome;
  const std::size_t batch_count = batches_for(largest_held_bytes, executor->staging_pool() != nullptr);
  while (batches.size() < batch_count) batches.push_back(std::make_unique<detail::step_batch>());
  std::vector<detail::step_batch*> circulating;
  for (std::size_t i = 0; i < batch_count; ++i) circulating.push_back(batches[i].get());

  // Remote sources fetch the reads of the steps ahead while these are decoded and computed.
  detail::step_reader planner(trial, plan, options);
  std::size_t planned_step = 0;
  std::deque<io::object_read> planned;
  auto read_ahead = trial.source().start_read_ahead([&](io::object_read& next) {
    while (planned.empty() && planned_step < steps.size()) {
      planner.for_each_read(steps[planned_step++], [&](trial::file_id file, const std::vector<io::byte_range>& ranges) {
        planned.push_back({std::string(trial.event_file_key(file)), ranges});
      });
    }
    if (planned.empty()) return false;
    next = std::move(planned.front());
    planned.pop_front();
    return true;
  });
  batch_exchange exchange(std::move(circulating));
  detail::step_reader reader(trial, plan, options, executor->staging_pool());
  const auto read_steps = [&] {
    for (const trial::step_info& info : steps) {
      detail::step_batch* batch = exchange.take_free();
      if (batch == nullptr) return;  // the consumer stopped
      status& unfinished = batch->unfinished;
      batch->failure = status::success();
      try {  // no exception may leave this thread (std::terminate): it becomes the run's error
        unfinished = options.stop_at_unfinished_records ? check_step_files(trial, plan, options, info)
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
  };
  // One step (a live poll, the other trial of SimilarAcrossRuns at each base step) is read on
  // this thread first: there is nothing to overlap it with, and a thread started and joined
  // per step cost ~0.5 ms of latency each (518 threads for 517 steps). It takes one of the
  // ≥ 2 free batches, so it never waits for the consumer.
  std::thread reader_thread;
  if (steps.size() == 1) {
    read_steps();
  } else {
    reader_thread = std::thread(read_steps);
  }
  // The reader thread is joined however this function leaves (a callback may throw).
  struct join_reader {
    batch_exchange& exchange;
    std::thread& thread;
    ~join_reader() {
      exchange.close();
      if (thread.joinable()) thread.join();
    }
  } joiner{exchange, reader_thread};

  // Batches go back to the reader with their records recycled on this thread: the executor
  // allocated their histogram and pairwise buffers here, and freeing them on the reader thread
  // contended for this thread's malloc arena (a futex wait and wake per contended free).
  const auto give_back = [&](detail::step_batch* b) {
    detail::recycle_records(*b);
    exchange.give_free(b);
  };
  const bool live = options.stop_at_unfinished_records;
  verifier->reset_reference();  // prime steps of an earlier pass are not this one's history
  const int history_depth = plan.max_history_depth();
  // Live: the last step held, kept unrecycled with its records as read until the next step is
  // known to be there, so that a poll's last step can be checked (`clean`: before computing).
  detail::step_batch* pending = nullptr;
  std::size_t pending_position = 0;
  std::vector<stats::statistics_record> clean, pending_clean;
  const auto release_held = [&] {
    for (detail::held_step& held : verifier->take_held()) {
      emit(held.info, held.records, held.bytes_read, held.tensor_bytes, held.progress_bytes);
      counters.verified_steps += 1;
    }
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    detail::step_batch* batch = exchange.take_full(steps.size() - i);
    if (batch == nullptr) break;
    if (!batch->failure.ok()) {
      outcome.failure = batch->failure;
      break;
    }
    if (live) {
      status unfinished = batch->unfinished;
      for (const auto& r : batch->records) {
        if (!unfinished.ok()) break;
        if (r.raw_status.code() == error_code::truncated_record) unfinished = r.raw_status;
      }
      if (!unfinished.ok()) {  // retry this step after the next refresh
        counters.unfinished_step = batch->info.step;
        counters.unfinished_reason = std::move(unfinished);
        give_back(batch);
        break;
      }
    }
    if (pending != nullptr) {  // the step after it is there: no late check needed
      give_back(pending);
      pending = nullptr;
    }
    const bool emitted = i >= first_emitted;
    const bool verifying = emitted && verifier->active();
    const detail::verification_role role =
        verifying ? verifier->role_of(i, steps.size(), !live, history_depth) : detail::verification_role::none;
    const bool keep_clean = role != detail::verification_role::none || (verifying && live);
    if (keep_clean) clean = batch->records;
    if (status computed = compute(*batch); !computed.ok()) {
      if (verifying && detail::is_device_failure(computed)) {
        outcome.fallback = detail::device_fallback{i, fmt::format("the {} backend failed at step {}: {}", verifier->device_name(),
                                                          batch->info.step, computed.to_string())};
      } else {
        outcome.failure = std::move(computed);
      }
      break;
    }
    detail::discard_damaged(*batch);  // a mapped file truncated meanwhile: no zeros as values
    if (role != detail::verification_role::none) {
      auto difference = verifier->compare(*batch, clean, batch->records, plan, trial, work);
      if (!difference) {
        outcome.failure = difference.error_status();
        break;
      }
      if (difference->has_value()) {
        outcome.fallback = detail::device_fallback{i, fmt::format("the {} backend's results differ from the CPU twin's: {}",
                                                          verifier->device_name(), **difference)};
        break;
      }
    }
    if (!emitted) {
      give_back(batch);
      continue;
    }
    if (verifying) verifier->count_steps(1);
    if (!verifying) {
      emit(batch->info, batch->records, batch->bytes_read, batch->tensor_bytes, progress_bytes[i]);
      give_back(batch);
    } else if (role == detail::verification_role::check) {
      release_held();
      emit(batch->info, batch->records, batch->bytes_read, batch->tensor_bytes, progress_bytes[i]);
      counters.verified_steps += 1;
      verifier->close_window();
      give_back(batch);
    } else {
      verifier->hold(*batch, progress_bytes[i]);
      if (live) {
        pending = batch;
        pending_position = i;
        std::swap(pending_clean, clean);
      } else {
        give_back(batch);
      }
    }
  }
  // A live poll's last step: checked now (without the steps before it, so the pairwise entries
  // the CPU twin cannot compute are not compared), then everything held is emitted.
  if (pending != nullptr && outcome.failure.ok() && !outcome.fallback && verifier->active()) {
    verifier->reset_reference();  // its history must hold no older window's steps
    auto difference = verifier->compare(*pending, pending_clean, verifier->last_held_records(), plan, trial, work);
    if (!difference) {
      outcome.failure = difference.error_status();
    } else if (difference->has_value()) {
      outcome.fallback = detail::device_fallback{pending_position,
                                         fmt::format("the {} backend's results differ from the CPU twin's: {}",
                                                     verifier->device_name(), **difference)};
    } else {
      release_held();
      verifier->close_window();
    }
  }
  if (pending != nullptr) give_back(pending);
  return outcome;
}

int64_t statistics_stream::state::largest_held(const std::vector<trial::step_info>& steps) const {
  int64_t largest = 0;
  for (const trial::step_info& info : steps) largest = std::max(largest, step_bytes(info.step).held);
  return largest;
}

status statistics_stream::state::prepare_executor() {
  if (executor) return status::success();
  auto fault = stats::fault_injection_from_environment();
  if (!fault) return fault.error_status();
  stats::executor_options executor_config;
  executor_config.pinned_pool_bytes = options.pinned_pool_bytes;
  auto made = stats::make_statistics_executor(options.backend, executor_config);
  if (!made) return made.error_status();
  executor = stats::inject_faults(std::move(*made), *fault);
  verifier.emplace(options, fault->active() && options.backend == stats::backend::cpu);
  return status::success();
}

/// The device failed a check or a computation: warn once, leave it for a CPU executor, and
/// redo on the CPU every step held since the last passed check and the rest of `todo` (from
/// `fallback_position`), after the steps the CPU executor's pairwise history needs.
detail::pass_outcome statistics_stream::state::fall_back(const std::vector<trial::step_info>& todo, std::size_t fallback_position,
                                                 const std::string& reason, const std::vector<int64_t>& todo_bytes,
                                                 int64_t largest_held_bytes, const emit_function& emit,
                                                 pipeline_counters& counters) {
  detail::pass_outcome outcome;
  const int64_t redo_from = verifier->first_held_step().value_or(todo[fallback_position].step);
  (void)verifier->take_held();
  verifier->deactivate();
  const std::string warning =
      fmt::format("{}; recomputing from step {} on the CPU and finishing the run there (--verify-device)", reason,
                  redo_from);
  counters.device_fallback = warning;
  if (options.warn) {
    options.warn(warning);
  } else {
    fmt::print(stderr, "trialstat: warning: {}\n", warning);
  }
  // The step batches may hold leases of the device executor's pinned pool: they go first, then
  // the device executor (its context may be lost).
  batches.clear();
  executor.reset();
  auto made = stats::make_statistics_executor(stats::backend::cpu);
  if (!made) {
    outcome.failure = made.error_status();
    return outcome;
  }
  executor = std::move(*made);
  options.backend = stats::backend::cpu;
  std::vector<trial::step_info> steps = detail::history_steps_before(trial, plan, options, redo_from);
  const std::size_t first_emitted = steps.size();
  const int64_t largest = std::max(largest_held_bytes, largest_held(steps));
  std::vector<int64_t> bytes(first_emitted, 0);
  std::size_t redo_position = 0;
  while (redo_position < todo.size() && todo[redo_position].step < redo_from) ++redo_position;
  // Held steps of an earlier `advance` (none: each ends with a check) would come before todo.
  for (std::size_t i = redo_position; i < todo.size(); ++i) {
    steps.push_back(todo[i]);
    bytes.push_back(todo_bytes[i]);
  }
  return run_pass(steps, first_emitted, bytes, largest, emit, counters);
}

result<pipeline_counters> statistics_stream::advance(const step_callback& on_step,
                                                     bool include_incomplete) {
  state& s = *state_;
  TRIALSTAT_RETURN_IF_ERROR(s.prepare_executor());
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
  if (s.prime_history) {
    // After `resume_after`: the steps whose records the first new ones compare with are read
    // (into the executor's pairwise history), not emitted.
    s.prime_history = false;
    const std::vector<trial::step_info> history = detail::history_steps_before(s.trial, s.plan, s.options, todo.front().step);
    if (!history.empty()) {
      const std::vector<int64_t> none(history.size(), 0);
      const detail::pass_outcome primed =
          s.run_pass(history, history.size(), none, s.largest_held(history), {}, counters);
      if (!primed.failure.ok()) return primed.failure;
    }
  }
  if (progress != nullptr) progress->begin(static_cast<int64_t>(todo.size()), total);
  const state::emit_function emit = [&](const trial::step_info& info, std::span<const stats::statistics_record> records,
                                        int64_t bytes_read, int64_t tensor_bytes, int64_t step_progress_bytes) {
    counters.steps += 1;
    counters.records += static_cast<int64_t>(records.size());
    counters.bytes_read += bytes_read;
    counters.tensor_bytes += tensor_bytes;
    for (const auto& r : records) counters.failed_records += r.raw_status.ok() ? 0 : 1;
    on_step(stats::step_statistics{info.step, info.mode, info.mode_step, records});
    s.last_step = info.step;
    if (progress != nullptr) progress->advance(1, step_progress_bytes);
  };
  detail::pass_outcome outcome = s.run_pass(todo, 0, todo_bytes, largest, emit, counters);
  if (outcome.fallback) {
    outcome = s.fall_back(todo, outcome.fallback->position, outcome.fallback->reason, todo_bytes, largest, emit,
                          counters);
  }
  if (progress != nullptr) progress->end();
  if (!outcome.failure.ok()) return outcome.failure;
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

// SPDX-License-Identifier: Apache-2.0
// The statistics stream: a reader thread (read + decode one step ahead) feeding an executor,
// records emitted in global-step order.
#include "trialstat/pipeline/statistics_pipeline.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "host/pipeline/step_reader.hpp"
#include "trialstat/pipeline/statistics_executor.hpp"

namespace trialstat::pipeline {
namespace {

/// Two step batches circulate between the reader thread and the consumer: the reader fills one
/// while the consumer computes and emits the other.
class batch_exchange {
 public:
  explicit batch_exchange(std::vector<detail::step_batch*> free) : free_(free.begin(), free.end()) {}

  detail::step_batch* take_free() { return pop(free_); }
  void give_free(detail::step_batch* b) { push(free_, b); }
  detail::step_batch* take_full() { return pop(full_); }
  void give_full(detail::step_batch* b) { push(full_, b); }
  /// Wake everybody and make every later take return nullptr (end of input or an error).
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    ready_.notify_all();
  }

 private:
  detail::step_batch* pop(std::deque<detail::step_batch*>& q) {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !q.empty() || closed_; });
    if (q.empty()) return nullptr;
    auto* b = q.front();
    q.pop_front();
    return b;
  }
  void push(std::deque<detail::step_batch*>& q, detail::step_batch* b) {
    std::lock_guard lock(mutex_);
    q.push_back(b);
    ready_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<detail::step_batch*> free_, full_;
  bool closed_ = false;
};

}  // namespace

struct statistics_stream::state {
  const trial::catalog& trial;
  plan::read_plan plan;
  pipeline_options options;
  std::unique_ptr<statistics_executor> executor;
  std::optional<int64_t> last_step;
  detail::step_batch batches[2];
  tensor_batch work;

  bool in_range(int64_t step) const {
    for (const auto& begin : {plan.step_begin, options.step_begin}) {
      if (begin && step < *begin) return false;
    }
    for (const auto& end : {plan.step_end, options.step_end}) {
      if (end && step >= *end) return false;
    }
    return true;
  }

  /// Hand one step's segments to the executor (file buffers, then typed-field fallbacks).
  status compute(detail::step_batch& batch) {
    for (std::size_t p = 0; p < batch.parts_used; ++p) {
      detail::file_part& part = batch.parts[p];
      for (int pass = 0; pass < 2; ++pass) {
        const auto& segments = pass == 0 ? part.segments : part.fallback_segments;
        const auto& indices = pass == 0 ? part.segment_records : part.fallback_records;
        if (segments.empty()) continue;
        work.clear();
        work.base = pass == 0 ? part.file.buffer().data() : part.fallback.data();
        work.segments = segments;
        for (std::size_t index : indices) work.records.push_back(&batch.records[index]);
        TRIALSTAT_RETURN_IF_ERROR(executor->compute(plan, work));
      }
    }
    return status::success();
  }
};

statistics_stream::statistics_stream(const trial::catalog& trial, plan::read_plan plan,
                                     pipeline_options options)
    : state_(std::make_unique<state>(state{trial, std::move(plan), options, nullptr, std::nullopt, {}, {}})) {}
statistics_stream::~statistics_stream() = default;
statistics_stream::statistics_stream(statistics_stream&&) noexcept = default;
statistics_stream& statistics_stream::operator=(statistics_stream&&) noexcept = default;

std::optional<int64_t> statistics_stream::last_step() const noexcept { return state_->last_step; }
const plan::read_plan& statistics_stream::plan() const noexcept { return state_->plan; }

result<pipeline_counters> statistics_stream::advance(const step_callback& on_step,
                                                     bool include_incomplete) {
  state& s = *state_;
  if (!s.executor) {
    auto made = make_statistics_executor(s.options.backend);
    if (!made) return made.error_status();
    s.executor = std::move(*made);
  }
  // The steps to process now: after the last one, in range, up to the first incomplete one.
  std::vector<trial::step_info> todo;
  for (const trial::step_info& info : s.trial.step_infos()) {
    if (s.last_step && info.step <= *s.last_step) continue;
    if (!include_incomplete && !s.trial.is_complete(info.step)) break;
    if (s.in_range(info.step)) todo.push_back(info);
  }
  pipeline_counters counters;
  if (todo.empty()) return counters;

  batch_exchange exchange({&s.batches[0], &s.batches[1]});
  detail::step_reader reader(s.trial, s.plan, s.options);
  std::thread reader_thread([&] {
    for (const trial::step_info& info : todo) {
      detail::step_batch* batch = exchange.take_free();
      if (batch == nullptr) return;  // the consumer stopped
      (void)reader.read_step(info, *batch);
      exchange.give_full(batch);
    }
  });
  status failure;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    detail::step_batch* batch = exchange.take_full();
    failure = s.compute(*batch);
    if (!failure.ok()) {
      exchange.close();
      break;
    }
    counters.steps += 1;
    counters.records += static_cast<int64_t>(batch->records.size());
    counters.bytes_read += batch->bytes_read;
    counters.tensor_bytes += batch->tensor_bytes;
    for (const auto& r : batch->records) counters.failed_records += r.raw_status.ok() ? 0 : 1;
    on_step(plan::step_statistics{batch->info.step, batch->info.mode, batch->info.mode_step, batch->records});
    s.last_step = batch->info.step;
    exchange.give_free(batch);
  }
  reader_thread.join();
  if (!failure.ok()) return failure;
  return counters;
}

result<pipeline_counters> run_statistics(const trial::catalog& trial, const plan::read_plan& plan,
                                         const pipeline_options& options, const step_callback& on_step) {
  statistics_stream stream(trial, plan, options);
  return stream.advance(on_step, /*include_incomplete=*/true);
}

}  // namespace trialstat::pipeline

// SPDX-License-Identifier: Apache-2.0
// The store-backed statistics source: plan which records come from the store and which are
// read (record_identity.hpp says whether a row still describes its record), run the inner source
// on the rest, merge each step's records back into the plain run's order, write new rows.
#include "trialstat/store/store_source.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "host/store/held_rows.hpp"
#include "host/store/record_identity.hpp"
#include "host/store/row_reader.hpp"
#include "host/store/row_builder.hpp"
#include "trialstat/stats/record_codec.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store {
namespace {

using detail::entry_key;

struct entry_key_hasher {
  std::size_t operator()(const entry_key& k) const noexcept { return detail::entry_key_hash(k); }
};

/// What this run does with a held row: `served` (emitted from the store at its step);
/// `also_read`: read anyway, for the pairwise history of a later record that must be read (the
/// stored record is still the one emitted); `keep_previous`: comparisons to keep (the run's
/// range starts after the older ones; UINT32_MAX: all the record holds).
struct serve_state {
  uint32_t keep_previous = 0;
  bool served = false;
  bool also_read = false;
};

/// Decode the stored record of held row `held` (of `entry` at `step`) into `record` (its buffers
/// reused), as the step reader fills one in this catalog. False when the blob (its checksum
/// verified when it was read) does not decode as one whole record.
[[nodiscard]] bool decode_served(const detail::held_rows& rows, uint32_t held, std::size_t keep_previous,
                                 const trial::tensor_entry& entry, const stats::step_statistics& step,
                                 std::vector<std::byte>& raw, stats::statistics_record& record) {
  std::size_t at = 0;
  if (!unpack_record(rows.record(held), raw).ok() || !stats::read_record(raw, at, record) || at != raw.size()) {
    return false;
  }
  if (record.previous.size() > keep_previous) record.previous.resize(keep_previous);
  record.tensor = entry.tensor;
  record.worker = entry.worker;
  record.step = step.step;
  record.mode = step.mode;
  record.mode_step = step.mode_step;
  return true;
}

/// Thrown out of a step callback (and the pipeline, which joins its reader thread on the way) to
/// finish a run without the store: the steps after `step`, or from `step` on when `including`
/// (that step was not emitted).
struct restart_after {
  int64_t step = 0;
  bool including = false;
};

/// The whole run from the store: every visited step (as the pipeline visits them, records or
/// not) through `emit` with no records read; the counters a plain run reports, bytes aside.
template <typename Emit>
pipeline::pipeline_counters emit_all(const std::vector<const trial::step_info*>& visits, progress_reporter* progress,
                                     Emit& emit) {
  pipeline::pipeline_counters counters;
  if (progress != nullptr) progress->begin(static_cast<int64_t>(visits.size()), 0);
  for (const trial::step_info* info : visits) {
    emit(stats::step_statistics{info->step, info->mode, info->mode_step, {}});
    counters.steps += 1;
    if (progress != nullptr) progress->advance(1, 0);
  }
  if (progress != nullptr) progress->end();
  return counters;
}

}  // namespace

struct store_source::state {
  store_source_options options;
  pipeline::statistics_source inner;
  store_run_summary summary;
  std::optional<statistics_store> db;
  bool unusable = false;      // warned once: later runs go straight to the inner source
  std::atomic<bool> write_failed = false;  // warned once: rows are no longer written
  row_batch pending;
  detail::row_scratch scratch;  // a new row's buffers (reused)
  std::vector<std::byte> raw;  // a served record's unpacked bytes (emit)
  detail::read_rows_outcome read;  // the rows of the run at hand, as read
  detail::held_rows held;          // of them, those the run may serve (views into `read`)
  std::unique_ptr<detail::row_prefetch> prefetch;  // rows being read ahead for the next run
  std::vector<stats::statistics_record> merged;  // a step's records (reused)
  /// Rows are written on a thread of their own while the run computes the next steps (SQLite's
  /// inserts would otherwise delay every 64th step); `finish_writes` waits for it. The
  /// connection is used by that thread alone while it runs.
  std::thread writer;
  std::mutex queue_mutex;
  std::condition_variable queue_ready;
  std::deque<row_batch> queue;
  std::vector<row_batch> spare;  // written batches, their memory kept for the next ones
  bool queue_closed = false;
  std::atomic<int64_t> written_rows = 0;

  /// The row-writer thread and the run's thread both warn: one at a time (a C API trial
  /// appends to its warning list).
  mutable std::mutex warn_mutex;
  void warn(const status& s) const {
    if (!options.warn) return;
    std::lock_guard lock(warn_mutex);
    options.warn(s);
  }
  void give_up(const status& why) {
    warn(why);
    unusable = true;
    db.reset();
  }
  void write_loop() {
    for (;;) {
      row_batch rows;
      {
        std::unique_lock lock(queue_mutex);
        queue_ready.wait(lock, [&] { return !queue.empty() || queue_closed; });
        if (queue.empty()) return;
        rows = std::move(queue.front());
        queue.pop_front();
      }
      if (!write_failed) {
        status written = db->write_rows(rows);
        if (written.ok()) {
          written_rows += static_cast<int64_t>(rows.size());
        } else {
          write_failed = true;
          warn(status(written.code(),
                      written.message() + " (rows are no longer written; the results are not affected)"));
        }
      }
      rows.clear();
      std::lock_guard lock(queue_mutex);
      spare.push_back(std::move(rows));
    }
  }
  /// Hand the pending rows to the writer thread (started at the first batch).
  void flush() {
    if (pending.empty() || !db || write_failed) {
      pending.clear();
      return;
    }
    if (!writer.joinable()) {
      queue_closed = false;
      writer = std::thread([this] { write_loop(); });
    }
    {
      std::lock_guard lock(queue_mutex);
      queue.push_back(std::move(pending));
      pending = row_batch();
      if (!spare.empty()) {
        pending = std::move(spare.back());
        spare.pop_back();
      }
    }
    queue_ready.notify_one();
  }
  /// Wait until every handed-over row is written (or failed).
  void finish_writes() {
    if (!writer.joinable()) return;
    {
      std::lock_guard lock(queue_mutex);
      queue_closed = true;
    }
    queue_ready.notify_one();
    writer.join();
    spare.clear();  // the run's batches: their memory goes with the run
    summary.written += written_rows.exchange(0);
  }
  ~state() { finish_writes(); }
};

int64_t min_record_bytes_for(const store_source_options& options, const trial::catalog& trial) {
  if (options.min_record_bytes >= 0) return options.min_record_bytes;
  if (const char* given = std::getenv("TRIALSTAT_STORE_MIN_RECORD_BYTES"); given != nullptr && *given != '\0') {
    char* end = nullptr;
    const long long bytes = std::strtoll(given, &end, 10);
    if (end != given && bytes >= 0) return bytes;
  }
  return trial.source().is_remote() ? 0 : default_min_record_bytes;
}

store_source::store_source(store_source_options options, pipeline::statistics_source inner)
    : state_(std::make_unique<state>()) {
  state_->options = std::move(options);
  state_->inner = std::move(inner);
}
store_source::~store_source() = default;

void store_source::prefetch(std::string_view trial_location, std::optional<int64_t> step_begin,
                            std::optional<int64_t> step_end) {
  state& s = *state_;
  if (!s.options.serve || s.unusable || s.db || s.prefetch) return;
  const int64_t first = step_begin.value_or(std::numeric_limits<int64_t>::min());
  const int64_t last = step_end ? *step_end - 1 : std::numeric_limits<int64_t>::max();
  if (first > last) return;
  // Only an existing store: a cold run has no rows to read, and a trial that then fails to open
  // must not leave a new store behind.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(s.options.path, ec)) return;
  try {
    s.prefetch = std::make_unique<detail::row_prefetch>(s.options.path, canonical_location(trial_location),
                                                        s.options.max_store_bytes, first, last);
  } catch (const std::system_error&) {
    // No thread to spare: the run opens the store and reads its rows itself.
  }
}

pipeline::statistics_source store_source::source() {
  return [this](const trial::catalog& trial, const plan::read_plan& plan, const pipeline::pipeline_options& options,
                const pipeline::step_callback& on_step) { return run(trial, plan, options, on_step); };
}
const store_run_summary& store_source::summary() const noexcept { return state_->summary; }
const std::filesystem::path& store_source::path() const noexcept { return state_->options.path; }

result<pipeline::pipeline_counters> store_source::run(const trial::catalog& trial, const plan::read_plan& plan,
                                                      const pipeline::pipeline_options& options,
                                                      const pipeline::step_callback& on_step) {
  state& s = *state_;
  const auto plain = [&]() -> result<pipeline::pipeline_counters> {
    auto counters = pipeline::run_statistics_from(s.inner, trial, plan, options, on_step);
    if (counters) s.summary.bytes_read += counters->bytes_read;
    if (counters) s.summary.read += counters->records;
    return counters;
  };
  if (s.unusable || options.stop_at_unfinished_records) return plain();

  // The steps this run visits (as run_statistics: every saved step in range, complete or not).
  std::vector<const trial::step_info*> visits;
  for (const trial::step_info& info : trial.step_infos()) {
    if (pipeline::step_in_range(info.step, plan, options)) visits.push_back(&info);
  }
  if (visits.empty()) return plain();
  // Per tensor: its request's signature, or nothing when its records cannot come from the store.
  std::unordered_map<trial::tensor_id, std::string> signatures;
  for (const auto& [tensor, request] : plan.requests()) {
    if (request_storable(request)) signatures.emplace(tensor, request_signature(request, options.backend));
  }
  if (signatures.empty()) return plain();

  const int64_t first_step = visits.front()->step;
  const int64_t last_step = visits.back()->step;
  // The connection and rows read ahead for this trial's steps (`prefetch`), when there are.
  detail::read_rows_outcome& read = s.read;
  read = {};
  bool rows_read = false;
  if (std::unique_ptr<detail::row_prefetch> prefetched = std::move(s.prefetch)) {
    detail::row_prefetch::outcome& ahead = prefetched->wait();
    if (ahead.db && ahead.location == canonical_location(trial.location()) && ahead.first <= first_step &&
        last_step <= ahead.last && !s.db) {
      if (!*ahead.db) {
        s.give_up(status(ahead.db->error_status().code(),
                         ahead.db->error_status().message() + " (the trial is read instead)"));
        return plain();
      }
      s.db.emplace(std::move(**ahead.db));
      read = std::move(ahead.rows);
      rows_read = true;
    }
  }
  if (!s.db) {
    auto opened = statistics_store::open(s.options.path, canonical_location(trial.location()),
                                         s.options.max_store_bytes);
    if (!opened) {
      s.give_up(status(opened.error_status().code(),
                       opened.error_status().message() + " (the trial is read instead)"));
      return plain();
    }
    s.db.emplace(std::move(*opened));
  }
  detail::identity_cache identities(trial);
  {  // A source that cannot tell versions (neither local nor S3) never uses the store.
    const status probe = identities.probe();
    if (!probe.ok()) {
      s.give_up(status(probe.code(), fmt::format("statistics store {}: {} (the trial is read instead)",
                                                 s.options.path.string(), probe.message())));
      return plain();
    }
  }
  if (s.options.serve && !rows_read) read = detail::read_store_rows(*s.db, s.options.path, first_step, last_step);
  if (!read.error.ok()) {
    s.give_up(status(read.error.code(), read.error.message() + " (the trial is read instead)"));
    return plain();
  }
  if (read.damaged > 0) {
    s.warn(status(error_code::data_loss,
                  fmt::format("statistics store {}: {} damaged row(s) ignored (their records are read again)",
                              s.options.path.string(), read.damaged)));
  }

  // The rows of the visited steps that hold this run's request of their tensor (views into the
  // arenas they were read into).
  const auto names = trial.tensor_names();
  const auto workers = trial.workers();
  // Per tensor name: its id and the signature its rows must carry (one look-up a row).
  std::unordered_map<std::string_view, std::pair<trial::tensor_id, std::string_view>> tensor_ids;
  tensor_ids.reserve(signatures.size());
  for (const auto& [tensor, signature] : signatures) {
    tensor_ids.emplace(names[tensor], std::pair<trial::tensor_id, std::string_view>(tensor, signature));
  }
  std::unordered_map<std::string_view, trial::worker_id> worker_ids;
  for (trial::worker_id w = 0; w < workers.size(); ++w) worker_ids.emplace(workers[w], w);
  detail::held_rows& rows = s.held;
  rows.clear();
  std::size_t read_rows = 0;
  for (const detail::row_arena& arena : read.arenas) read_rows += arena.size();
  rows.reserve(read_rows);
  for (const detail::row_arena& arena : read.arenas) {
    for (std::size_t i = 0; i < arena.size(); ++i) {
      const row_view v = arena.view(i);
      if (v.step < first_step || v.step > last_step) continue;  // read ahead for a wider range
      const auto tensor = tensor_ids.find(v.tensor);
      if (tensor == tensor_ids.end() || tensor->second.second != v.request) continue;
      const auto worker = worker_ids.find(v.worker);
      if (worker == worker_ids.end()) continue;
      rows.add(entry_key{v.step, tensor->second.first, worker->second}, v);
    }
  }
  rows.build_index();

  // Which records come from the store.
  const int64_t history_reads_before = s.summary.history_reads;
  const int64_t restarts_before = s.summary.restarts;
  detail::record_size_rule sizes(min_record_bytes_for(s.options, trial));
  for (const trial::step_info* info : visits) {
    for (const trial::tensor_entry& entry : trial.entries_at(info->step)) {
      const stats::statistics_request* request = plan.find(entry.tensor);
      if (request != nullptr && signatures.count(entry.tensor) != 0 && plan.reads_worker(entry.worker)) {
        sizes.note(entry, *request);
      }
    }
  }
  std::vector<serve_state> serving(rows.size());
  struct history_state {
    std::deque<std::pair<int64_t, uint64_t>> kept;  // (step, identity hash) the executor would hold
    std::deque<entry_key> kept_keys;
    bool reading = false;  // a read whose outcome cannot be predicted: every later one is read too
  };
  // Records read whose pairwise history later served rows rely on: predicted to enter the
  // executor's history (a raw record that decodes); checked when they arrive (`emit`).
  std::unordered_set<entry_key, entry_key_hasher> predicted;
  std::unordered_map<uint64_t, history_state> histories;
  std::vector<std::byte> raw;
  row_identity identity;          // of the entry at hand (buffers reused)
  std::string expected_previous;  // what its row must have compared with (buffer reused)
  stats::statistics_record record;
  int64_t to_read = 0;  // entries the inner source must read (history copies aside)
  const auto keep = [](history_state& history, int depth, int64_t step, uint64_t hash, const entry_key& key) {
    history.kept.emplace_back(step, hash);
    history.kept_keys.push_back(key);
    while (static_cast<int>(history.kept.size()) > depth) {
      history.kept.pop_front();
      history.kept_keys.pop_front();
    }
  };
  for (const trial::step_info* info : visits) {
    for (const trial::tensor_entry& entry : trial.entries_at(info->step)) {
      const stats::statistics_request* request = plan.find(entry.tensor);
      if (request == nullptr || !plan.reads_worker(entry.worker)) continue;
      const entry_key key{info->step, entry.tensor, entry.worker};
      const auto signature = signatures.find(entry.tensor);
      history_state* history =
          request->history_depth > 0 ? &histories[static_cast<uint64_t>(entry.tensor) << 32 | entry.worker] : nullptr;
      const auto read_it = [&](const row_identity* known) {
        ++to_read;
        if (history == nullptr || history->reading) return;
        // The executor needs the copies this read compares with: served ones are read too.
        for (const entry_key& before : history->kept_keys) {
          const uint32_t held = rows.find(before);
          if (held != detail::held_rows::none && serving[held].served && !serving[held].also_read) {
            serving[held].also_read = true;
            ++s.summary.history_reads;
          }
        }
        if (!s.options.serve || !entry.raw || known == nullptr) {
          history->reading = true;  // its outcome and identity unknown: read every later one
          return;
        }
        // Predicted to enter the history (verified in `emit`): later rows that compared with
        // these bytes can still be served.
        keep(*history, request->history_depth, info->step, detail::identity_hash(*known), key);
        predicted.insert(key);
      };
      if (signature == signatures.end() || (history != nullptr && history->reading)) {
        read_it(nullptr);
        continue;
      }
      if (sizes.small(entry, *request)) {
        ++s.summary.small;  // cheaper to read than to keep
        read_it(nullptr);
        continue;
      }
      const bool identified = identities.of(entry, *request, identity);
      const uint32_t held = identified ? rows.find(key) : detail::held_rows::none;
      if (held == detail::held_rows::none) {
        read_it(identified ? &identity : nullptr);
        continue;
      }
      // The previous steps this run compares with (newest first): the row's, or their newest
      // part when this run holds fewer (a step range that starts later: the plain run compares
      // with what it visited, so the older comparisons are dropped from the record).
      expected_previous.clear();
      std::size_t expected_count = 0;
      if (history != nullptr) {
        for (auto it = history->kept.rbegin(); it != history->kept.rend(); ++it, ++expected_count) {
          if (!expected_previous.empty()) expected_previous.push_back('|');
          detail::append_previous_item(expected_previous, it->first, it->second);
        }
      }
      const std::string_view held_previous = rows.previous(held);
      const bool previous_match =
          held_previous == expected_previous ||
          (expected_previous.empty() ? !held_previous.empty()
                                     : held_previous.starts_with(expected_previous) &&
                                           held_previous.size() > expected_previous.size() &&
                                           held_previous[expected_previous.size()] == '|');
      // Under pairwise statistics the stored outcome decides what the executor's history would
      // hold, so the record is decoded now; otherwise it is decoded once, when its step is emitted
      // (a blob that does not decode then restarts the run from that step without the store).
      bool valid = previous_match && rows.describes(held, identity);
      if (valid && history != nullptr) {
        std::size_t at = 0;
        valid = unpack_record(rows.record(held), raw).ok() && stats::read_record(raw, at, record) && at == raw.size();
      }
      if (!valid) {
        ++s.summary.stale;
        read_it(&identity);
        continue;
      }
      if (history != nullptr && record.raw_status.ok()) {  // computed: the executor would keep it
        keep(*history, request->history_depth, info->step, detail::identity_hash(identity), key);
      }
      serving[held] = serve_state{history != nullptr ? static_cast<uint32_t>(expected_count) : UINT32_MAX, true, false};
    }
  }
  s.summary.used = true;

  // The held row a record is served from, or none.
  const auto served_row = [&rows, &serving](const entry_key& key) {
    const uint32_t held = rows.find(key);
    return held != detail::held_rows::none && serving[held].served ? held : detail::held_rows::none;
  };

  // Read what the store lacks; merge each step's records back into the plain run's order.
  pipeline::pipeline_options inner_options = options;
  inner_options.read_entry = [&served_row, &serving](const trial::tensor_entry& entry) {
    const uint32_t held = served_row(entry_key{entry.step, entry.tensor, entry.worker});
    return held == detail::held_rows::none || serving[held].also_read;
  };
  // A new row for a record read, when the record describes its bytes for good.
  const auto write_row = [&](const trial::tensor_entry& entry, const stats::statistics_request& request,
                             const stats::statistics_record& fresh) {
    const auto signature = signatures.find(entry.tensor);
    if (s.write_failed || signature == signatures.end()) return;
    (void)detail::append_row(s.pending, trial, identities, entry, request, signature->second, fresh, sizes,
                             s.scratch);
  };
  // A step's records; the elements (and their buffers) are reused from step to step.
  std::vector<stats::statistics_record>& merged = s.merged;
  bool mispredicted = false;
  int64_t emitted_steps = 0;
  int64_t emitted_records = 0;
  int64_t emitted_failed = 0;
  int64_t served_count = 0;
  int64_t served_failed = 0;
  int64_t steps_done = 0;
  status merge_failure;
  const auto emit = [&](const stats::step_statistics& step) {
    if (!merge_failure.ok()) return;
    std::size_t count = 0;  // records of this step in `merged`
    int64_t step_served = 0;  // of them, from the store alone
    const auto next_out = [&]() -> stats::statistics_record& {
      if (count == merged.size()) merged.emplace_back();
      return merged[count++];
    };
    // A step without a served record passes through as read (no copy of its records).
    bool any_served = false;
    for (const trial::tensor_entry& entry : trial.entries_at(step.step)) {
      if (served_row(entry_key{step.step, entry.tensor, entry.worker}) != detail::held_rows::none) {
        any_served = true;
        break;
      }
    }
    std::size_t next = 0;  // the inner source's records, in the same (worker, tensor) order
    for (const trial::tensor_entry& entry : trial.entries_at(step.step)) {
      const stats::statistics_request* request = plan.find(entry.tensor);
      if (request == nullptr || !plan.reads_worker(entry.worker)) continue;
      const entry_key key{step.step, entry.tensor, entry.worker};
      const uint32_t held = served_row(key);
      const bool from_store = held != detail::held_rows::none;
      const bool from_inner = !from_store || serving[held].also_read;
      if (from_inner) {
        if (next >= step.records.size() || step.records[next].tensor != entry.tensor ||
            step.records[next].worker != entry.worker) {
          merge_failure = status(error_code::invalid_argument,
                                 fmt::format("statistics store: step {}: the records read do not line up with "
                                             "the catalog's entries",
                                             step.step));
          return;
        }
        const stats::statistics_record& fresh = step.records[next++];
        if (!from_store) {
          // A record predicted to enter the pairwise history that did not (it could not be
          // read): later served rows compared with it, so the rest of the run is read.
          if (!fresh.raw_status.ok() && predicted.count(key) != 0) mispredicted = true;
          if (any_served) next_out() = fresh;
          write_row(entry, *request, fresh);
          continue;
        }
      }
      stats::statistics_record& out = next_out();
      if (!decode_served(rows, held, serving[held].keep_previous, entry, step, s.raw, out)) {
        ++s.summary.stale;
        throw restart_after{step.step, true};  // nothing of this step was emitted yet
      }
      ++served_count;
      if (!from_inner) ++step_served;
      if (!out.raw_status.ok()) ++served_failed;
    }
    if (next != step.records.size()) {
      merge_failure = status(error_code::invalid_argument,
                             fmt::format("statistics store: step {}: {} record(s) read that the catalog does not list",
                                         step.step, step.records.size() - next));
      return;
    }
    const std::span<const stats::statistics_record> records =
        any_served ? std::span<const stats::statistics_record>(merged.data(), count) : step.records;
    on_step(stats::step_statistics{step.step, step.mode, step.mode_step, records});
    ++emitted_steps;
    emitted_records += static_cast<int64_t>(records.size());
    for (const auto& r : records) emitted_failed += r.raw_status.ok() ? 0 : 1;
    if (options.progress != nullptr && step_served > 0) options.progress->served(step_served);
    if (++steps_done % std::max<int64_t>(1, s.options.commit_every_steps) == 0) s.flush();
    if (mispredicted) throw restart_after{step.step};  // this step is right; the next ones may not be
  };
  auto counters = [&]() -> result<pipeline::pipeline_counters> {
    // However the run ends (a callback may throw), the writer thread is joined first.
    struct join_writer {
      state& s;
      ~join_writer() {
        s.flush();
        s.finish_writes();
      }
    } joiner{s};
    try {
      if (to_read == 0 && s.summary.history_reads == history_reads_before && s.options.serve) {
        // Everything is in the store: the steps are emitted from it without starting the
        // pipeline (no reader thread, no executor: a CUDA context costs more than the rows).
        return result<pipeline::pipeline_counters>(emit_all(visits, options.progress, emit));
      }
      return pipeline::run_statistics_from(s.inner, trial, plan, inner_options, emit);
    } catch (const restart_after& restart) {
      // Rare (a changed record that no longer decodes, under pairwise statistics; a stored blob
      // that does not decode): the steps after `restart.step` (from it, when `including`) come
      // from a plain run, with nothing from the store.
      ++s.summary.restarts;
      pipeline::pipeline_counters done;
      done.steps = emitted_steps;
      done.records = emitted_records;
      done.failed_records = emitted_failed;
      auto rest = pipeline::run_statistics_from(s.inner, trial, plan, options, [&](const stats::step_statistics& step) {
        if (step.step < restart.step || (step.step == restart.step && !restart.including)) return;
        for (const stats::statistics_record& fresh : step.records) {  // their rows replaced
          const trial::tensor_entry* entry = trial.find_entry(fresh.tensor, step.step, fresh.worker);
          const stats::statistics_request* request = plan.find(fresh.tensor);
          if (entry != nullptr && request != nullptr) write_row(*entry, *request, fresh);
        }
        if (++steps_done % std::max<int64_t>(1, s.options.commit_every_steps) == 0) s.flush();
        done.steps += 1;
        done.records += static_cast<int64_t>(step.records.size());
        for (const auto& r : step.records) done.failed_records += r.raw_status.ok() ? 0 : 1;
        on_step(step);
      });
      if (!rest) return rest;
      done.bytes_read = rest->bytes_read;  // the first attempt's bytes are not counted
      done.tensor_bytes = rest->tensor_bytes;
      s.summary.bytes_read += rest->bytes_read;
      s.summary.read += done.records;
      return done;
    }
  }();
  rows.clear();  // the run's rows are emitted
  read = {};
  if (!merge_failure.ok()) return merge_failure;
  if (!counters) return counters;
  if (s.summary.restarts > restarts_before) return counters;
  s.summary.bytes_read += counters->bytes_read;
  int64_t history_only = 0;
  for (const serve_state& held : serving) history_only += held.served && held.also_read ? 1 : 0;
  s.summary.read += counters->records - history_only;
  s.summary.served += served_count - history_only;
  counters->records += served_count - history_only;
  counters->failed_records += served_failed;
  return counters;
}

}  // namespace trialstat::store

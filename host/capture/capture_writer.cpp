// SPDX-License-Identifier: Apache-2.0
// The asynchronous capture writer (capture_writer.hpp): a byte-bounded FIFO of commands filled
// by the training thread and applied by one writer thread that owns the trial_writer and the
// TensorBoard files.
#include "trialstat/capture/capture_writer.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/writer/tensorboard_event_file.hpp"

namespace trialstat::capture {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t max_kept_errors = 1000;

/// A queue-owned copy of a tensor's element bytes.
struct payload {
  std::unique_ptr<std::byte[]> bytes;
  std::size_t size_bytes = 0;
};

struct begin_step_cmd {
  int64_t global_step;
  trialstat::mode m;
  int64_t mode_step;
};
struct record_mode_cmd {
  trialstat::mode m;
  int64_t mode_step;
};
struct tensor_cmd {
  std::string name;
  dtype type;
  std::vector<int64_t> shape;
  int64_t num_elements;
  payload data;
  double wall_time;
};
struct shape_cmd {
  std::string name;
  std::vector<int64_t> shape;
};
struct end_step_cmd {};
struct collections_cmd {
  std::vector<writer::collection_spec> specs;
};
struct write_collections_cmd {};
struct tb_scalar_cmd {
  std::string tag;
  trialstat::mode m;
  int64_t global_step;
  double value;
  double wall_time;
};
struct tb_histogram_cmd {
  std::string tag;
  trialstat::mode m;
  int64_t global_step;
  dtype type;
  int64_t num_elements;
  payload data;
  double wall_time;
};
struct close_tb_cmd {};
struct close_cmd {
  bool write_end_marker;
};

using command = std::variant<begin_step_cmd, record_mode_cmd, tensor_cmd, shape_cmd, end_step_cmd,
                             collections_cmd, write_collections_cmd, tb_scalar_cmd,
                             tb_histogram_cmd, close_tb_cmd, close_cmd>;

struct queued {
  command cmd;
  uint64_t payload_bytes = 0;
  uint64_t seq = 0;
};

status check_mode(std::string_view what, trialstat::mode m) {
  const int n = static_cast<int>(m);
  if (n < 1 || n > 4) {
    return {error_code::invalid_argument, fmt::format("{}: mode number {} is not 1..4", what, n)};
  }
  return status::success();
}

/// What the writer thread's tensor and histogram commands need from a caller's view: host
/// memory, a fixed-size dtype, a shape whose product is `num_elements`, data when non-empty.
status check_host_tensor(std::string_view what, const tensor_view& t) {
  if (dtype_size_bytes(t.type) == 0) {
    return {error_code::invalid_argument,
            fmt::format("{}: dtype {} has no fixed element size", what, dtype_proto_name(t.type))};
  }
  if (t.memory == memory_kind::device) {
    return {error_code::invalid_argument, fmt::format("{}: device memory (copy it to the host)", what)};
  }
  int64_t product = 1;
  for (const int64_t d : t.shape) {
    if (d < 0) return {error_code::invalid_argument, fmt::format("{}: negative dimension {}", what, d)};
    if (d != 0 && product > std::numeric_limits<int64_t>::max() / d) {
      return {error_code::invalid_argument, fmt::format("{}: shape overflows int64", what)};
    }
    product *= d;
  }
  if (product != t.num_elements) {
    return {error_code::invalid_argument,
            fmt::format("{}: shape holds {} elements but the view says {}", what, product,
                        t.num_elements)};
  }
  if (t.num_elements > 0 && t.data == nullptr) {
    return {error_code::invalid_argument, fmt::format("{}: null data", what)};
  }
  return status::success();
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

/// smdebug's HistogramProto of `t` (summary.py `_make_histogram` on `values.astype(float)`),
/// with storage for the buckets. nullopt: no value falls in a bucket (smdebug raises).
struct smdebug_histogram {
  writer::tensorboard_histogram fields;
  stats::tensorboard_buckets buckets;
};

result<std::optional<smdebug_histogram>> compute_smdebug_histogram(const tensor_view& t) {
  auto m = stats::compute_moments(t);
  if (!m) return m.error_status();
  const stats::segment seg{0, t.num_elements, t.type};
  stats::log_histogram h;
  TRIALSTAT_RETURN_IF_ERROR(
      stats::compute_log_histograms(t.data, {&seg, 1}, {&h, 1}, stats::backend::cpu));
  smdebug_histogram out;
  out.buckets = stats::to_tensorboard_buckets(h);
  if (out.buckets.counts.empty()) return std::optional<smdebug_histogram>();
  // numpy's min/max/sum/dot over every value: NaN wins, then the infinities.
  constexpr double inf = std::numeric_limits<double>::infinity();
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  auto& f = out.fields;
  const bool any_inf = m->pos_inf_count > 0 || m->neg_inf_count > 0;
  if (m->nan_count > 0) {
    f.min = f.max = f.sum = f.sum_squares = nan;
  } else {
    f.min = m->neg_inf_count > 0 ? -inf : (m->has_finite() ? m->min : inf);
    f.max = m->pos_inf_count > 0 ? inf : (m->has_finite() ? m->max : -inf);
    f.sum = m->pos_inf_count > 0 && m->neg_inf_count > 0 ? nan
            : m->pos_inf_count > 0                       ? inf
            : m->neg_inf_count > 0                       ? -inf
                                                         : m->sum;
    f.sum_squares = any_inf ? inf : m->sum_squares;
  }
  f.num = static_cast<double>(m->count);
  f.limits = out.buckets.limits;
  f.counts = out.buckets.counts;
  return std::optional<smdebug_histogram>(std::move(out));
}

}  // namespace

struct capture_writer::state {
  capture_options options;

  // ---- shared, guarded by `mu` ----
  mutable std::mutex mu;
  std::condition_variable work_cv;   // writer thread: queue non-empty or abort
  std::condition_variable space_cv;  // producer: queue bytes freed, or closing
  std::condition_variable done_cv;   // flush: done_seq advanced or the thread ended
  std::deque<queued> queue;
  uint64_t pushed_seq = 0;
  uint64_t done_seq = 0;
  bool closing = false;      // close() called or destroying: no more commands
  bool abort = false;        // destroying without close: the thread discards the queue
  bool thread_done = false;
  capture_counters counters;
  std::vector<std::string> errors;
  uint64_t errors_not_kept = 0;
  std::thread thread;
  std::mutex close_mu;       // serialises close() callers (producer, atexit)

  // ---- producer thread only (command order checks) ----
  bool producer_in_step = false;
  std::optional<int64_t> producer_last_step;

  // ---- writer thread only ----
  std::optional<writer::trial_writer> trial;
  std::vector<writer::collection_spec> specs;
  enum class step_state : uint8_t { none, open, failed };
  step_state step = step_state::none;
  int64_t step_number = 0;
  uint64_t step_tensors = 0;  // records appended to the open step's event file
  uint64_t step_bytes = 0;
  struct tb_slot {
    std::optional<writer::tensorboard_event_file> file;
    bool failed = false;  // an error was reported for this mode's file: skip until closed
    uint64_t tensors = 0;
    uint64_t bytes = 0;
  };
  std::array<tb_slot, 4> tb;  // by mode − 1

  // ---------------------------------------------------------------- producer side

  status check_open_locked(std::string_view what) const {
    if (closing) {
      return {error_code::invalid_argument,
              fmt::format("{}: the capture writer for '{}' ({}) is closed", what,
                          options.out_dir.string(), options.worker)};
    }
    return status::success();
  }

  status check_in_step(std::string_view what) const {
    if (!producer_in_step) {
      return {error_code::invalid_argument,
              fmt::format("{}: no open step (call begin_step first)", what)};
    }
    return status::success();
  }

  /// Enqueue a command without payload.
  status push(std::string_view what, command cmd) {
    {
      std::lock_guard lk(mu);
      TRIALSTAT_RETURN_IF_ERROR(check_open_locked(what));
      queue.push_back({std::move(cmd), 0, ++pushed_seq});
    }
    work_cv.notify_one();
    return status::success();
  }

  /// Wait for room for `t`'s bytes (or drop), reserve them and copy the bytes into a new
  /// buffer outside the lock. nullopt: dropped (queue full with drop_when_full).
  result<std::optional<payload>> acquire_payload(std::string_view what, const tensor_view& t) {
    const std::size_t n = t.size_bytes();
    {
      std::unique_lock lk(mu);
      TRIALSTAT_RETURN_IF_ERROR(check_open_locked(what));
      const auto fits = [&] {
        const uint64_t now = counters.queue_bytes_now;
        return now == 0 || now + n <= options.queue_bytes;
      };
      if (!fits()) {
        if (options.drop_when_full) {
          ++counters.tensors_dropped;
          return std::optional<payload>();
        }
        space_cv.wait(lk, [&] { return closing || fits(); });
        TRIALSTAT_RETURN_IF_ERROR(check_open_locked(what));
      }
      counters.queue_bytes_now += n;
      counters.queue_bytes_peak = std::max(counters.queue_bytes_peak, counters.queue_bytes_now);
    }
    payload p;
    p.size_bytes = n;
    if (n > 0) {
      try {
        p.bytes = std::make_unique_for_overwrite<std::byte[]>(n);
      } catch (const std::bad_alloc&) {
        release_reservation(n);
        return status(error_code::out_of_memory,
                      fmt::format("{}: cannot allocate {} bytes for the queue copy", what, n));
      }
      std::memcpy(p.bytes.get(), t.data, n);
    }
    return std::optional<payload>(std::move(p));
  }

  void release_reservation(uint64_t n) {
    {
      std::lock_guard lk(mu);
      counters.queue_bytes_now -= n;
    }
    space_cv.notify_all();
  }

  /// Enqueue a command holding a payload reserved by `acquire_payload`. false: the writer was
  /// closed from another thread meanwhile (the tensor then counts as dropped).
  bool push_payload(command cmd, uint64_t n) {
    bool pushed = false;
    {
      std::lock_guard lk(mu);
      if (closing) {
        counters.queue_bytes_now -= n;
        ++counters.tensors_dropped;
      } else {
        queue.push_back({std::move(cmd), n, ++pushed_seq});
        ++counters.tensors_queued;
        pushed = true;
      }
    }
    if (pushed) {
      work_cv.notify_one();
    } else {
      space_cv.notify_all();
    }
    return pushed;
  }

  // ---------------------------------------------------------------- writer thread

  void record_error(std::string message) {
    std::lock_guard lk(mu);
    ++counters.errors_count;
    if (errors.size() < max_kept_errors) {
      errors.push_back(std::move(message));
    } else {
      ++errors_not_kept;
    }
  }

  void count(uint64_t written, uint64_t bytes, uint64_t lost) {
    std::lock_guard lk(mu);
    counters.tensors_written += written;
    counters.bytes_written += bytes;
    counters.tensors_lost += lost;
  }

  std::string prefix() const { return fmt::format("capture {} ({})", options.out_dir.string(), options.worker); }

  status ensure_trial() {
    if (trial) return status::success();
    writer::writer_options o;
    o.num_workers = options.num_workers;
    o.collections = specs;
    o.footer = writer::footer_policy::smdebug_constant;
    o.write_collections_early = false;
    o.match_members_by_regex = false;
    auto made = writer::trial_writer::create(options.out_dir, options.worker, std::move(o));
    if (!made) return made.error_status();
    trial.emplace(std::move(*made));
    return status::success();
  }

  /// The open step failed: report once, drop what it holds, skip the rest of it.
  void fail_step(std::string_view what, const status& s, uint64_t also_lost) {
    record_error(fmt::format("{}: step {}: {}{}", prefix(), step_number, what, s.to_string()));
    if (trial && trial->in_step()) trial->abandon_step();
    count(0, 0, step_tensors + also_lost);
    step_tensors = step_bytes = 0;
    step = step_state::failed;
  }

  void finish_step() {
    if (step == step_state::open) {
      const status s = trial->end_step();
      if (s.ok()) {
        count(step_tensors, step_bytes, 0);
      } else {
        record_error(fmt::format("{}: step {}: {}", prefix(), step_number, s.to_string()));
        count(0, 0, step_tensors);
      }
    }
    step_tensors = step_bytes = 0;
    step = step_state::none;
  }

  void apply(begin_step_cmd& c) {
    step_number = c.global_step;
    step_tensors = step_bytes = 0;
    step = step_state::open;
    status s = ensure_trial();
    if (s.ok()) s = trial->begin_step(c.global_step, c.m, c.mode_step);
    if (!s.ok()) fail_step("", s, 0);
  }

  void apply(record_mode_cmd& c) {
    if (step != step_state::open) return;
    if (const status s = trial->set_record_mode(c.m, c.mode_step); !s.ok()) fail_step("", s, 0);
  }

  void apply(tensor_cmd& c) {
    if (step != step_state::open) {
      count(0, 0, 1);
      return;
    }
    const tensor_view view{c.data.bytes.get(), c.type, c.shape, c.num_elements, memory_kind::host};
    if (const status s = trial->add_tensor(c.name, view, c.wall_time); !s.ok()) {
      fail_step(fmt::format("tensor '{}': ", c.name), s, 1);
      return;
    }
    ++step_tensors;
    step_bytes += c.data.size_bytes;
  }

  void apply(shape_cmd& c) {
    if (step != step_state::open) return;
    if (const status s = trial->add_shape(c.name, c.shape); !s.ok()) {
      fail_step(fmt::format("shape '{}': ", c.name), s, 0);
    }
  }

  void apply(end_step_cmd&) { finish_step(); }

  void apply(collections_cmd& c) {
    specs = std::move(c.specs);
    if (!trial) return;
    if (const status s = trial->set_collections(specs); !s.ok()) {
      record_error(fmt::format("{}: collections: {}", prefix(), s.to_string()));
    }
  }

  void apply(write_collections_cmd&) {
    if (specs.empty()) return;  // nothing to write (trial_writer writes no file either)
    status s = ensure_trial();
    if (s.ok()) s = trial->write_collections();
    if (!s.ok()) record_error(fmt::format("{}: collections file: {}", prefix(), s.to_string()));
  }

  /// The open TB file of mode `m`, opened for `global_step` if none is; nullptr after a failure
  /// (reported once per file).
  tb_slot* tb_file(trialstat::mode m, int64_t global_step) {
    tb_slot& slot = tb[static_cast<std::size_t>(static_cast<int>(m) - 1)];
    if (slot.failed) return nullptr;
    if (!slot.file) {
      const fs::path path = tensorboard_file_path(*options.tensorboard_dir, m, global_step,
                                                  options.tensorboard_file_suffix);
      auto made = writer::tensorboard_event_file::create_at(path, std::nullopt);
      if (!made) {
        record_error(fmt::format("{}: TensorBoard file '{}': {}", prefix(), path.string(),
                                 made.error_status().to_string()));
        slot.failed = true;
        return nullptr;
      }
      slot.file.emplace(std::move(*made));
    }
    return &slot;
  }

  void fail_tb(tb_slot& slot, std::string_view tag, int64_t global_step, const status& s,
               uint64_t also_lost) {
    record_error(fmt::format("{}: TensorBoard file '{}', step {}, tag '{}': {}", prefix(),
                             slot.file->path().string(), global_step, tag, s.to_string()));
    count(0, 0, slot.tensors + also_lost);
    slot.file.reset();  // deletes its .tmp
    slot.tensors = slot.bytes = 0;
    slot.failed = true;
  }

  void apply(tb_scalar_cmd& c) {
    tb_slot* slot = tb_file(c.m, c.global_step);
    if (slot == nullptr) return;
    const std::string tag = writer::tensorboard_tag(c.tag);
    if (const status s = slot->file->add_scalar(c.global_step, c.wall_time, tag,
                                                static_cast<float>(c.value));
        !s.ok()) {
      fail_tb(*slot, tag, c.global_step, s, 0);
    }
  }

  void apply(tb_histogram_cmd& c) {
    tb_slot* slot = tb_file(c.m, c.global_step);
    if (slot == nullptr) {
      count(0, 0, 1);
      return;
    }
    const std::string tag = writer::tensorboard_tag(c.tag);
    const tensor_view view{c.data.bytes.get(), c.type, {}, c.num_elements, memory_kind::host};
    auto h = compute_smdebug_histogram(view);
    status s = h.error_status();
    if (s.ok() && *h) s = slot->file->add_histogram(c.global_step, c.wall_time, tag, (*h)->fields);
    if (!s.ok()) {
      fail_tb(*slot, tag, c.global_step, s, 1);
      return;
    }
    ++slot->tensors;
    slot->bytes += c.data.size_bytes;
  }

  void close_tb_files() {
    for (tb_slot& slot : tb) {
      if (slot.file) {
        if (const status s = slot.file->close(); s.ok()) {
          count(slot.tensors, slot.bytes, 0);
        } else {
          record_error(fmt::format("{}: TensorBoard file '{}': {}", prefix(),
                                   slot.file->path().string(), s.to_string()));
          count(0, 0, slot.tensors);
        }
      }
      slot = tb_slot{};
    }
  }

  void apply(close_tb_cmd&) { close_tb_files(); }

  void apply(close_cmd& c) {
    finish_step();
    if (trial || c.write_end_marker || !specs.empty()) {
      status s = ensure_trial();
      if (s.ok()) s = trial->close(c.write_end_marker);
      if (!s.ok()) record_error(fmt::format("{}: close: {}", prefix(), s.to_string()));
    }
    close_tb_files();
  }

  void run() noexcept {
    for (;;) {
      queued item;
      {
        std::unique_lock lk(mu);
        work_cv.wait(lk, [&] { return abort || !queue.empty(); });
        if (abort) break;
        item = std::move(queue.front());
        queue.pop_front();
      }
      const bool stop = std::holds_alternative<close_cmd>(item.cmd);
      try {
        std::visit([this](auto& c) { apply(c); }, item.cmd);
      } catch (const std::exception& e) {  // e.g. bad_alloc inside a library call
        record_error(fmt::format("{}: step {}: unexpected failure: {}", prefix(), step_number, e.what()));
      } catch (...) {
        record_error(fmt::format("{}: step {}: unexpected failure", prefix(), step_number));
      }
      const uint64_t bytes = item.payload_bytes;
      const uint64_t seq = item.seq;
      item = queued{};  // free the payload before its bytes count as free
      {
        std::lock_guard lk(mu);
        counters.queue_bytes_now -= bytes;
        done_seq = seq;
        if (stop) thread_done = true;
      }
      space_cv.notify_all();
      done_cv.notify_all();
      if (stop) return;
    }
    // Destroyed without close(): discard what is still queued.
    {
      std::lock_guard lk(mu);
      for (const auto& q : queue) counters.queue_bytes_now -= q.payload_bytes;
      queue.clear();
      thread_done = true;
    }
    space_cv.notify_all();
    done_cv.notify_all();
  }
};

capture_writer::capture_writer(std::unique_ptr<state> s) : state_(std::move(s)) {}

capture_writer::~capture_writer() {
  if (!state_) return;
  std::lock_guard close_lk(state_->close_mu);
  {
    std::lock_guard lk(state_->mu);
    state_->closing = true;
    state_->abort = true;
  }
  state_->work_cv.notify_all();
  state_->space_cv.notify_all();
  if (state_->thread.joinable()) state_->thread.join();
}

result<std::unique_ptr<capture_writer>> capture_writer::start(capture_options options) {
  if (options.out_dir.empty()) {
    return status(error_code::invalid_argument, "capture writer: out_dir is empty");
  }
  if (options.worker.empty() || options.worker.find('/') != std::string::npos ||
      options.worker.find('\0') != std::string::npos) {
    return status(error_code::invalid_argument,
                  fmt::format("capture writer: bad worker name '{}' (non-empty, no '/')",
                              options.worker));
  }
  if (options.num_workers < 1) {
    return status(error_code::invalid_argument,
                  fmt::format("capture writer: num_workers must be >= 1, got {}",
                              options.num_workers));
  }
  if (options.tensorboard_dir && options.tensorboard_dir->empty()) {
    return status(error_code::invalid_argument, "capture writer: tensorboard_dir is empty");
  }
  if (options.tensorboard_file_suffix.empty()) {
    options.tensorboard_file_suffix = default_tensorboard_file_suffix();
  }
  auto s = std::make_unique<state>();
  s->options = std::move(options);
  std::unique_ptr<capture_writer> w(new capture_writer(std::move(s)));
  try {
    w->state_->thread = std::thread([st = w->state_.get()] { st->run(); });
  } catch (const std::system_error& e) {
    return status(error_code::io_error,
                  fmt::format("capture writer: cannot start the writer thread: {}", e.what()));
  }
  return w;
}

status capture_writer::begin_step(int64_t global_step, trialstat::mode m, int64_t mode_step) {
  state& s = *state_;
  const std::string what = fmt::format("begin_step {}", global_step);
  TRIALSTAT_RETURN_IF_ERROR(check_mode(what, m));
  if (s.producer_in_step) {
    return {error_code::invalid_argument, fmt::format("{}: a step is still open (call end_step first)", what)};
  }
  if (global_step < 0 || mode_step < -1) {
    return {error_code::invalid_argument,
            fmt::format("{}: negative step (global {}, mode step {})", what, global_step, mode_step)};
  }
  if (s.producer_last_step && global_step <= *s.producer_last_step) {
    return {error_code::invalid_argument,
            fmt::format("{}: global steps must increase (previous step {})", what, *s.producer_last_step)};
  }
  TRIALSTAT_RETURN_IF_ERROR(s.push(what, begin_step_cmd{global_step, m, mode_step}));
  s.producer_in_step = true;
  s.producer_last_step = global_step;
  return status::success();
}

status capture_writer::set_record_mode(trialstat::mode m, int64_t mode_step) {
  state& s = *state_;
  TRIALSTAT_RETURN_IF_ERROR(check_mode("set_record_mode", m));
  TRIALSTAT_RETURN_IF_ERROR(s.check_in_step("set_record_mode"));
  if (mode_step < -1) {
    return {error_code::invalid_argument,
            fmt::format("set_record_mode: mode step {} < -1", mode_step)};
  }
  return s.push("set_record_mode", record_mode_cmd{m, mode_step});
}

result<bool> capture_writer::add_tensor(std::string_view name, const tensor_view& host_tensor,
                                        double wall_time) {
  state& s = *state_;
  const std::string what = fmt::format("add_tensor '{}'", name);
  if (name.empty()) return status(error_code::invalid_argument, "add_tensor: empty tensor name");
  TRIALSTAT_RETURN_IF_ERROR(s.check_in_step(what));
  TRIALSTAT_RETURN_IF_ERROR(check_host_tensor(what, host_tensor));
  auto p = s.acquire_payload(what, host_tensor);
  if (!p) return p.error_status();
  if (!*p) return false;
  const uint64_t n = (*p)->size_bytes;
  return s.push_payload(tensor_cmd{std::string(name), host_tensor.type,
                                   {host_tensor.shape.begin(), host_tensor.shape.end()},
                                   host_tensor.num_elements, std::move(**p), wall_time},
                        n);
}

status capture_writer::add_shape(std::string_view name, std::span<const int64_t> shape) {
  state& s = *state_;
  const std::string what = fmt::format("add_shape '{}'", name);
  if (name.empty()) return {error_code::invalid_argument, "add_shape: empty tensor name"};
  TRIALSTAT_RETURN_IF_ERROR(s.check_in_step(what));
  for (const int64_t d : shape) {
    if (d < 0) return {error_code::invalid_argument, fmt::format("{}: negative dimension {}", what, d)};
  }
  return s.push(what, shape_cmd{std::string(name), {shape.begin(), shape.end()}});
}

status capture_writer::end_step() {
  state& s = *state_;
  TRIALSTAT_RETURN_IF_ERROR(s.check_in_step("end_step"));
  TRIALSTAT_RETURN_IF_ERROR(s.push("end_step", end_step_cmd{}));
  s.producer_in_step = false;
  return status::success();
}

status capture_writer::set_collections(std::vector<writer::collection_spec> specs) {
  TRIALSTAT_RETURN_IF_ERROR(writer::validate_collection_specs(specs));
  return state_->push("set_collections", collections_cmd{std::move(specs)});
}

status capture_writer::write_collections() {
  return state_->push("write_collections", write_collections_cmd{});
}

status capture_writer::add_tensorboard_scalar(std::string_view tag, trialstat::mode m,
                                              int64_t global_step, double value,
                                              double wall_time) {
  state& s = *state_;
  const std::string what = fmt::format("add_tensorboard_scalar '{}'", tag);
  if (!s.options.tensorboard_dir) {
    return {error_code::invalid_argument, fmt::format("{}: no tensorboard_dir was given", what)};
  }
  TRIALSTAT_RETURN_IF_ERROR(check_mode(what, m));
  return s.push(what, tb_scalar_cmd{std::string(tag), m, global_step, value, wall_time});
}

result<bool> capture_writer::add_tensorboard_histogram(std::string_view tag, trialstat::mode m,
                                                       int64_t global_step,
                                                       const tensor_view& host_tensor,
                                                       double wall_time) {
  state& s = *state_;
  const std::string what = fmt::format("add_tensorboard_histogram '{}'", tag);
  if (!s.options.tensorboard_dir) {
    return status(error_code::invalid_argument, fmt::format("{}: no tensorboard_dir was given", what));
  }
  TRIALSTAT_RETURN_IF_ERROR(check_mode(what, m));
  TRIALSTAT_RETURN_IF_ERROR(check_host_tensor(what, host_tensor));
  if (!dtype_is_real_numeric(host_tensor.type)) {
    return status(error_code::invalid_argument,
                  fmt::format("{}: no histogram of a {} tensor", what, dtype_name(host_tensor.type)));
  }
  // smdebug's `_write_histogram_summary` skips bool and empty tensors.
  if (host_tensor.type == dtype::boolean || host_tensor.num_elements == 0) {
    std::lock_guard lk(s.mu);
    TRIALSTAT_RETURN_IF_ERROR(s.check_open_locked(what));
    return false;
  }
  auto p = s.acquire_payload(what, host_tensor);
  if (!p) return p.error_status();
  if (!*p) return false;
  const uint64_t n = (*p)->size_bytes;
  return s.push_payload(tb_histogram_cmd{std::string(tag), m, global_step, host_tensor.type,
                                         host_tensor.num_elements, std::move(**p), wall_time},
                        n);
}

status capture_writer::close_tensorboard_files() {
  return state_->push("close_tensorboard_files", close_tb_cmd{});
}

void capture_writer::flush() {
  state& s = *state_;
  std::unique_lock lk(s.mu);
  const uint64_t target = s.pushed_seq;
  s.done_cv.wait(lk, [&] { return s.thread_done || s.done_seq >= target; });
}

void capture_writer::close(bool write_end_marker) {
  state& s = *state_;
  std::lock_guard close_lk(s.close_mu);
  {
    std::lock_guard lk(s.mu);
    if (!s.closing) {
      s.closing = true;
      s.queue.push_back({close_cmd{write_end_marker}, 0, ++s.pushed_seq});
    }
  }
  s.work_cv.notify_one();
  s.space_cv.notify_all();  // a producer waiting for room gets "closed"
  if (s.thread.joinable()) s.thread.join();
}

std::vector<std::string> capture_writer::take_errors() {
  state& s = *state_;
  std::lock_guard lk(s.mu);
  std::vector<std::string> out = std::exchange(s.errors, {});
  if (s.errors_not_kept > 0) {
    out.push_back(fmt::format("capture {} ({}): {} more errors were counted but not kept",
                              s.options.out_dir.string(), s.options.worker, s.errors_not_kept));
    s.errors_not_kept = 0;
  }
  return out;
}

capture_counters capture_writer::counters() const {
  std::lock_guard lk(state_->mu);
  return state_->counters;
}

bool capture_writer::closed() const {
  std::lock_guard lk(state_->mu);
  return state_->closing;
}

const capture_options& capture_writer::options() const noexcept { return state_->options; }

fs::path capture_writer::tensorboard_file_path(const fs::path& tb_dir, trialstat::mode m,
                                               int64_t global_step, std::string_view suffix) {
  return tb_dir / std::string(mode_name(m)) / fmt::format("{:012d}_{}.tfevents", global_step, suffix);
}

std::string capture_writer::default_tensorboard_file_suffix() {
  return fmt::format("{}_{}", ::getpid(), host_name());
}

}  // namespace trialstat::capture

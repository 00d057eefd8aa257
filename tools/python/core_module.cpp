// SPDX-License-Identifier: Apache-2.0
// trialstat._core: the nanobind layer under the `trialstat` Python package. It exposes the
// catalog (names, steps, workers, entries), single-record reads as numpy arrays, the statistics
// pipeline as columns (numpy arrays owned by C++ buffers, no copies) and the rule runner. The
// smdebug-shaped API (Trial, Tensor, exceptions, refresh semantics) is in trialstat/*.py.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trialstat/decode/indexed_record.hpp"
#include "trialstat/frontend/device_options.hpp"
#include "trialstat/frontend/open_catalog.hpp"
#include "trialstat/frontend/rule_invocations.hpp"
#include "trialstat/frontend/statistics_row.hpp"
#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/report/html_report.hpp"
#include "trialstat/report/statistics_writer.hpp"
#include "trialstat/report/tensorboard_export.hpp"
#include "trialstat/rules/rule_config.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/frontend/store_choice.hpp"
#include "trialstat/store/statistics_store.hpp"
#include "trialstat/store/store_source.hpp"
#include "trialstat/trial/catalog.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace trialstat::python {
/// `_core.CaptureWriter` (capture_bindings.cpp).
void bind_capture(nb::module_& m);
}  // namespace trialstat::python

namespace trialstat::python {
namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void raise(const status& s) { throw trialstat::error(s); }

template <typename T>
T unwrap(result<T>&& r) {
  if (!r) raise(r.error_status());
  return std::move(*r);
}

/// A 1-D numpy array that takes ownership of `values` (no copy).
template <typename T>
nb::object to_numpy(std::vector<T>&& values) {
  auto* heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t shape[1] = {heap->size()};
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), 1, shape, owner));
}

/// numpy dtype of an element type; nullopt for string/invalid/bfloat16 (handled separately).
std::optional<nb::dlpack::dtype> numpy_dtype(dtype t) {
  using code = nb::dlpack::dtype_code;
  const auto make = [](code c, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(c), static_cast<uint8_t>(bits), 1};
  };
  switch (t) {
    case dtype::float32: return make(code::Float, 32);
    case dtype::float64: return make(code::Float, 64);
    case dtype::float16: return make(code::Float, 16);
    case dtype::int8: return make(code::Int, 8);
    case dtype::int16: return make(code::Int, 16);
    case dtype::int32: return make(code::Int, 32);
    case dtype::int64: return make(code::Int, 64);
    case dtype::uint8: return make(code::UInt, 8);
    case dtype::uint16: return make(code::UInt, 16);
    case dtype::uint32: return make(code::UInt, 32);
    case dtype::uint64: return make(code::UInt, 64);
    case dtype::boolean: return make(code::Bool, 8);
    case dtype::complex64: return make(code::Complex, 64);
    case dtype::complex128: return make(code::Complex, 128);
    default: return std::nullopt;
  }
}

/// `_core.Catalog`: an open trial's catalog plus open event files for value reads.
class py_catalog {
 public:
  explicit py_catalog(trial::catalog catalog) : catalog_(std::move(catalog)) {}

  static std::unique_ptr<py_catalog> open(const std::string& path, std::optional<int64_t> begin,
                                          std::optional<int64_t> end) {
    return std::make_unique<py_catalog>(unwrap(frontend::open_catalog(path, begin, end)));
  }

  const trial::catalog& catalog() const { return catalog_; }

  /// The statistics store (issue 26) of this trial's statistics, rules, TensorBoard export and
  /// report: "auto" (the user's cache folder), "off", or a file. A store that cannot be used is
  /// a warning on stderr and the trial is read.
  void set_store(const std::string& choice) {
    store_.reset();
    const auto warn = [](const status& s) { fmt::print(stderr, "warning: {}\n", s.message()); };
    auto options = frontend::store_options(choice, catalog_.location(), warn);
    if (!options) {
      fmt::print(stderr, "warning: {} (the trial is read)\n", options.error_status().message());
      return;
    }
    if (*options) store_ = std::make_unique<store::store_source>(std::move(**options));  // else "off"
  }
  /// How this trial's CUDA runs check their results and stage their input (create_trial's
  /// verify_device and pinned_mb; None: TRIALSTAT_VERIFY_DEVICE or "sampled", 256 MiB). Raises
  /// ValueError for another verify_device or a pinned_mb outside [1, 1048576].
  void set_device_options(std::optional<std::string> verify_device, std::optional<int64_t> pinned_mb) {
    frontend::device_options chosen;
    chosen.device = "cpu";  // only the two settings are checked here; each call names its device
    chosen.verify_device = verify_device.value_or("");
    chosen.pinned_mb = pinned_mb.value_or(frontend::default_pinned_mb);
    (void)unwrap(frontend::make_pipeline_options(chosen));
    device_ = std::move(chosen);
  }
  /// Pipeline options of a call with `device` ("auto", "cpu", "cuda") and this trial's settings.
  pipeline::pipeline_options pipeline_options_for(const std::string& device, std::optional<int64_t> begin,
                                                  std::optional<int64_t> end) const {
    frontend::device_options chosen = device_;
    chosen.device = device;
    pipeline::pipeline_options options = unwrap(frontend::make_pipeline_options(chosen));
    options.step_begin = begin;
    options.step_end = end;
    return options;
  }
  /// Where statistics come from: the store when set (one run at a time: calls from several
  /// Python threads take turns), else the plain pipeline.
  pipeline::statistics_source statistics_source() {
    if (!store_) return {};
    return [this](const trial::catalog& trial, const plan::read_plan& plan, const pipeline::pipeline_options& options,
                  const pipeline::step_callback& on_step) {
      std::lock_guard lock(store_mutex_);
      return store_->run(trial, plan, options, on_step);
    };
  }
  /// The store's totals (served, read, written...), or None without a store.
  nb::object store_summary() const {
    if (!store_) return nb::none();
    const store::store_run_summary& s = store_->summary();
    nb::dict d;
    d["path"] = store_->path().string();
    d["served"] = s.served;
    d["read"] = s.read;
    d["written"] = s.written;
    d["bytes_read"] = s.bytes_read;
    return d;
  }

  std::size_t refresh() { return unwrap(catalog_.refresh()); }

  std::vector<std::string> warnings() const {
    std::vector<std::string> out;
    for (const auto& w : catalog_.warnings()) {
      out.push_back(frontend::load_warning_text(w));
    }
    return out;
  }

  trial::tensor_id tensor_id_of(const std::string& name) const {
    auto id = catalog_.find_tensor(name);
    if (!id) raise(status(error_code::not_found, fmt::format("tensor '{}' was not saved", name)));
    return *id;
  }

  /// Names of the tensors with an entry at a global step (unsorted, unique).
  std::vector<std::string> tensor_names_at(int64_t global_step) const {
    std::vector<char> seen(catalog_.tensor_names().size(), 0);
    std::vector<std::string> out;
    for (const auto& e : catalog_.entries_at(global_step)) {
      if (!seen[e.tensor]) {
        seen[e.tensor] = 1;
        out.emplace_back(catalog_.tensor_names()[e.tensor]);
      }
    }
    return out;
  }

  /// Names of the tensors with an entry at any step of mode `m` (GLOBAL: every saved tensor).
  std::vector<std::string> tensor_names_in_mode(int m) const {
    std::vector<char> seen(catalog_.tensor_names().size(), 0);
    std::vector<std::string> out;
    for (const auto& info : catalog_.step_infos()) {
      if (m != static_cast<int>(mode::global) && static_cast<int>(info.mode) != m) continue;
      for (const auto& e : catalog_.entries_at(info.step)) {
        if (!seen[e.tensor]) {
          seen[e.tensor] = 1;
          out.emplace_back(catalog_.tensor_names()[e.tensor]);
        }
      }
    }
    return out;
  }

  /// (global step, sorted worker names) for every global step where the tensor has an entry.
  std::vector<std::pair<int64_t, std::vector<std::string>>> tensor_steps(const std::string& name) const {
    const auto id = tensor_id_of(name);
    std::vector<std::pair<int64_t, std::vector<std::string>>> out;
    const auto sorted_workers = catalog_.sorted_worker_ids();
    for (int64_t step : catalog_.tensor_steps(id)) {
      std::vector<std::string> workers;
      for (auto w : sorted_workers) {
        if (catalog_.find_entry(id, step, w)) workers.emplace_back(catalog_.workers()[w]);
      }
      out.emplace_back(step, std::move(workers));
    }
    return out;
  }

  const trial::tensor_entry* find_entry(const std::string& name, int64_t step,
                                        const std::string& worker) const {
    const auto id = catalog_.find_tensor(name);
    const auto w = catalog_.find_worker(worker);
    if (!id || !w) return nullptr;
    return catalog_.find_entry(*id, step, *w);
  }

  /// None, or {"raw": bool, "shape": tuple|None, "reductions": [(name, abs)]}.
  nb::object entry_info(const std::string& name, int64_t step, const std::string& worker) const {
    const auto* e = find_entry(name, step, worker);
    if (!e) return nb::none();
    nb::dict d;
    d["raw"] = e->raw.has_value();
    if (e->shape) {
      nb::list dims;
      for (auto v : *e->shape) dims.append(v);
      d["shape"] = nb::tuple(dims);
    } else {
      d["shape"] = nb::none();
    }
    nb::list reductions;
    for (const auto& r : e->reductions) {
      reductions.append(nb::make_tuple(std::string(trial::reduction_name(r.op)), r.abs));
    }
    d["reductions"] = reductions;
    return d;
  }

  /// The raw value (reduction = "") or a saved reduction of one entry, as a numpy array.
  /// Strings come back as ("str", [bytes...], shape) for the Python layer to shape.
  nb::object read(const std::string& name, int64_t step, const std::string& worker,
                  const std::string& reduction, bool abs) {
    const auto* e = find_entry(name, step, worker);
    if (!e) {
      raise(status(error_code::not_found,
                   fmt::format("no entry for tensor '{}' at step {} of worker '{}'", name, step, worker)));
    }
    const trial::record_location* location = nullptr;
    std::string tag = name;  // what the index says the record holds (FORMAT §7)
    if (reduction.empty()) {
      if (e->raw) location = &*e->raw;
    } else {
      const auto op = trial::parse_reduction(reduction);
      for (const auto& r : e->reductions) {
        if (op && r.op == *op && r.abs == abs) location = &r.location;
      }
      if (op) tag = decode::saved_reduction_tag(trial::reduction_name(*op), abs, name);
    }
    if (!location) {
      raise(status(error_code::not_found,
                   fmt::format("tensor '{}' at step {} of worker '{}' has no {} record", name, step,
                               worker, reduction.empty() ? std::string("raw") : reduction)));
    }
    return read_location({location->start_bytes, location->length_bytes, tag, !reduction.empty()},
                         location->event_file);
  }

  /// The record `expected` names in `event_file`, verified and decoded by
  /// decode::read_tensor_record (one retry after refreshing the size of a growing file).
  nb::object read_location(const decode::record_expectation& expected, trial::file_id event_file) {
    auto it = readers_.find(event_file);
    if (it == readers_.end()) {
      auto reader = unwrap(catalog_.source().open(catalog_.event_file_key(event_file)));
      it = readers_.emplace(event_file, std::move(reader)).first;
    }
    // Fresh buffers per read so that the record bytes can become the array's memory.
    auto buffers = std::make_unique<decode::record_read_buffers>();
    decode::event_record record;
    status s = decode::read_tensor_record(*it->second, expected, *buffers, record);
    if (s.code() == error_code::truncated_record && it->second->refresh_size().ok()) {
      s = decode::read_tensor_record(*it->second, expected, *buffers, record);
    }
    if (!s.ok()) raise(s);
    return to_array(record, std::move(buffers));
  }

 private:
  static nb::object to_array(const decode::event_record& record,
                             std::unique_ptr<decode::record_read_buffers> buffers) {
    nb::list dims;
    for (auto v : record.shape) dims.append(v);
    nb::tuple shape(dims);
    if (record.type == dtype::string || (record.type == dtype::invalid && !record.strings.empty()) ||
        (record.type == dtype::invalid && record.content.empty())) {
      nb::list items;
      for (auto sv : record.strings) items.append(nb::bytes(sv.data(), sv.size()));
      return nb::make_tuple("str", items, shape);
    }
    std::vector<std::size_t> extents(record.shape.begin(), record.shape.end());
    if (record.type == dtype::bfloat16) {
      // numpy has no bfloat16: widen to float32 (exact).
      auto* out = new std::vector<float>(static_cast<std::size_t>(record.num_elements));
      for (int64_t i = 0; i < record.num_elements; ++i) {
        uint16_t bits;
        std::memcpy(&bits, record.content.data() + 2 * i, 2);
        const uint32_t widened = static_cast<uint32_t>(bits) << 16;
        std::memcpy(out->data() + i, &widened, 4);
      }
      nb::capsule owner(out, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
      return nb::cast(nb::ndarray<nb::numpy, float>(out->data(), extents.size(), extents.data(),
                                                   owner));
    }
    const auto np_type = numpy_dtype(record.type);
    if (!np_type) {
      raise(status(error_code::unsupported_dtype,
                   fmt::format("tensor '{}': dtype {} has no numpy equivalent", record.tag,
                               dtype_proto_name(record.type))));
    }
    const std::size_t element_bytes = dtype_size_bytes(record.type);
    const std::byte* data = record.content.data();
    const auto& bytes = buffers->bytes;
    const bool inside = !bytes.empty() && data >= bytes.data() &&
                        data + record.content.size() <= bytes.data() + bytes.size();
    const bool aligned = reinterpret_cast<uintptr_t>(data) % element_bytes == 0;
    if (inside && aligned && record.num_elements > 0) {
      // Zero copy: the array views the record buffer, which the capsule owns.
      auto* owned = buffers.release();
      nb::capsule owner(owned, [](void* p) noexcept {
        delete static_cast<decode::record_read_buffers*>(p);
      });
      return nb::cast(nb::ndarray<nb::numpy>(const_cast<std::byte*>(data), extents.size(),
                                             extents.data(), owner, nullptr, *np_type));
    }
    // Unaligned content (or typed-field scratch): one copy into an aligned buffer.
    const std::size_t size = record.content.size();
    auto* copy = new std::vector<uint64_t>((size + 7) / 8 + 2);  // 8-byte (16 for complex128 ok)
    if (size) std::memcpy(copy->data(), data, size);
    nb::capsule owner(copy, [](void* p) noexcept { delete static_cast<std::vector<uint64_t>*>(p); });
    return nb::cast(nb::ndarray<nb::numpy>(copy->data(), extents.size(), extents.data(), owner,
                                           nullptr, *np_type));
  }

  trial::catalog catalog_;
  std::unordered_map<trial::file_id, std::unique_ptr<io::object_reader>> readers_;
  std::unique_ptr<store::store_source> store_;
  std::mutex store_mutex_;
  frontend::device_options device_;  ///< set_device_options (its `device` is unused)
};

// ---- statistics as columns ---------------------------------------------------------------

/// Column builder shared by `statistics` (whole run) and `for_each_step` (one step at a time).
struct stats_columns {
  std::vector<uint32_t> tensor, worker;
  std::vector<int64_t> step, mode_step;
  std::vector<int8_t> mode;
  std::vector<int32_t> type;
  std::vector<bool> has_raw_flags;
  std::vector<int64_t> numel, nan_count, pos_inf_count, neg_inf_count, zero_count;
  std::vector<double> min, max, mean, variance, std_dev, sum, l1, l2, linf, mean_abs;
  std::vector<double> update_ratio;
  std::vector<int64_t> prev_step;
  std::vector<std::pair<std::size_t, std::string>> errors;  // (row, message)
  std::map<std::pair<int, bool>, std::vector<double>> reductions;
  int histogram_bins = 0;
  std::vector<int64_t> hist_counts;  // [rows × bins]
  std::vector<double> hist_lo, hist_hi;
  bool log_histogram = false;
  std::vector<int64_t> log_hist_counts;  // [rows × stats::log_histogram_bins]
  std::vector<int64_t> log_hist_nan, log_hist_pos_inf, log_hist_neg_inf, log_hist_below,
      log_hist_above;
  bool want_ratio = false;

  std::size_t rows() const { return step.size(); }

  /// Room for `n` rows in every column (no regrowth while the pipeline fills them).
  void reserve(std::size_t n) {
    for (auto* c : {&tensor, &worker}) c->reserve(n);
    for (auto* c : {&step, &mode_step, &numel, &nan_count, &pos_inf_count, &neg_inf_count, &zero_count}) c->reserve(n);
    for (auto* c : {&min, &max, &mean, &variance, &std_dev, &sum, &l1, &l2, &linf, &mean_abs}) c->reserve(n);
    mode.reserve(n);
    type.reserve(n);
    has_raw_flags.reserve(n);
    if (want_ratio) {
      update_ratio.reserve(n);
      prev_step.reserve(n);
    }
    if (histogram_bins > 0) {
      hist_counts.reserve(n * static_cast<std::size_t>(histogram_bins));
      hist_lo.reserve(n);
      hist_hi.reserve(n);
    }
  }

  void add(const stats::statistics_record& r) {
    const std::size_t row = rows();
    tensor.push_back(r.tensor);
    worker.push_back(r.worker);
    step.push_back(r.step);
    mode_step.push_back(r.mode_step);
    mode.push_back(static_cast<int8_t>(r.mode));
    type.push_back(static_cast<int32_t>(r.type));
    numel.push_back(r.num_elements);
    const frontend::statistics_row values = frontend::make_statistics_row(r);
    const bool ok = values.has_raw;
    has_raw_flags.push_back(ok);
    if (!r.raw_status.ok() && r.raw_status.code() != error_code::not_found) {
      errors.emplace_back(row, r.raw_status.to_string());
    }
    nan_count.push_back(values.nan_count);
    pos_inf_count.push_back(values.pos_inf_count);
    neg_inf_count.push_back(values.neg_inf_count);
    zero_count.push_back(values.zero_count);
    min.push_back(values.min);
    max.push_back(values.max);
    mean.push_back(values.mean);
    variance.push_back(values.variance);
    std_dev.push_back(values.std_dev);
    sum.push_back(values.sum);
    l1.push_back(values.l1);
    l2.push_back(values.l2);
    linf.push_back(values.linf);
    mean_abs.push_back(values.mean_abs);
    if (want_ratio) {
      update_ratio.push_back(values.update_ratio);
      prev_step.push_back(values.prev_step);
    }
    for (const auto& red : r.saved_reductions) {
      auto& column = reductions[{static_cast<int>(red.op), red.abs}];
      column.resize(row, nan_value);
      column.push_back(red.value);
    }
    if (histogram_bins > 0) {
      if (ok && r.histogram && r.histogram->bins == histogram_bins) {
        hist_counts.insert(hist_counts.end(), r.histogram->counts.begin(), r.histogram->counts.end());
        hist_lo.push_back(r.histogram->lo);
        hist_hi.push_back(r.histogram->hi);
      } else {
        hist_counts.insert(hist_counts.end(), static_cast<std::size_t>(histogram_bins), 0);
        hist_lo.push_back(nan_value);
        hist_hi.push_back(nan_value);
      }
    }
    if (log_histogram) {
      std::array<int64_t, frontend::log_histogram_row_cells> cells;
      static_cast<void>(frontend::fill_log_histogram_row(r, cells));
      log_hist_counts.insert(log_hist_counts.end(), cells.begin(),
                             cells.begin() + stats::log_histogram_bins);
      log_hist_nan.push_back(cells[frontend::log_histogram_nan_cell]);
      log_hist_pos_inf.push_back(cells[frontend::log_histogram_pos_inf_cell]);
      log_hist_neg_inf.push_back(cells[frontend::log_histogram_neg_inf_cell]);
      log_hist_below.push_back(cells[frontend::log_histogram_below_cell]);
      log_hist_above.push_back(cells[frontend::log_histogram_above_cell]);
    }
  }

  /// Hand every column to numpy (moves the buffers; the builder is empty afterwards).
  nb::dict to_dict() {
    nb::dict d;
    const std::size_t n = rows();
    d["tensor_id"] = to_numpy(std::move(tensor));
    d["worker_id"] = to_numpy(std::move(worker));
    d["step"] = to_numpy(std::move(step));
    d["mode"] = to_numpy(std::move(mode));
    d["mode_step"] = to_numpy(std::move(mode_step));
    d["dtype_id"] = to_numpy(std::move(type));
    std::vector<uint8_t> raw(has_raw_flags.begin(), has_raw_flags.end());
    d["has_raw"] = to_numpy(std::move(raw));
    d["numel"] = to_numpy(std::move(numel));
    d["nan_count"] = to_numpy(std::move(nan_count));
    d["pos_inf_count"] = to_numpy(std::move(pos_inf_count));
    d["neg_inf_count"] = to_numpy(std::move(neg_inf_count));
    d["zero_count"] = to_numpy(std::move(zero_count));
    d["min"] = to_numpy(std::move(min));
    d["max"] = to_numpy(std::move(max));
    d["mean"] = to_numpy(std::move(mean));
    d["variance"] = to_numpy(std::move(variance));
    d["std"] = to_numpy(std::move(std_dev));
    d["sum"] = to_numpy(std::move(sum));
    d["l1"] = to_numpy(std::move(l1));
    d["l2"] = to_numpy(std::move(l2));
    d["linf"] = to_numpy(std::move(linf));
    d["mean_abs"] = to_numpy(std::move(mean_abs));
    if (want_ratio) {
      d["update_ratio"] = to_numpy(std::move(update_ratio));
      d["prev_step"] = to_numpy(std::move(prev_step));
    }
    for (auto& [key, column] : reductions) {
      column.resize(n, nan_value);
      const auto name = std::string(trial::reduction_name(static_cast<trial::reduction_op>(key.first)));
      d[nb::str(("reduction_" + std::string(key.second ? "abs_" : "") + name).c_str())] =
          to_numpy(std::move(column));
    }
    if (histogram_bins > 0) {
      auto* heap = new std::vector<int64_t>(std::move(hist_counts));
      nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<int64_t>*>(p); });
      const std::size_t shape[2] = {n, static_cast<std::size_t>(histogram_bins)};
      d["hist_counts"] = nb::cast(nb::ndarray<nb::numpy, int64_t, nb::ndim<2>>(heap->data(), 2, shape, owner));
      d["hist_lo"] = to_numpy(std::move(hist_lo));
      d["hist_hi"] = to_numpy(std::move(hist_hi));
    }
    if (log_histogram) {
      auto* heap = new std::vector<int64_t>(std::move(log_hist_counts));
      nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<int64_t>*>(p); });
      const std::size_t shape[2] = {n, static_cast<std::size_t>(stats::log_histogram_bins)};
      d["log_hist_counts"] =
          nb::cast(nb::ndarray<nb::numpy, int64_t, nb::ndim<2>>(heap->data(), 2, shape, owner));
      d["log_hist_nan"] = to_numpy(std::move(log_hist_nan));
      d["log_hist_pos_inf"] = to_numpy(std::move(log_hist_pos_inf));
      d["log_hist_neg_inf"] = to_numpy(std::move(log_hist_neg_inf));
      d["log_hist_below"] = to_numpy(std::move(log_hist_below));
      d["log_hist_above"] = to_numpy(std::move(log_hist_above));
    }
    nb::list error_list;
    for (auto& [row, message] : errors) error_list.append(nb::make_tuple(row, message));
    d["errors"] = error_list;
    const int bins = histogram_bins;
    const bool log_bins = log_histogram;
    const bool ratio = want_ratio;
    *this = stats_columns{};
    histogram_bins = bins;
    log_histogram = log_bins;
    want_ratio = ratio;
    return d;
  }
};

struct stats_request {
  std::vector<uint32_t> tensors;
  std::vector<uint32_t> ratio_tensors;
  std::optional<int64_t> step_begin, step_end;
  std::string device = "auto";
  int histogram_bins = 0;
  bool saved_reductions = true;
  bool log_histogram = false;
};

/// `tensors` without and `ratio_tensors` with the update ratio (Python chose which).
plan::read_plan make_plan(const trial::catalog& cat, const stats_request& req) {
  const auto num_tensors = cat.tensor_names().size();
  for (const auto* ids : {&req.tensors, &req.ratio_tensors}) {
    for (auto id : *ids) {
      if (id >= num_tensors) raise(status(error_code::invalid_argument, "tensor id out of range"));
    }
  }
  report::statistics_plan_options what{.histogram_bins = req.histogram_bins,
                                       .log_histogram = req.log_histogram,
                                       .saved_reductions = req.saved_reductions,
                                       .update_ratio = report::update_ratio_tensors::none};
  plan::read_plan plan;
  report::add_statistics_requests(plan, cat, req.tensors, what);
  what.update_ratio = report::update_ratio_tensors::all;
  report::add_statistics_requests(plan, cat, req.ratio_tensors, what);
  return plan;
}

/// How many rows a run of `plan` can give at most: the catalog's entries of planned tensors and
/// workers in the step range (records the run emits are a subset).
std::size_t planned_rows(const trial::catalog& cat, const plan::read_plan& plan,
                         const pipeline::pipeline_options& options) {
  std::size_t rows = 0;
  for (const trial::tensor_entry& entry : cat.entries()) {
    if (options.step_begin && entry.step < *options.step_begin) continue;
    if (options.step_end && entry.step >= *options.step_end) continue;
    if (plan.find(entry.tensor) != nullptr && plan.reads_worker(entry.worker)) ++rows;
  }
  return rows;
}

nb::dict statistics(py_catalog& t, const stats_request& req) {
  const auto options = t.pipeline_options_for(req.device, req.step_begin, req.step_end);
  const auto plan = make_plan(t.catalog(), req);
  stats_columns columns;
  columns.histogram_bins = req.histogram_bins;
  columns.log_histogram = req.log_histogram;
  columns.want_ratio = !req.ratio_tensors.empty();
  columns.reserve(planned_rows(t.catalog(), plan, options));
  pipeline::pipeline_counters counters;
  {
    nb::gil_scoped_release release;
    auto run = pipeline::run_statistics_from(t.statistics_source(), t.catalog(), plan, options,
                                             [&](const stats::step_statistics& s) {
      for (const auto& r : s.records) columns.add(r);
    });
    if (!run) {
      nb::gil_scoped_acquire acquire;
      raise(run.error_status());
    }
    counters = *run;
  }
  nb::dict d = columns.to_dict();
  nb::dict c;
  c["steps"] = counters.steps;
  c["records"] = counters.records;
  c["failed_records"] = counters.failed_records;
  c["bytes_read"] = counters.bytes_read;
  c["tensor_bytes"] = counters.tensor_bytes;
  c["verified_steps"] = counters.verified_steps;  // checked against the CPU twin (CUDA runs)
  if (counters.device_fallback) {
    c["device_fallback"] = *counters.device_fallback;  // why the run finished on the CPU
  } else {
    c["device_fallback"] = nb::none();
  }
  d["counters"] = c;
  return d;
}

/// Run the pipeline and call `callback(step, mode, mode_step, columns)` once per saved step.
/// A Python exception from the callback stops further calls and is re-raised at the end.
void for_each_step(py_catalog& t, const stats_request& req, nb::callable callback) {
  const auto options = t.pipeline_options_for(req.device, req.step_begin, req.step_end);
  const auto plan = make_plan(t.catalog(), req);
  stats_columns columns;
  columns.histogram_bins = req.histogram_bins;
  columns.log_histogram = req.log_histogram;
  columns.want_ratio = !req.ratio_tensors.empty();
  std::optional<nb::python_error> failure;
  auto run = pipeline::run_statistics_from(t.statistics_source(), t.catalog(), plan, options,
                                           [&](const stats::step_statistics& s) {
    if (failure) return;
    for (const auto& r : s.records) columns.add(r);
    try {
      callback(s.step, static_cast<int>(s.mode), s.mode_step, columns.to_dict());
    } catch (nb::python_error& e) {
      failure.emplace(std::move(e));
    }
  });
  if (failure) throw std::move(*failure);
  if (!run) raise(run.error_status());
}

// ---- rules --------------------------------------------------------------------------------

using rule_specs =
    std::vector<std::tuple<std::string, std::string, std::map<std::string, std::string>>>;

/// (configuration name, rule name, parameters) → invocations (a rule that cannot be built keeps
/// its error: status Error).
std::vector<pipeline::rule_invocation> make_invocations(const rule_specs& specs) {
  std::vector<pipeline::rule_invocation> invocations;
  for (const auto& [configuration_name, rule_name, params] : specs) {
    invocations.push_back(frontend::make_rule_invocation(configuration_name, rule_name, params));
  }
  return invocations;
}

nb::list rule_results_list(const std::vector<pipeline::rule_result>& results);

nb::list evaluate_rules(py_catalog& t,
                        const std::vector<std::tuple<std::string, std::string,
                                                     std::map<std::string, std::string>>>& specs,
                        const std::string& device, std::optional<int64_t> begin,
                        std::optional<int64_t> end, bool strict) {
  auto options = t.pipeline_options_for(device, begin, end);
  options.strict = strict;
  std::vector<pipeline::rule_invocation> invocations = make_invocations(specs);
  std::vector<pipeline::rule_result> results;
  {
    nb::gil_scoped_release release;
    auto run = pipeline::evaluate_rules(t.catalog(), invocations, options, t.statistics_source());
    if (!run) {
      nb::gil_scoped_acquire acquire;
      raise(run.error_status());
    }
    results = std::move(*run);
  }
  return rule_results_list(results);
}

nb::list rule_results_list(const std::vector<pipeline::rule_result>& results) {
  nb::list out;
  for (const auto& r : results) {
    nb::list findings;
    for (const auto& f : r.findings) {
      findings.append(nb::make_tuple(f.rule, f.step, static_cast<int>(f.mode), f.mode_step,
                                     f.tensor, f.worker, f.value, f.message));
    }
    nb::list skipped;  // records the verdict could not see (issue 12)
    for (const auto& k : r.skipped) {
      skipped.append(nb::make_tuple(k.tensor, k.worker, k.step, k.file, k.offset_bytes,
                                    k.saved_reduction, k.reason.to_string()));
    }
    out.append(nb::make_tuple(r.configuration_name, r.rule_name,
                              std::string(rules::rule_status_name(r.status)), r.status_details,
                              findings, skipped, r.warnings));
  }
  return out;
}

std::vector<std::tuple<std::string, std::string, std::map<std::string, std::string>>>
parse_rule_config(const std::string& text, const std::string& source) {
  auto entries = unwrap(rules::parse_rule_config(text, source));
  std::vector<std::tuple<std::string, std::string, std::map<std::string, std::string>>> out;
  for (auto& e : entries) out.emplace_back(e.configuration_name, e.rule_name, e.parameters);
  return out;
}

// ---- visualisation (issue 11) ----------------------------------------------------------------

nb::dict to_tensorboard(py_catalog& t, const std::string& logdir, const std::vector<std::string>& collections,
                        const std::vector<std::string>& regexes, bool overwrite, const std::string& device,
                        std::optional<int64_t> begin, std::optional<int64_t> end) {
  report::tensorboard_export_options e;
  e.logdir = logdir;
  e.collections = collections;
  e.regexes = regexes;
  e.overwrite = overwrite;
  e.pipeline = t.pipeline_options_for(device, begin, end);
  e.statistics = t.statistics_source();
  std::vector<std::string> warnings;
  std::optional<result<report::tensorboard_export_summary>> ran;
  {
    nb::gil_scoped_release release;
    ran = report::export_tensorboard(t.catalog(), e, [&](const status& w) { warnings.push_back(w.to_string()); });
  }
  auto& run = *ran;
  if (!run) raise(run.error_status());
  nb::dict out;
  out["steps"] = run->steps;
  out["scalars"] = run->scalars;
  out["histograms"] = run->histograms;
  out["failed_records"] = run->failed_records;
  nb::list files;
  for (const auto& f : run->files) files.append(f.string());
  out["files"] = files;
  out["warnings"] = warnings;
  return out;
}

nb::tuple write_report(py_catalog& t, const std::string& path, const rule_specs& specs,
                       const std::vector<std::string>& regexes, const std::string& device,
                       std::optional<int64_t> begin, std::optional<int64_t> end) {
  report::html_report_options r;
  r.pipeline = t.pipeline_options_for(device, begin, end);
  r.backend_description = unwrap(frontend::resolve_device(device)).reason;
  r.heatmap_regexes = regexes;
  r.statistics = t.statistics_source();
  std::vector<pipeline::rule_invocation> invocations = make_invocations(specs);
  std::vector<std::string> warnings;
  std::optional<result<report::html_report_summary>> ran;
  {
    nb::gil_scoped_release release;
    ran = report::write_html_report(t.catalog(), std::move(invocations), r, path,
                                    [&](const status& w) { warnings.push_back(w.to_string()); });
  }
  auto& run = *ran;
  if (!run) raise(run.error_status());
  nb::dict info;
  info["bytes"] = run->bytes;
  info["steps"] = run->steps;
  info["tensors"] = run->tensors_plotted;
  info["heatmaps"] = run->heatmaps;
  info["failed_records"] = run->failed_records;
  info["warnings"] = warnings;
  return nb::make_tuple(rule_results_list(run->results), info);
}

}  // namespace
}  // namespace trialstat::python

NB_MODULE(_core, m) {
  using namespace trialstat;
  using namespace trialstat::python;
  m.doc() = "trialstat native core (catalog, record reads, statistics pipeline, rules)";

  static nb::exception<trialstat::error> core_error(m, "Error");
  (void)core_error;

  nb::class_<py_catalog>(m, "Catalog")
      .def_static("open", &py_catalog::open, "path"_a, "range_begin"_a = nb::none(),
                  "range_end"_a = nb::none())
      .def("refresh", &py_catalog::refresh)
      .def("set_store", &py_catalog::set_store, "choice"_a)
      .def("set_device_options", &py_catalog::set_device_options, "verify_device"_a.none(), "pinned_mb"_a.none())
      .def("store_summary", &py_catalog::store_summary)
      .def("warnings", &py_catalog::warnings)
      .def_prop_ro("root", [](const py_catalog& t) { return t.catalog().location(); })
      .def("tensor_names", [](const py_catalog& t) {
        return std::vector<std::string>(t.catalog().tensor_names().begin(), t.catalog().tensor_names().end());
      })
      .def("find_tensor", [](const py_catalog& t, const std::string& n) { return t.catalog().find_tensor(n); })
      .def("workers", [](const py_catalog& t) {
        return std::vector<std::string>(t.catalog().workers().begin(), t.catalog().workers().end());
      })
      .def("steps", [](const py_catalog& t, int m, bool incomplete) {
        return t.catalog().steps(static_cast<mode>(m), incomplete);
      }, "mode"_a, "include_incomplete"_a)
      .def("step_table", [](const py_catalog& t) {
        std::vector<std::tuple<int64_t, int, int64_t, int>> out;
        for (const auto& s : t.catalog().step_infos()) {
          out.emplace_back(s.step, static_cast<int>(s.mode), s.mode_step, static_cast<int>(s.workers.size()));
        }
        return out;
      })
      .def("step_workers", [](const py_catalog& t, int64_t step) {
        std::vector<std::string> out;
        if (const auto* info = t.catalog().find_step(step)) {
          for (auto w : info->workers) out.emplace_back(t.catalog().workers()[w]);
        }
        return out;
      })
      .def("global_step", [](const py_catalog& t, int m, int64_t ms) {
        return t.catalog().global_step(static_cast<mode>(m), ms);
      })
      .def("modes", [](const py_catalog& t) {
        std::vector<int> out;
        for (auto m : t.catalog().modes()) out.push_back(static_cast<int>(m));
        return out;
      })
      .def("num_workers", [](const py_catalog& t) { return t.catalog().num_workers(); })
      .def("training_ended", [](const py_catalog& t) { return t.catalog().training_ended(); })
      .def("is_complete", [](const py_catalog& t, int64_t s) { return t.catalog().is_complete(s); })
      .def("last_complete_step", [](const py_catalog& t) { return t.catalog().last_complete_step(); })
      .def("num_entries", [](const py_catalog& t) { return t.catalog().entries().size(); })
      .def("tensor_names_at", &py_catalog::tensor_names_at)
      .def("tensor_names_in_mode", &py_catalog::tensor_names_in_mode)
      .def("tensor_steps", &py_catalog::tensor_steps)
      .def("entry", &py_catalog::entry_info)
      .def("read", &py_catalog::read, "tensor"_a, "step"_a, "worker"_a, "reduction"_a = "",
           "abs"_a = false)
      .def("collections", [](const py_catalog& t) {
        nb::list out;
        for (const auto& c : t.catalog().collections()) {
          nb::dict d;
          d["name"] = c.name;
          d["include_regex"] = c.include_regex;
          d["tensor_names"] = c.tensor_names;
          d["save_raw_tensor"] = c.save_raw_tensor;
          d["save_shape"] = c.save_shape;
          d["reductions"] = c.reductions;
          d["has_reduction_config"] = c.has_reduction_config;
          d["save_histogram"] = c.save_histogram;
          // Per mode TRAIN..GLOBAL: the file's save_config object (None where null/absent).
          nb::list save_configs;
          for (const auto& sc : c.save_configs) {
            if (!sc) {
              save_configs.append(nb::none());
              continue;
            }
            nb::dict m;
            m["save_interval"] = sc->save_interval;
            m["save_steps"] = sc->save_steps;
            m["start_step"] = sc->start_step;
            m["end_step"] = sc->end_step;
            save_configs.append(m);
          }
          d["save_configs"] = save_configs;
          out.append(d);
        }
        return out;
      })
      .def("has_collections_file", [](const py_catalog& t) { return t.catalog().has_collections_file(); })
      .def("select", [](const py_catalog& t, const std::vector<std::string>& collections,
                        const std::vector<std::string>& regexes) {
        return unwrap(t.catalog().select(collections, regexes));
      })
      .def("in_collection", [](const py_catalog& t, uint32_t id, const std::string& c) {
        return t.catalog().in_collection(id, c);
      })
      .def("statistics", [](py_catalog& t, std::vector<uint32_t> tensors, std::vector<uint32_t> ratio_tensors,
                            std::optional<int64_t> begin, std::optional<int64_t> end,
                            const std::string& device, int bins, bool saved_reductions,
                            bool log_histogram) {
        stats_request req{std::move(tensors), std::move(ratio_tensors), begin, end, device, bins,
                          saved_reductions, log_histogram};
        return statistics(t, req);
      }, "tensors"_a, "ratio_tensors"_a, "step_begin"_a.none(), "step_end"_a.none(), "device"_a,
         "histogram_bins"_a, "saved_reductions"_a, "log_histogram"_a = false)
      .def("for_each_step", [](py_catalog& t, std::vector<uint32_t> tensors, std::vector<uint32_t> ratio_tensors,
                               std::optional<int64_t> begin, std::optional<int64_t> end,
                               const std::string& device, int bins, bool saved_reductions,
                               nb::callable callback, bool log_histogram) {
        stats_request req{std::move(tensors), std::move(ratio_tensors), begin, end, device, bins,
                          saved_reductions, log_histogram};
        for_each_step(t, req, std::move(callback));
      }, "tensors"_a, "ratio_tensors"_a, "step_begin"_a.none(), "step_end"_a.none(), "device"_a,
         "histogram_bins"_a, "saved_reductions"_a, "callback"_a, "log_histogram"_a = false)
      .def("evaluate_rules", &evaluate_rules, "rules"_a, "device"_a, "step_begin"_a.none(), "step_end"_a.none(),
           "strict"_a = false)
      .def("to_tensorboard", &to_tensorboard, "logdir"_a, "collections"_a, "regexes"_a, "overwrite"_a,
           "device"_a, "step_begin"_a.none(), "step_end"_a.none())
      .def("write_report", &write_report, "path"_a, "rules"_a, "regexes"_a, "device"_a,
           "step_begin"_a.none(), "step_end"_a.none());

  m.def("parse_rule_config", &parse_rule_config, "text"_a, "source"_a = "<rule config>");
  m.def("builtin_rule_names", &rules::builtin_rule_names);
  m.def("log_histogram_edges", [] {
    const auto edges = stats::log_histogram_edges();
    return to_numpy(std::vector<double>(edges.begin(), edges.end()));
  }, "The 1549 ascending edges of the fixed log-scale histogram (float64; edge[774] = 0).");
  m.def("dtype_name", [](int t) { return std::string(dtype_name(static_cast<dtype>(t))); });
  m.def("default_rule_names", [] {
    const auto names = frontend::default_rule_names();
    return std::vector<std::string>(names.begin(), names.end());
  }, "The rules run when none is named (every built-in rule that needs no parameter).");
  m.def("backend_for", [](const std::string& device) {
    const auto resolved = unwrap(frontend::resolve_device(device));
    return std::make_pair(std::string(stats::backend_name(resolved.backend)), resolved.reason);
  });

  bind_capture(m);
}

// SPDX-License-Identifier: Apache-2.0
// trialstat._core.CaptureWriter: the nanobind layer over capture::capture_writer, the C++ write
// path of trialstat.torch.Hook (issue 22). Tensors arrive as (data_ptr, nbytes, dtype number,
// shape) of host memory — a torch CPU tensor's data_ptr() — and are copied once, with the GIL
// released, before the call returns. Invalid arguments raise ValueError (RuntimeError once the
// writer is closed); write failures never raise: they are collected by take_errors().
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "trialstat/capture/capture_writer.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace trialstat::python {
namespace {

using capture::capture_writer;

/// Raise the Python exception for a failed call: RuntimeError on a closed writer, MemoryError
/// for out_of_memory, ValueError for anything else the caller passed.
void raise_if_failed(const capture_writer& w, const status& s) {
  if (s.ok()) return;
  if (w.closed()) throw std::runtime_error(s.message());
  if (s.code() == error_code::out_of_memory) throw std::bad_alloc();
  throw std::invalid_argument(s.message());
}

template <typename T>
T value_or_raise(const capture_writer& w, result<T>&& r) {
  raise_if_failed(w, r.error_status());
  return std::move(*r);
}

/// A host tensor described by address, size, TF DataType number and shape; checks that
/// `nbytes` is what dtype and shape imply.
struct host_tensor {
  std::vector<int64_t> shape;
  tensor_view view;
};

host_tensor make_host_tensor(std::string_view what, uint64_t data_ptr, uint64_t nbytes,
                             int dtype_number, std::vector<int64_t> shape) {
  const auto type = dtype_from_proto(dtype_number);
  const std::size_t element_bytes = type ? dtype_size_bytes(*type) : 0;
  if (element_bytes == 0) {
    throw std::invalid_argument(fmt::format(
        "{}: dtype {} is not a fixed-size TF DataType number (1 float32, 2 float64, 3 int32, "
        "4 uint8, 5 int16, 6 int8, 9 int64, 10 bool, 14 bfloat16, 19 float16, ...)",
        what, dtype_number));
  }
  uint64_t count = 1;
  for (const int64_t d : shape) {
    if (d < 0) throw std::invalid_argument(fmt::format("{}: negative dimension {}", what, d));
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count)) {
      throw std::invalid_argument(fmt::format("{}: shape too large", what));
    }
  }
  uint64_t expected = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(element_bytes), &expected) ||
      count > static_cast<uint64_t>(INT64_MAX)) {
    throw std::invalid_argument(fmt::format("{}: shape too large", what));
  }
  if (expected != nbytes) {
    throw std::invalid_argument(fmt::format(
        "{}: nbytes {} but shape {} of {} needs {} bytes", what, nbytes, fmt::join(shape, "x"),
        dtype_name(*type), expected));
  }
  if (nbytes > 0 && data_ptr == 0) throw std::invalid_argument(fmt::format("{}: data_ptr is 0", what));
  host_tensor out{std::move(shape), {}};
  out.view = tensor_view{reinterpret_cast<const std::byte*>(static_cast<uintptr_t>(data_ptr)), *type,
                         out.shape, static_cast<int64_t>(count), memory_kind::host};
  return out;
}

std::vector<std::string> string_list(std::string_view key, nb::handle v) {
  if (nb::isinstance<nb::str>(v)) {
    throw std::invalid_argument(fmt::format("set_collections: '{}' must be a list of str, not a str", key));
  }
  std::vector<std::string> out;
  for (nb::handle item : nb::iter(v)) {
    if (!nb::isinstance<nb::str>(item)) {
      throw std::invalid_argument(fmt::format("set_collections: '{}' items must be str", key));
    }
    out.push_back(nb::cast<std::string>(item));
  }
  return out;
}

std::optional<writer::save_config_spec> parse_save_config(nb::handle v) {
  if (v.is_none()) return std::nullopt;
  if (!nb::isinstance<nb::dict>(v)) {
    throw std::invalid_argument("set_collections: each save_configs item must be None or a dict");
  }
  writer::save_config_spec c;
  for (auto [key_handle, value] : nb::borrow<nb::dict>(v)) {
    const auto key = nb::cast<std::string>(key_handle);
    if (key == "save_interval") {
      c.save_interval = nb::cast<int64_t>(value);
    } else if (key == "save_steps") {
      c.save_steps.clear();
      for (nb::handle s : nb::iter(value)) c.save_steps.push_back(nb::cast<int64_t>(s));
    } else if (key == "start_step") {
      c.start_step = nb::cast<int64_t>(value);
    } else if (key == "end_step") {
      c.end_step = value.is_none() ? std::nullopt : std::optional<int64_t>(nb::cast<int64_t>(value));
    } else {
      throw std::invalid_argument(fmt::format(
          "set_collections: unknown save config key '{}' (save_interval, save_steps, start_step, "
          "end_step)", key));
    }
  }
  return c;
}

writer::collection_spec parse_collection(nb::handle h) {
  if (!nb::isinstance<nb::dict>(h)) {
    throw std::invalid_argument("set_collections: each collection must be a dict");
  }
  writer::collection_spec c;
  bool named = false;
  for (auto [key_handle, value] : nb::borrow<nb::dict>(h)) {
    const auto key = nb::cast<std::string>(key_handle);
    try {
      if (key == "name") {
        c.name = nb::cast<std::string>(value);
        named = true;
      } else if (key == "include_regex") {
        c.include_regex = string_list(key, value);
      } else if (key == "tensor_names") {
        c.tensor_names = string_list(key, value);
      } else if (key == "save_raw_tensor") {
        c.save_raw_tensor = nb::cast<bool>(value);
      } else if (key == "reductions") {
        c.reductions = nb::cast<std::string>(value);
      } else if (key == "save_shape") {
        c.save_shape = nb::cast<bool>(value);
      } else if (key == "save_histogram") {
        c.save_histogram = nb::cast<bool>(value);
      } else if (key == "save_configs") {
        std::vector<nb::handle> items;
        for (nb::handle item : nb::iter(value)) items.push_back(item);
        if (items.size() != 4) {
          throw std::invalid_argument(fmt::format(
              "set_collections: save_configs needs 4 items (TRAIN, EVAL, PREDICT, GLOBAL), got {}",
              items.size()));
        }
        for (std::size_t i = 0; i < 4; ++i) c.save_configs[i] = parse_save_config(items[i]);
      } else {
        throw std::invalid_argument(fmt::format(
            "set_collections: unknown collection key '{}' (name, include_regex, tensor_names, "
            "save_raw_tensor, reductions, save_shape, save_configs, save_histogram)", key));
      }
    } catch (const nb::cast_error&) {
      throw std::invalid_argument(
          fmt::format("set_collections: collection key '{}' has a value of the wrong type", key));
    }
  }
  if (!named) throw std::invalid_argument("set_collections: a collection has no 'name'");
  return c;
}

/// The Python object: owns the writer (its destructor stops the thread without the end marker).
struct py_capture_writer {
  std::unique_ptr<capture_writer> writer;

  capture_writer& get() const { return *writer; }
  void check(const status& s) const { raise_if_failed(*writer, s); }
};

constexpr const char* class_doc =
    "Asynchronous smdebug trial + TensorBoard writer for one worker (the write path of\n"
    "trialstat.torch.Hook). Commands enqueue and return; one C++ thread writes. Tensors are\n"
    "(data_ptr, nbytes, dtype, shape) of host memory, copied once before the call returns.\n"
    "dtype: TF DataType number (1 f32, 2 f64, 3 i32, 4 u8, 5 i16, 6 i8, 9 i64, 10 bool,\n"
    "14 bf16, 19 f16, ...); mode: 1 TRAIN, 2 EVAL, 3 PREDICT, 4 GLOBAL. Bad arguments raise\n"
    "ValueError (RuntimeError after close); write failures go to take_errors(). Use from one\n"
    "thread; close() may also come from another (atexit).";

}  // namespace

void bind_capture(nb::module_& m) {
  using release = nb::call_guard<nb::gil_scoped_release>;
  nb::class_<py_capture_writer>(m, "CaptureWriter", class_doc)
      .def("__init__",
           [](py_capture_writer* self, std::string out_dir, std::string worker, int num_workers,
              uint64_t queue_bytes, bool drop_when_full, std::optional<std::string> tensorboard_dir,
              std::string tensorboard_file_suffix) {
             capture::capture_options o;
             o.out_dir = std::move(out_dir);
             o.worker = std::move(worker);
             o.num_workers = num_workers;
             o.queue_bytes = static_cast<std::size_t>(queue_bytes);
             o.drop_when_full = drop_when_full;
             if (tensorboard_dir) o.tensorboard_dir = std::filesystem::path(*tensorboard_dir);
             o.tensorboard_file_suffix = std::move(tensorboard_file_suffix);
             auto made = capture_writer::start(std::move(o));
             if (!made) {
               if (made.error_status().code() == error_code::invalid_argument) {
                 throw std::invalid_argument(made.error_status().message());
               }
               throw std::runtime_error(made.error_status().message());
             }
             new (self) py_capture_writer{std::move(*made)};
           },
           "out_dir"_a, "worker"_a, "num_workers"_a = 1, "queue_bytes"_a = uint64_t{256} << 20,
           "drop_when_full"_a = false, "tensorboard_dir"_a = nb::none(),
           "tensorboard_file_suffix"_a = "")
      .def("begin_step",
           [](py_capture_writer& w, int64_t global_step, int mode_number, int64_t mode_step) {
             w.check(w.get().begin_step(global_step, static_cast<mode>(mode_number), mode_step));
           },
           "global_step"_a, "mode"_a, "mode_step"_a,
           "Start a global step; mode 1..4 and mode_step go into records and the index meta.")
      .def("set_record_mode",
           [](py_capture_writer& w, int mode_number, int64_t mode_step) {
             w.check(w.get().set_record_mode(static_cast<mode>(mode_number), mode_step));
           },
           "mode"_a, "mode_step"_a,
           "Later records of the open step carry this mode/mode_step; the index meta keeps the step's.")
      .def("add_tensor",
           [](py_capture_writer& w, const std::string& name, uint64_t data_ptr, uint64_t nbytes,
              int dtype_number, std::vector<int64_t> shape, double wall_time) {
             const auto t = make_host_tensor(fmt::format("add_tensor '{}'", name), data_ptr, nbytes,
                                             dtype_number, std::move(shape));
             return value_or_raise(w.get(), w.get().add_tensor(name, t.view, wall_time));
           },
           "name"_a, "data_ptr"_a, "nbytes"_a, "dtype"_a, "shape"_a, "wall_time"_a, release(),
           "Copy a host tensor into the queue (blocks while full unless drop_when_full). "
           "Returns False if dropped.")
      .def("add_shape",
           [](py_capture_writer& w, const std::string& name, std::vector<int64_t> shape) {
             w.check(w.get().add_shape(name, shape));
           },
           "name"_a, "shape"_a, "A shape-only index entry of the open step.")
      .def("end_step", [](py_capture_writer& w) { w.check(w.get().end_step()); },
           "Finish the open step (event file, then index file).")
      .def("set_collections",
           [](py_capture_writer& w, nb::list collections) {
             std::vector<writer::collection_spec> specs;
             for (nb::handle h : collections) specs.push_back(parse_collection(h));
             w.check(w.get().set_collections(std::move(specs)));
           },
           "collections"_a,
           "Replace the collections of the collections file: dicts with name, include_regex, "
           "tensor_names, save_raw_tensor, reductions, save_shape, save_configs (4 items, "
           "TRAIN/EVAL/PREDICT/GLOBAL: None or dict(save_interval, save_steps, start_step, "
           "end_step)), save_histogram. tensor_names are listed exactly as given.")
      .def("write_collections", [](py_capture_writer& w) { w.check(w.get().write_collections()); },
           "Queue writing the collections file now.")
      .def("add_tensorboard_scalar",
           [](py_capture_writer& w, const std::string& tag, int mode_number, int64_t global_step,
              double value, double wall_time) {
             w.check(w.get().add_tensorboard_scalar(tag, static_cast<mode>(mode_number), global_step,
                                                    value, wall_time));
           },
           "tag"_a, "mode"_a, "global_step"_a, "value"_a, "wall_time"_a,
           "A TensorBoard scalar (float32) in the mode's open TB file.")
      .def("add_tensorboard_histogram",
           [](py_capture_writer& w, const std::string& tag, int mode_number, int64_t global_step,
              uint64_t data_ptr, uint64_t nbytes, int dtype_number, std::vector<int64_t> shape,
              double wall_time) {
             const auto t = make_host_tensor(fmt::format("add_tensorboard_histogram '{}'", tag),
                                             data_ptr, nbytes, dtype_number, std::move(shape));
             return value_or_raise(w.get(), w.get().add_tensorboard_histogram(
                                                tag, static_cast<mode>(mode_number), global_step,
                                                t.view, wall_time));
           },
           "tag"_a, "mode"_a, "global_step"_a, "data_ptr"_a, "nbytes"_a, "dtype"_a, "shape"_a,
           "wall_time"_a, release(),
           "A TensorBoard histogram (smdebug's buckets) of a host tensor, copied into the queue. "
           "Returns False if dropped, or skipped like smdebug (bool or empty tensors).")
      .def("close_tensorboard_files",
           [](py_capture_writer& w) { w.check(w.get().close_tensorboard_files()); },
           "Queue closing every open TensorBoard file.")
      .def("flush", [](py_capture_writer& w) { w.get().flush(); }, release(),
           "Block until everything queued so far is written (or failed).")
      .def("close", [](py_capture_writer& w, bool write_end_marker) { w.get().close(write_end_marker); },
           "write_end_marker"_a = true, release(),
           "Drain, finish the step, write the collections file and (if asked) training_job_end.ts, "
           "close TB files, stop the thread. Idempotent.")
      .def("take_errors", [](py_capture_writer& w) { return w.get().take_errors(); },
           "Write-error messages since the last call.")
      .def("counters",
           [](const py_capture_writer& w) {
             const capture::capture_counters c = w.get().counters();
             nb::dict d;
             d["tensors_queued"] = c.tensors_queued;
             d["tensors_written"] = c.tensors_written;
             d["tensors_dropped"] = c.tensors_dropped;
             d["tensors_lost"] = c.tensors_lost;
             d["bytes_written"] = c.bytes_written;
             d["queue_bytes_now"] = c.queue_bytes_now;
             d["queue_bytes_peak"] = c.queue_bytes_peak;
             d["errors_count"] = c.errors_count;
             return d;
           },
           "The counters as a dict.")
      .def_prop_ro("closed", [](const py_capture_writer& w) { return w.get().closed(); })
      .def_prop_ro("out_dir", [](const py_capture_writer& w) { return w.get().options().out_dir.string(); })
      .def_prop_ro("worker", [](const py_capture_writer& w) { return w.get().options().worker; })
      .def_prop_ro("tensorboard_file_suffix",
                   [](const py_capture_writer& w) { return w.get().options().tensorboard_file_suffix; },
                   "The TB file-name suffix in use (\"<pid>_<hostname>\" unless given).");
}

}  // namespace trialstat::python

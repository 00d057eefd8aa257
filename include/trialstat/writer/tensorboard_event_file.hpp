// SPDX-License-Identifier: Apache-2.0
/// @file tensorboard_event_file.hpp
/// @brief Writes one TensorBoard event file (spec/FORMAT.md §2, §3, §10): TFRecord framing with
/// the masked CRC-32C of the length and the true masked CRC-32C of the payload (TensorBoard's
/// reader checks both), each payload an `Event` from proto/event.proto serialized by the
/// generated classes. The first record is `Event{wall_time, file_version: "brain.Event:2"}`;
/// then one record per scalar (`Summary.Value.simple_value`, float32) or histogram
/// (`Summary.Value.histo`, a HistogramProto). `Event.step` is the global step.
///
/// `create` names the file `<dir>/events.out.tfevents.<seconds>.<host>` (TensorBoard picks up
/// any name containing "tfevents"); `create_at` takes the exact path, e.g. the smdebug hook's
/// `<tb_dir>/<MODE>/<S12>_<pid>_<hostname>.tfevents` (FORMAT §1, §10). Either is written through `<name>.tmp` and renamed by `close`, so a TensorBoard
/// watching the folder never reads a half-written file under its final name. Streaming: records
/// go through a small buffer, memory does not grow with the number of records.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "trialstat/status.hpp"

namespace trialstat::writer {

/// @brief A HistogramProto's fields (FORMAT §10): `limits[i]` is the right edge of `counts[i]`.
struct tensorboard_histogram {
  double min = 0.0;
  double max = 0.0;
  double num = 0.0;          ///< number of values in the buckets
  double sum = 0.0;
  double sum_squares = 0.0;
  std::span<const double> limits;
  std::span<const int64_t> counts;
};

/// @brief TensorBoard's tag rule as smdebug applies it: every character other than
/// [-/\w.] becomes '_', leading '/' are removed (FORMAT §10).
[[nodiscard]] std::string tensorboard_tag(std::string_view tag);

class tensorboard_event_file {
 public:
  ~tensorboard_event_file();
  tensorboard_event_file(tensorboard_event_file&&) noexcept;
  tensorboard_event_file& operator=(tensorboard_event_file&&) noexcept;

  /// @brief Create `dir` (and parents) and start the file with the file_version event.
  /// @param wall_time  the file_version event's time and the `<seconds>` of the name
  /// Errors: io_error naming the path.
  [[nodiscard]] static result<tensorboard_event_file> create(const std::filesystem::path& dir,
                                                             double wall_time);

  /// @brief Create the file `file_path` exactly (its folder and parents too), written as
  /// `<file_path>.tmp` until `close`. An existing file of that name is replaced at `close`.
  /// @param file_version_wall_time  set: the first record is `Event{wall_time, file_version:
  ///   "brain.Event:2"}`, as `create` writes; nullopt: no such record — smdebug's hook
  ///   (`FileWriter(wtype="tensorboard")`) starts with the first summary.
  /// Errors: io_error naming the `.tmp` path or the folder.
  /// Source: smdebug/core/writer.py FileWriter, core/locations.py TensorboardFileLocation.
  [[nodiscard]] static result<tensorboard_event_file> create_at(
      const std::filesystem::path& file_path, std::optional<double> file_version_wall_time);

  /// @brief Append a scalar (float32, as TensorBoard stores them). `tag` is used as given
  /// (pass it through `tensorboard_tag`). Errors: io_error.
  [[nodiscard]] status add_scalar(int64_t step, double wall_time, std::string_view tag, float value);
  /// @brief Append a histogram. Errors: io_error; invalid_argument when limits and counts differ
  /// in length.
  [[nodiscard]] status add_histogram(int64_t step, double wall_time, std::string_view tag,
                                     const tensorboard_histogram& histogram);

  /// @brief Flush and rename into place. Errors: io_error.
  [[nodiscard]] status close();

  /// @brief The file's final path.
  [[nodiscard]] const std::filesystem::path& path() const noexcept;
  /// @brief Records written so far (the file_version event included, when there is one).
  [[nodiscard]] int64_t records() const noexcept;

 private:
  struct state;
  explicit tensorboard_event_file(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

}  // namespace trialstat::writer

// SPDX-License-Identifier: Apache-2.0
/// @file tensorboard_export.hpp
/// @brief `trialstat tensorboard`: a trial's statistics as TensorBoard event files (spec/FORMAT.md
/// §10), one run per worker (`<logdir>/<worker>/events.out.tfevents.*`), from the statistics
/// pipeline `trialstat stats` uses (one streaming pass, the same records: memory does not grow
/// with the trial).
///
/// Tags: `<mode>/<collection>/<tensor>/<statistic>` (mode in lower case: train, eval, predict,
/// global; the tensor's collection: the first `--collection` given that holds it, else its first
/// collection by name other than `all` and `default`, else `all`/`default`, else `none`; every
/// character other than [-/\w.] becomes '_', FORMAT §10). Event.step = the global step,
/// Event.wall_time = the Event.wall_time of the tensor's record in the trial.
///   scalars (simple_value, float32): mean, std, min, max, l2, linf (over finite values; left
///     out when there is none), zero_fraction (zero_count / numel), nan_count, pos_inf_count,
///     neg_inf_count, update_ratio (tensors of `weights`/`biases`, from their second saved step)
///     — each equal to `trialstat stats --format json`'s value rounded to float32;
///   histogram (HistogramProto): the fixed log-scale histogram (`stats --log-hist`), exact counts
///     at every step, trimmed as smdebug's TensorBoard writer trims (`to_tensorboard_buckets`);
///     min/max/sum/sum_squares over finite values, num = the binned count. NaN/±Inf stay in the
///     scalars beside it. Left out when no value is binned (empty, all non-finite).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::report {

/// @brief What to export and where.
struct tensorboard_export_options {
  std::filesystem::path logdir;
  std::vector<std::string> collections;  ///< like `stats --collection` (empty + no regex: all)
  std::vector<std::string> regexes;      ///< like `stats --tensor-regex`
  /// A logdir that already holds anything is refused (invalid_argument) unless this is set;
  /// then every TensorBoard event file under it (name containing "tfevents") is deleted first
  /// and other files are left alone.
  bool overwrite = false;
  pipeline::pipeline_options pipeline;   ///< backend, step range, progress
  /// Where the statistics come from (empty: `pipeline::run_statistics` in this process); the CLI
  /// passes `distributed::run_statistics` so that MPI ranks share the reading.
  pipeline::statistics_source statistics;
  /// false on MPI ranks other than 0: they compute their share through `statistics` and neither
  /// check, clean nor write `logdir` (rank 0 alone writes the export; the summary stays empty).
  bool writes_files = true;
};

/// @brief What was written.
struct tensorboard_export_summary {
  int64_t steps = 0;
  int64_t records = 0;           ///< statistics records seen
  int64_t failed_records = 0;    ///< records whose raw tensor could not be read (warned)
  int64_t scalars = 0;
  int64_t histograms = 0;
  std::vector<std::filesystem::path> files;  ///< one per worker with records
};

/// @brief Export. `warn` gets each record that could not be read (as `stats` warns).
/// @return the summary; errors: invalid_argument (logdir not empty without overwrite, a bad
///   regex), io_error (writing), and the pipeline's run-wide failures.
[[nodiscard]] result<tensorboard_export_summary> export_tensorboard(
    const trial::catalog& trial, const tensorboard_export_options& options,
    const std::function<void(const status&)>& warn = {});

/// @brief The collection a tensor's tags use (see the file comment).
[[nodiscard]] std::string display_collection(const trial::catalog& trial, trial::tensor_id tensor,
                                             const std::vector<std::string>& preferred = {});

}  // namespace trialstat::report

// SPDX-License-Identifier: Apache-2.0
// `trialstat tensorboard` (tensorboard_export.hpp): statistics records → TensorBoard events.
#include "trialstat/report/tensorboard_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

#include "trialstat/report/statistics_writer.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/writer/tensorboard_event_file.hpp"

namespace trialstat::report {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

/// Refuse a logdir holding anything unless `overwrite`; with it, delete its event files.
status prepare_logdir(const fs::path& logdir, bool overwrite) {
  std::error_code ec;
  if (!fs::exists(logdir, ec)) return status::success();
  if (!fs::is_directory(logdir, ec)) {
    return status(error_code::invalid_argument,
                  fmt::format("--logdir {}: exists and is not a directory", logdir.string()));
  }
  if (fs::is_empty(logdir, ec)) return status::success();
  if (!overwrite) {
    return status(error_code::invalid_argument,
                  fmt::format("--logdir {}: not empty (it may hold other runs); pass --overwrite (Python: overwrite=True) "
                              "to replace its TensorBoard event files",
                              logdir.string()));
  }
  std::vector<fs::path> doomed;
  for (auto it = fs::recursive_directory_iterator(logdir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().filename().string().find("tfevents") != std::string::npos) {
      doomed.push_back(it->path());
    }
  }
  if (ec) return status(error_code::io_error, fmt::format("--logdir {}: {}", logdir.string(), ec.message()));
  for (const auto& p : doomed) {
    if (!fs::remove(p, ec) && ec) {
      return status(error_code::io_error, fmt::format("{}: cannot delete: {}", p.string(), ec.message()));
    }
  }
  return status::success();
}

/// A worker's run folder name (no path separators).
std::string run_name(std::string_view worker) {
  std::string out(worker);
  for (char& c : out) {
    if (c == '/' || c == '\\') c = '_';
  }
  if (out.empty() || out == "." || out == "..") out = "worker_" + out;
  return out;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class exporter {
 public:
  exporter(const trial::catalog& trial, const tensorboard_export_options& options)
      : trial_(trial), options_(options) {}

  status write(const stats::statistics_record& r) {
    if (!r.moments) return status::success();
    auto file = file_of(r.worker, r.wall_time.value_or(now_seconds()));
    if (!file) return file.error_status();
    writer::tensorboard_event_file& out = **file;
    const std::string& prefix = tag_prefix(r.tensor, r.mode);
    const double wall = r.wall_time.value_or(0.0);
    const stats::moments& m = *r.moments;
    const auto scalar = [&](std::string_view name, double value) -> status {
      tag_.assign(prefix).append(name);
      ++summary_.scalars;
      return out.add_scalar(r.step, wall, tag_, static_cast<float>(value));
    };
    if (m.has_finite()) {
      TRIALSTAT_RETURN_IF_ERROR(scalar("mean", m.mean));
      TRIALSTAT_RETURN_IF_ERROR(scalar("std", m.std_dev()));
      TRIALSTAT_RETURN_IF_ERROR(scalar("min", m.min));
      TRIALSTAT_RETURN_IF_ERROR(scalar("max", m.max));
      TRIALSTAT_RETURN_IF_ERROR(scalar("l2", m.l2()));
      TRIALSTAT_RETURN_IF_ERROR(scalar("linf", m.max_abs));
    }
    if (m.count > 0) {
      TRIALSTAT_RETURN_IF_ERROR(
          scalar("zero_fraction", static_cast<double>(m.zero_count) / static_cast<double>(m.count)));
    }
    TRIALSTAT_RETURN_IF_ERROR(scalar("nan_count", static_cast<double>(m.nan_count)));
    TRIALSTAT_RETURN_IF_ERROR(scalar("pos_inf_count", static_cast<double>(m.pos_inf_count)));
    TRIALSTAT_RETURN_IF_ERROR(scalar("neg_inf_count", static_cast<double>(m.neg_inf_count)));
    if (const auto ratio = update_ratio(r)) TRIALSTAT_RETURN_IF_ERROR(scalar("update_ratio", *ratio));
    if (r.log_histogram) {
      const stats::tensorboard_buckets buckets = stats::to_tensorboard_buckets(*r.log_histogram);
      if (!buckets.counts.empty()) {
        writer::tensorboard_histogram h;
        h.min = m.min;
        h.max = m.max;
        h.num = static_cast<double>(r.log_histogram->binned_count());
        h.sum = m.sum;
        h.sum_squares = m.sum_squares;
        h.limits = buckets.limits;
        h.counts = buckets.counts;
        tag_.assign(prefix).append("histogram");
        ++summary_.histograms;
        TRIALSTAT_RETURN_IF_ERROR(out.add_histogram(r.step, wall, tag_, h));
      }
    }
    return status::success();
  }

  result<tensorboard_export_summary> close() {
    for (auto& [worker, file] : files_) {
      TRIALSTAT_RETURN_IF_ERROR(file.close());
      summary_.files.push_back(file.path());
    }
    files_.clear();
    return summary_;
  }

  tensorboard_export_summary& summary() { return summary_; }

 private:
  result<writer::tensorboard_event_file*> file_of(trial::worker_id worker, double wall_time) {
    auto it = files_.find(worker);
    if (it != files_.end()) return &it->second;
    auto made = writer::tensorboard_event_file::create(
        options_.logdir / run_name(trial_.workers()[worker]), wall_time);
    if (!made) return made.error_status();
    return &files_.emplace(worker, std::move(*made)).first->second;
  }

  const std::string& tag_prefix(trial::tensor_id tensor, trialstat::mode mode) {
    const auto key = std::make_pair(tensor, static_cast<int>(mode));
    auto it = prefixes_.find(key);
    if (it != prefixes_.end()) return it->second;
    const std::string raw = fmt::format("{}/{}/{}/", lower(mode_name(mode)),
                                        display_collection(trial_, tensor, options_.collections),
                                        trial_.tensor_names()[tensor]);
    return prefixes_.emplace(key, writer::tensorboard_tag(raw)).first->second;
  }

  const trial::catalog& trial_;
  const tensorboard_export_options& options_;
  std::map<trial::worker_id, writer::tensorboard_event_file> files_;
  std::map<std::pair<trial::tensor_id, int>, std::string> prefixes_;
  std::string tag_;
  tensorboard_export_summary summary_;
};

}  // namespace

std::string display_collection(const trial::catalog& trial, trial::tensor_id tensor,
                               const std::vector<std::string>& preferred) {
  for (const auto& name : preferred) {
    if (trial.in_collection(tensor, name)) return name;
  }
  std::optional<std::string> fallback;
  std::optional<std::string> best;
  for (const auto& c : trial.collections()) {
    if (!trial.in_collection(tensor, c.name)) continue;
    if (c.name == "all" || c.name == "default") {
      if (!fallback || c.name < *fallback) fallback = c.name;
    } else if (!best || c.name < *best) {
      best = c.name;
    }
  }
  if (best) return *best;
  if (fallback) return *fallback;
  return "none";
}

result<tensorboard_export_summary> export_tensorboard(const trial::catalog& trial,
                                                      const tensorboard_export_options& options,
                                                      const std::function<void(const status&)>& warn) {
  if (options.logdir.empty()) return status(error_code::invalid_argument, "--logdir is required");
  auto selected = select_tensors(trial, options.collections, options.regexes);
  if (!selected) return selected.error_status();
  const plan::read_plan plan = statistics_plan(
      trial, *selected, {.histogram_bins = 0, .log_histogram = true, .saved_reductions = false});
  if (!options.writes_files) {  // an MPI rank other than 0: its share of the statistics only
    auto run = pipeline::run_statistics_from(options.statistics, trial, plan, options.pipeline,
                                             [](const stats::step_statistics&) {});
    if (!run) return run.error_status();
    return tensorboard_export_summary{};
  }
  TRIALSTAT_RETURN_IF_ERROR(prepare_logdir(options.logdir, options.overwrite));
  exporter out(trial, options);
  status failure;
  auto run = pipeline::run_statistics_from(options.statistics, trial, plan, options.pipeline,
                                           [&](const stats::step_statistics& step) {
    out.summary().steps += 1;
    for (const auto& r : step.records) {
      out.summary().records += 1;
      if (!r.raw_status.ok()) {
        if (r.raw_status.code() != error_code::not_found) {
          out.summary().failed_records += 1;
          if (warn) warn(r.raw_status);
        }
        continue;
      }
      if (failure.ok()) failure = out.write(r);
    }
  });
  if (!run) return run.error_status();
  if (!failure.ok()) return failure;
  return out.close();
}

}  // namespace trialstat::report

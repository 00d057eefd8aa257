// SPDX-License-Identifier: Apache-2.0
/// @file writer_output.hpp
/// @brief Test helper: the whole output of a statistics writer over a trial, as `trialstat stats`
/// produces it (CPU backend, every tensor), optionally through a wrapping writer.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "tests/support/files.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/report/statistics_writer.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::testing {

/// Wraps the writer `create` made (identity when empty).
using writer_wrapper = std::function<std::unique_ptr<report::statistics_writer>(std::unique_ptr<report::statistics_writer>)>;

/// The statistics `what` of every tensor of the trial at `root`, written in `format` to a file
/// under `root` named `file`; returns the file's text.
inline std::string writer_output(const std::filesystem::path& root, report::output_format format,
                                 const report::statistics_plan_options& what, const std::string& file = "out.txt",
                                 const writer_wrapper& wrap = {}) {
  auto trial = trial::catalog::open(root.string());
  EXPECT_TRUE(trial.has_value()) << trial.error_status().to_string();
  const plan::read_plan plan = report::statistics_plan(*trial, trial->sorted_tensor_ids(), what);
  const auto path = root / file;
  std::FILE* out = std::fopen(path.c_str(), "wb");
  EXPECT_NE(out, nullptr);
  auto writer = report::statistics_writer::create(format, out);
  if (wrap) writer = wrap(std::move(writer));
  pipeline::pipeline_options run;
  run.backend = stats::backend::cpu;
  const auto counters = pipeline::run_statistics(
      *trial, plan, run, [&](const stats::step_statistics& step) { writer->write_step(*trial, step); });
  EXPECT_TRUE(counters.has_value()) << counters.error_status().to_string();
  writer->finish();
  std::fclose(out);
  return read_text_file(path);
}

}  // namespace trialstat::testing

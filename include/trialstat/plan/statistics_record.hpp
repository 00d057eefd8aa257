// SPDX-License-Identifier: Apache-2.0
/// @file statistics_record.hpp
/// @brief The statistics stage's output for one (tensor, global step, worker) — what rules,
/// reports and bindings consume (DESIGN.md stage 5 → 6).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "trialstat/dtype.hpp"
#include "trialstat/mode.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::plan {

/// @brief Pairwise statistics against one earlier saved step of the same tensor and worker.
struct previous_comparison {
  int64_t previous_step = 0;                 ///< global step p < step
  bool shape_matches = true;                 ///< false: shapes differ, `result` is empty
  stats::pairwise result;                    ///< with the first allclose parameter set
  std::vector<int64_t> allclose_violations;  ///< one per requested allclose parameter set
};

/// @brief A saved reduction's value (smdebug `reduction_value` of a saved record).
struct reduction_value {
  trial::reduction_op op = trial::reduction_op::min;
  bool abs = false;
  double value = 0.0;
  dtype type = dtype::float32;
};

/// @brief Everything computed for one (tensor, step, worker).
struct statistics_record {
  trial::tensor_id tensor = 0;
  trial::worker_id worker = 0;
  int64_t step = 0;                     ///< global step
  trialstat::mode mode = trialstat::mode::global;
  int64_t mode_step = 0;

  /// ok, or why the raw tensor could not be used (not saved, corrupt record, unsupported dtype):
  /// such a record costs only itself; `moments` etc. are then absent.
  status raw_status;
  dtype type = dtype::invalid;
  std::vector<int64_t> shape;
  int64_t num_elements = 0;

  std::optional<stats::moments> moments;
  std::optional<stats::histogram> histogram;
  std::optional<double> scalar;                      ///< the value when num_elements == 1
  std::vector<previous_comparison> previous;         ///< most recent previous step first
  std::vector<stats::axis0_counts> axis0;            ///< parallel to the request's predicates
  std::vector<reduction_value> saved_reductions;     ///< when requested
};

/// @brief All records of one saved global step (every worker), in (worker, tensor) order.
struct step_statistics {
  int64_t step = 0;
  trialstat::mode mode = trialstat::mode::global;
  int64_t mode_step = 0;
  std::span<const statistics_record> records;
};

}  // namespace trialstat::plan

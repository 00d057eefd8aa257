// SPDX-License-Identifier: Apache-2.0
/// @file statistics_writer.hpp
/// @brief Writes statistics records as a table, CSV or JSON Lines (`trialstat stats --format`).
///
/// JSON Lines schema (one object per (tensor, step, worker)): `tensor, step, mode, mode_step,
/// worker`, then the fields of ../shared/trials/README.md "stats": `dtype, shape, numel,
/// finite_count, nan_count, pos_inf_count, neg_inf_count, zero_count, min, max, mean, variance,
/// std, sum, l1, l2, linf, mean_abs, hist: {bins, lo, hi, counts[, degenerate]}` — statistics
/// over finite values, `null` when there are none. Optional: `update_ratio: {prev_step, ratio}`
/// (‖W_s − W_prev‖₂ / (‖W_prev‖₂ + 1e-9), non-finite as "NaN"/"Infinity"/"-Infinity"),
/// `saved_reductions: [{reduction, abs, value}]`, `log_hist` (only when the record carries a
/// fixed log-scale histogram, `statistics_request::log_histogram`, `trialstat stats --log-hist`):
/// `{bins: 1548, nonzero: [[bin, count], ...], nan, pos_inf, neg_inf, below, above}` — the
/// non-empty bins only, ascending by bin index; bin i = [edge[i], edge[i+1]) of
/// stats::log_histogram_edges() (edge[774] = 0, the last bin closed); `below`/`above` count
/// finite values beyond ±9.92e19; Σ counts + the five extra counts = numel. The table and CSV
/// formats do not carry log-scale histograms (1548 bins fit no column): use JSON. And `error`
/// when the raw value was unusable.
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <string_view>

#include "trialstat/plan/read_plan.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::report {

/// @brief Output format of `trialstat stats`.
enum class output_format : uint8_t { table, csv, json };

/// @brief Parse "table" / "csv" / "json". Errors: invalid_argument.
[[nodiscard]] result<output_format> parse_output_format(std::string_view text);

/// @brief Epsilon of the weight-update ratio (smdebug WeightUpdateRatio default, RULES §3.3).
inline constexpr double update_ratio_epsilon = 1e-9;

/// @brief The weight-update ratio of a record: ‖W_s − W_prev‖₂ / (‖W_prev‖₂ + 1e-9) against the
/// most recent previous saved step (`previous.front()`), IEEE propagation of non-finite values.
/// @param prev_step  receives that previous step (may be null)
/// @return nullopt when the record has no previous comparison or the shapes differ.
[[nodiscard]] std::optional<double> update_ratio(const stats::statistics_record& r,
                                                 int64_t* prev_step = nullptr);

/// @brief The tensors `trialstat stats` (and `tensorboard`, `report`) select: every tensor when
/// both lists are empty, else `catalog::select(collections, regexes)`. Errors: as select.
[[nodiscard]] result<std::vector<trial::tensor_id>> select_tensors(
    const trial::catalog& trial, std::span<const std::string> collections,
    std::span<const std::string> regexes);

/// @brief Which tensors of a statistics plan get the weight-update ratio (one step of history,
/// `update_ratio`).
enum class update_ratio_tensors : uint8_t {
  none,                ///< no tensor
  weights_and_biases,  ///< tensors of the `weights` and `biases` collections (the default)
  all,                 ///< every tensor of the plan
};

/// @brief What a statistics plan computes for each tensor.
struct statistics_plan_options {
  int histogram_bins = 0;        ///< fixed-bin histogram bins (0: none)
  bool log_histogram = false;    ///< the fixed log-scale histogram
  bool saved_reductions = true;  ///< smdebug's saved reductions
  update_ratio_tensors update_ratio = update_ratio_tensors::weights_and_biases;
};

/// @brief Add to `plan`, for each of `tensors`, the statistics of a row of `trialstat stats`
/// (and of the C API's and Python's statistics): moments, plus what `options` asks. Requests
/// for a tensor already in `plan` merge with it.
void add_statistics_requests(plan::read_plan& plan, const trial::catalog& trial,
                             std::span<const trial::tensor_id> tensors,
                             const statistics_plan_options& options);

/// @brief The read plan of `trialstat stats` (and `tensorboard`, `report`, the C API and
/// Python) for `tensors`: add_statistics_requests into an empty plan.
[[nodiscard]] plan::read_plan statistics_plan(const trial::catalog& trial,
                                              std::span<const trial::tensor_id> tensors,
                                              const statistics_plan_options& options);

/// @brief Streams statistics rows to a C stream (buffered; not thread-safe).
class statistics_writer {
 public:
  virtual ~statistics_writer() = default;
  /// @brief Write every record of one step.
  virtual void write_step(const trial::catalog& trial, const stats::step_statistics& step) = 0;
  /// @brief Flush buffered output.
  virtual void finish() = 0;

  /// @brief A writer for `format` writing to `out` (which must outlive the writer).
  [[nodiscard]] static std::unique_ptr<statistics_writer> create(output_format format, std::FILE* out);
};

}  // namespace trialstat::report

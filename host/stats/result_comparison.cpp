// SPDX-License-Identifier: Apache-2.0
// The comparison of two implementations' statistics (result_comparison.hpp): selftest's checks
// and the verified batches of a CUDA run.
#include "trialstat/stats/result_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace trialstat::stats {
namespace {

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

}  // namespace

result_comparer::result_comparer(comparison_outcome& outcome, std::string reference_name, std::string compared_name,
                                 bool exact_floats)
    : outcome_(outcome),
      reference_name_(std::move(reference_name)),
      compared_name_(std::move(compared_name)),
      exact_floats_(exact_floats) {}

std::string field_name::text() const {
  if (index >= 0) return fmt::format("{}[{}]", name, index);
  if (number) return fmt::format("{} {}", name, *number);
  if (!suffix.empty()) return fmt::format("{} {}", name, suffix);
  return std::string(name);
}

void result_comparer::at(std::string where) { where_ = std::move(where); }

void result_comparer::count(const field_name& field, int64_t ref, int64_t got) {
  const int64_t diff = got > ref ? got - ref : ref - got;
  outcome_.max_count_difference = std::max(outcome_.max_count_difference, diff);
  if (diff != 0) fail(field, fmt::format("{} {} vs {} {}", compared_name_, got, reference_name_, ref));
}

void result_comparer::exact(const field_name& field, double ref, double got) {
  note_float(field, ref, got, std::max(std::fabs(ref), std::fabs(got)), same_bits(ref, got));
}

void result_comparer::value(const field_name& field, double ref, double got) {
  if (exact_floats_) return exact(field, ref, got);
  note_float(field, ref, got, std::max(std::fabs(ref), std::fabs(got)),
             ref == got || (std::isnan(ref) && std::isnan(got)));
}

void result_comparer::near(const field_name& field, double ref, double got, double scale) {
  if (exact_floats_) return exact(field, ref, got);
  if (!std::isfinite(ref) || !std::isfinite(got)) return value(field, ref, got);
  note_float(field, ref, got, std::fabs(scale), std::fabs(got - ref) <= device_relative_tolerance * std::fabs(scale));
}

void result_comparer::error(std::string_view side, const status& failure) {
  if (outcome_.mismatch.empty()) outcome_.mismatch = fmt::format("{}: {}", side, failure.to_string());
  outcome_.passed = false;
}

void result_comparer::note_float(const field_name& field, double ref, double got, double scale, bool ok) {
  double relative = 0.0;
  if (!same_bits(ref, got)) {
    const double diff = std::fabs(got - ref);
    relative = std::isnan(diff) || std::isinf(diff) ? std::numeric_limits<double>::infinity()
               : scale > 0                          ? diff / scale
               : diff > 0                           ? std::numeric_limits<double>::infinity()
                                                    : 0.0;
  }
  outcome_.max_relative_difference = std::max(outcome_.max_relative_difference, relative);
  if (!ok) {
    fail(field, fmt::format("{} {:a} vs {} {:a} (relative difference {:.3g})", compared_name_, got, reference_name_,
                            ref, relative));
  }
}

void result_comparer::fail(const field_name& field, const std::string& values) {
  if (outcome_.mismatch.empty()) {
    std::string place = where_;
    if (!section_.empty()) place += place.empty() ? std::string(section_) : fmt::format(", {}", section_);
    outcome_.mismatch = place.empty() ? fmt::format("{}: {}", field.text(), values)
                                      : fmt::format("{}: {}: {}", place, field.text(), values);
  }
  outcome_.passed = false;
}

void compare(result_comparer& c, const moments& ref, const moments& got) {
  c.count("count", ref.count, got.count);
  c.count("nan_count", ref.nan_count, got.nan_count);
  c.count("pos_inf_count", ref.pos_inf_count, got.pos_inf_count);
  c.count("neg_inf_count", ref.neg_inf_count, got.neg_inf_count);
  c.count("zero_count", ref.zero_count, got.zero_count);
  c.count("positive_count", ref.positive_count, got.positive_count);
  c.count("negative_count", ref.negative_count, got.negative_count);
  c.exact("min", ref.min, got.min);
  c.exact("max", ref.max, got.max);
  c.value("max_abs", ref.max_abs, got.max_abs);
  c.near("sum", ref.sum, got.sum, ref.sum_abs);
  c.near("sum_abs", ref.sum_abs, got.sum_abs, ref.sum_abs);
  c.near("sum_squares", ref.sum_squares, got.sum_squares, ref.sum_squares);
  const double n = ref.finite_count() > 0 ? static_cast<double>(ref.finite_count()) : 1.0;
  c.near("mean", ref.mean, got.mean, ref.sum_abs / n);
  const double variance = ref.has_finite() ? ref.variance() : 0.0;
  c.near("variance", variance, got.has_finite() ? got.variance() : 0.0, std::max(variance, ref.mean * ref.mean));
}

void compare(result_comparer& c, const histogram& ref, const histogram& got) {
  c.count("bins", ref.bins, got.bins);
  c.exact("lo", ref.lo, got.lo);
  c.exact("hi", ref.hi, got.hi);
  c.count("degenerate", ref.degenerate, got.degenerate);
  c.count("cells", static_cast<int64_t>(ref.counts.size()), static_cast<int64_t>(got.counts.size()));
  for (std::size_t i = 0; i < std::min(ref.counts.size(), got.counts.size()); ++i) {
    c.count({"cell", i}, ref.counts[i], got.counts[i]);
  }
}

void compare(result_comparer& c, const log_histogram& ref, const log_histogram& got) {
  c.count("cells", static_cast<int64_t>(ref.counts.size()), static_cast<int64_t>(got.counts.size()));
  for (std::size_t i = 0; i < std::min(ref.counts.size(), got.counts.size()); ++i) {
    c.count({"bin", i}, ref.counts[i], got.counts[i]);
  }
  c.count("nan_count", ref.nan_count, got.nan_count);
  c.count("pos_inf_count", ref.pos_inf_count, got.pos_inf_count);
  c.count("neg_inf_count", ref.neg_inf_count, got.neg_inf_count);
  c.count("below_count", ref.below_count, got.below_count);
  c.count("above_count", ref.above_count, got.above_count);
}

void compare(result_comparer& c, const pairwise& ref, const pairwise& got) {
  c.count("count", ref.count, got.count);
  c.count("allclose_violations", ref.allclose_violations, got.allclose_violations);
  c.count("nan_mismatches", ref.nan_mismatches, got.nan_mismatches);
  c.value("diff_max_abs", ref.diff_max_abs, got.diff_max_abs);
  c.near("diff_sum_squares", ref.diff_sum_squares, got.diff_sum_squares, ref.diff_sum_squares);
  c.near("previous_sum_squares", ref.previous_sum_squares, got.previous_sum_squares, ref.previous_sum_squares);
}

void compare(result_comparer& c, const axis0_counts& ref, const axis0_counts& got) {
  c.count("batch", ref.batch, got.batch);
  c.count("nodes", static_cast<int64_t>(ref.per_node.size()), static_cast<int64_t>(got.per_node.size()));
  for (std::size_t i = 0; i < std::min(ref.per_node.size(), got.per_node.size()); ++i) {
    c.count({"node", i}, ref.per_node[i], got.per_node[i]);
  }
}

void compare(result_comparer& c, const channel_sums& ref, const channel_sums& got, std::span<const double> abs_sums) {
  c.count("axis", ref.axis, got.axis);
  c.count("channels", static_cast<int64_t>(ref.channels()), static_cast<int64_t>(got.channels()));
  for (std::size_t k = 0; k < std::min(ref.channels(), got.channels()); ++k) {
    c.count({"count", k}, ref.count[k], got.count[k]);
    c.count({"nan_count", k}, ref.nan_count[k], got.nan_count[k]);
    c.count({"pos_inf_count", k}, ref.pos_inf_count[k], got.pos_inf_count[k]);
    c.count({"neg_inf_count", k}, ref.neg_inf_count[k], got.neg_inf_count[k]);
    if (k < abs_sums.size()) {
      c.near({"sum", k}, ref.sum[k], got.sum[k], abs_sums[k]);
    } else {
      c.value({"sum", k}, ref.sum[k], got.sum[k]);
    }
  }
}

void compare_counts(result_comparer& c, std::string_view what, std::span<const int64_t> ref,
                    std::span<const int64_t> got) {
  c.count({what, std::string_view("size")}, static_cast<int64_t>(ref.size()), static_cast<int64_t>(got.size()));
  for (std::size_t i = 0; i < std::min(ref.size(), got.size()); ++i) c.count({what, i}, ref[i], got[i]);
}

namespace {

int64_t present(bool has) { return has ? 1 : 0; }

void compare_previous(result_comparer& c, const previous_comparison& ref, const previous_comparison& got) {
  c.count("previous_step", ref.previous_step, got.previous_step);
  c.count("shape_matches", present(ref.shape_matches), present(got.shape_matches));
  compare(c, ref.result, got.result);
  compare_counts(c, "allclose_violations", ref.allclose_violations, got.allclose_violations);
}

}  // namespace

void compare_records(result_comparer& c, const statistics_record& ref, const statistics_record& got,
                     const record_comparison_options& options) {
  const auto section = [&](std::string_view name) { c.section(name); };
  c.count("tensor", ref.tensor, got.tensor);
  c.count("worker", ref.worker, got.worker);
  c.count("step", ref.step, got.step);
  c.count("raw_status", static_cast<int64_t>(ref.raw_status.code()), static_cast<int64_t>(got.raw_status.code()));
  c.count("num_elements", ref.num_elements, got.num_elements);
  section("moments");
  c.count("moments present", present(ref.moments.has_value()), present(got.moments.has_value()));
  if (ref.moments && got.moments) compare(c, *ref.moments, *got.moments);
  section("histogram");
  c.count("histogram present", present(ref.histogram.has_value()), present(got.histogram.has_value()));
  if (ref.histogram && got.histogram) compare(c, *ref.histogram, *got.histogram);
  section("log_histogram");
  c.count("log_histogram present", present(ref.log_histogram.has_value()), present(got.log_histogram.has_value()));
  if (ref.log_histogram && got.log_histogram) compare(c, *ref.log_histogram, *got.log_histogram);
  c.count("scalar present", present(ref.scalar.has_value()), present(got.scalar.has_value()));
  if (ref.scalar && got.scalar) c.value("scalar", *ref.scalar, *got.scalar);
  section("axis0 counts");
  c.count("axis0 sets", static_cast<int64_t>(ref.axis0.size()), static_cast<int64_t>(got.axis0.size()));
  for (std::size_t k = 0; k < std::min(ref.axis0.size(), got.axis0.size()); ++k) compare(c, ref.axis0[k], got.axis0[k]);
  section("pairwise");
  if (options.reference_history_may_be_shorter) {
    for (const previous_comparison& r : ref.previous) {
      const auto match = std::find_if(got.previous.begin(), got.previous.end(),
                                      [&](const previous_comparison& g) { return g.previous_step == r.previous_step; });
      c.count({"pairwise against step", static_cast<double>(r.previous_step)}, 1, present(match != got.previous.end()));
      if (match != got.previous.end()) compare_previous(c, r, *match);
    }
  } else {
    c.count("previous", static_cast<int64_t>(ref.previous.size()), static_cast<int64_t>(got.previous.size()));
    for (std::size_t k = 0; k < std::min(ref.previous.size(), got.previous.size()); ++k) {
      compare_previous(c, ref.previous[k], got.previous[k]);
    }
  }
  section("percentiles");
  c.count("percentiles", static_cast<int64_t>(ref.percentiles.size()), static_cast<int64_t>(got.percentiles.size()));
  for (std::size_t k = 0; k < std::min(ref.percentiles.size(), got.percentiles.size()); ++k) {
    c.value({"percentile", ref.percentiles[k].q}, ref.percentiles[k].value, got.percentiles[k].value);
  }
  section("equality counts");
  c.count("equal_counts", static_cast<int64_t>(ref.equal_counts.size()), static_cast<int64_t>(got.equal_counts.size()));
  for (std::size_t k = 0; k < std::min(ref.equal_counts.size(), got.equal_counts.size()); ++k) {
    c.count({"count of x ==", ref.equal_counts[k].value}, ref.equal_counts[k].count, got.equal_counts[k].count);
  }
  section("channel sums");
  c.count("channel_sums", static_cast<int64_t>(ref.channel_sums.size()), static_cast<int64_t>(got.channel_sums.size()));
  for (std::size_t k = 0; k < std::min(ref.channel_sums.size(), got.channel_sums.size()); ++k) {
    std::vector<double> scales;
    if (options.channel_abs_sums) {
      scales = options.channel_abs_sums(ref.channel_sums[k]);
    } else if (ref.moments) {
      scales.assign(ref.channel_sums[k].channels(), ref.moments->sum_abs);
    }
    compare(c, ref.channel_sums[k], got.channel_sums[k], scales);
  }
  c.section({});
  c.count("kept values", present(ref.values_data != nullptr), present(got.values_data != nullptr));
}

}  // namespace trialstat::stats

// SPDX-License-Identifier: Apache-2.0
// A statistics request: per tensor, the union of what every rule (or `trialstat stats`) asked for.
//
// List-valued needs (allclose parameter sets, axis-0 predicates) are kept as sorted, duplicate-
// free sets, so the merged request does not depend on the order in which rules were prepared.
// Positive-count predicates sort before interval predicates and ignore lo/hi (they have no
// bounds), so a tensor that any rule asked positive counts for has them at index 0.
#include "trialstat/stats/statistics_request.hpp"

#include <algorithm>
#include <tuple>

namespace trialstat::stats {
namespace {

bool allclose_less(const allclose_params& a, const allclose_params& b) {
  return std::tuple(a.rtol, a.atol, a.equal_nan) < std::tuple(b.rtol, b.atol, b.equal_nan);
}

/// Canonical form: a positive-count predicate has no bounds.
axis0_predicate canonical(axis0_predicate p) {
  if (p.what == axis0_predicate::kind::positive) {
    p.lo = 0.0;
    p.hi = 0.0;
  }
  return p;
}

bool axis0_less(const axis0_predicate& a, const axis0_predicate& b) {
  return std::tuple(static_cast<int>(a.what), a.lo, a.hi) <
         std::tuple(static_cast<int>(b.what), b.lo, b.hi);
}

bool axis0_equal(const axis0_predicate& a, const axis0_predicate& b) {
  return a.what == b.what && a.lo == b.lo && a.hi == b.hi;
}

template <typename T, typename Less, typename Equal>
void sorted_union(std::vector<T>& into, const std::vector<T>& more, Less less, Equal equal) {
  into.insert(into.end(), more.begin(), more.end());
  std::sort(into.begin(), into.end(), less);
  into.erase(std::unique(into.begin(), into.end(), equal), into.end());
}

/// NaN cannot be ordered (and no statistic is defined for it): drop it before sorting.
void drop_nan(std::vector<double>& v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return x != x; }), v.end());
}

void union_doubles(std::vector<double>& into, const std::vector<double>& more) {
  into.insert(into.end(), more.begin(), more.end());
  drop_nan(into);
  std::sort(into.begin(), into.end());
  // −0.0 == +0.0: one entry.
  into.erase(std::unique(into.begin(), into.end()), into.end());
}

void union_axes(std::vector<int64_t>& into, const std::vector<int64_t>& more) {
  into.insert(into.end(), more.begin(), more.end());
  std::sort(into.begin(), into.end());
  into.erase(std::unique(into.begin(), into.end()), into.end());
}

}  // namespace

void statistics_request::normalise() {
  statistics_request& r = *this;
  union_doubles(r.percentiles, {});
  union_doubles(r.equal_values, {});
  union_axes(r.channel_axes, {});
  for (auto& p : r.axis0) p = canonical(p);
  sorted_union(r.allclose, {}, allclose_less,
               [](const auto& a, const auto& b) { return a == b; });
  sorted_union(r.axis0, {}, axis0_less, axis0_equal);
}

void statistics_request::merge(const statistics_request& other) {
  moments = moments || other.moments;
  histogram_bins = std::max(histogram_bins, other.histogram_bins);
  history_depth = std::max(history_depth, other.history_depth);
  log_histogram = log_histogram || other.log_histogram;
  saved_reductions = saved_reductions || other.saved_reductions;
  keep_values = keep_values || other.keep_values;
  keep_strings = keep_strings || other.keep_strings;
  wall_time = wall_time || other.wall_time;
  union_doubles(percentiles, other.percentiles);
  union_doubles(equal_values, other.equal_values);
  union_axes(channel_axes, other.channel_axes);
  std::vector<axis0_predicate> more_axis0;
  more_axis0.reserve(other.axis0.size());
  for (const auto& p : other.axis0) more_axis0.push_back(canonical(p));
  sorted_union(allclose, other.allclose, allclose_less,
               [](const auto& a, const auto& b) { return a == b; });
  for (auto& p : axis0) p = canonical(p);
  sorted_union(axis0, more_axis0, axis0_less, axis0_equal);
}

}  // namespace trialstat::stats

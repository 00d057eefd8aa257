// SPDX-License-Identifier: Apache-2.0
#include "tests/reference/reference_rule_stats.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace trialstat::reference {

double percentile_numpy(const std::vector<double>& values, double q_percent) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (values.empty()) return nan;
  for (const double v : values) {
    if (std::isnan(v)) return nan;
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  return percentile_numpy_sorted(sorted, q_percent);
}

double percentile_numpy_sorted(const std::vector<double>& sorted, double q_percent) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (sorted.empty()) return nan;
  for (const double v : sorted) {
    if (std::isnan(v)) return nan;
  }
  const auto n = static_cast<int64_t>(sorted.size());
  // numpy: q = true_divide(q, 100); virtual_indexes = (n - 1) * q
  volatile double quantile = q_percent / 100.0;
  volatile double virtual_index = static_cast<double>(n - 1) * quantile;
  double previous_index = std::floor(virtual_index);
  double next_index = previous_index + 1;
  int64_t lo = static_cast<int64_t>(previous_index);
  int64_t hi = static_cast<int64_t>(next_index);
  if (virtual_index >= static_cast<double>(n - 1)) {  // _get_indexes: above bounds → -1
    previous_index = -1;
    lo = hi = n - 1;
  }
  volatile double gamma = virtual_index - previous_index;  // _get_gamma
  const double a = sorted[static_cast<std::size_t>(lo)];
  const double b = sorted[static_cast<std::size_t>(hi)];
  // _lerp: diff_b_a = b - a; lerp = a + diff_b_a * t; where t >= 0.5: b - diff_b_a * (1 - t)
  volatile double diff = b - a;
  if (gamma >= 0.5) {
    volatile double one_minus = 1.0 - gamma;
    volatile double product = diff * one_minus;
    return b - product;
  }
  volatile double product = diff * gamma;
  return a + product;
}

top_k_ref top_k_sum_ref(const std::vector<double>& values, int64_t k) {
  top_k_ref r;
  const auto n = static_cast<int64_t>(values.size());
  r.k = std::min(k, n);
  if (n == 0) {
    r.max = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  for (const double v : values) {
    if (std::isnan(v)) {
      const long double nan = std::numeric_limits<long double>::quiet_NaN();
      r.top_sum = r.total_sum = nan;
      r.max = std::numeric_limits<double>::quiet_NaN();
      return r;
    }
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  r.max = sorted[0];
  for (int64_t i = 0; i < n; ++i) {
    const long double v = sorted[static_cast<std::size_t>(i)];
    r.total_sum += v;
    r.total_abs += std::fabs(v);
    if (i < r.k) {
      r.top_sum += v;
      r.top_abs += std::fabs(v);
    }
  }
  return r;
}

int64_t class_ref(double x, int64_t num_classes) {
  if (!std::isfinite(x)) return num_classes;
  const double t = std::trunc(x);
  if (t < 0 || t >= static_cast<double>(num_classes)) return num_classes;
  return static_cast<int64_t>(t);
}

std::vector<int64_t> bincount_ref(const std::vector<double>& values, int64_t num_classes) {
  std::vector<int64_t> counts(static_cast<std::size_t>(num_classes + 1), 0);
  for (const double v : values) ++counts[static_cast<std::size_t>(class_ref(v, num_classes))];
  return counts;
}

std::vector<int64_t> confusion_ref(const std::vector<double>& labels,
                                   const std::vector<double>& predictions, int64_t num_classes,
                                   int64_t width) {
  const int64_t side = num_classes + 1;
  std::vector<int64_t> counts(static_cast<std::size_t>(side * side), 0);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const int64_t label = class_ref(labels[i], num_classes);
    int64_t prediction = num_classes;
    if (width > 0) {
      int64_t best = 0;
      for (int64_t j = 0; j < width; ++j) {
        const double x = predictions[i * static_cast<std::size_t>(width) + static_cast<std::size_t>(j)];
        if (std::isnan(x)) {
          best = j;
          break;
        }
        if (x > predictions[i * static_cast<std::size_t>(width) + static_cast<std::size_t>(best)]) best = j;
      }
      prediction = std::min(best, num_classes);
    } else {
      prediction = class_ref(predictions[i], num_classes);
    }
    ++counts[static_cast<std::size_t>(label * side + prediction)];
  }
  return counts;
}

std::vector<int64_t> count_equal_ref(const std::vector<double>& values,
                                     const std::vector<double>& targets) {
  std::vector<int64_t> out(targets.size(), 0);
  for (std::size_t k = 0; k < targets.size(); ++k) {
    for (const double v : values) out[k] += v == targets[k] ? 1 : 0;
  }
  return out;
}

channel_ref channel_sums_ref(const std::vector<double>& values, int64_t outer, int64_t channels,
                             int64_t inner) {
  channel_ref r;
  const auto c_size = static_cast<std::size_t>(channels);
  r.sum.assign(c_size, 0);
  r.sum_abs.assign(c_size, 0);
  r.count.assign(c_size, 0);
  r.nan_count.assign(c_size, 0);
  r.pos_inf_count.assign(c_size, 0);
  r.neg_inf_count.assign(c_size, 0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < inner; ++i) {
        const double x = values[static_cast<std::size_t>((o * channels + c) * inner + i)];
        const auto k = static_cast<std::size_t>(c);
        ++r.count[k];
        if (std::isnan(x)) {
          ++r.nan_count[k];
        } else if (std::isinf(x)) {
          ++(x > 0 ? r.pos_inf_count : r.neg_inf_count)[k];
        } else {
          r.sum[k] += x;
          r.sum_abs[k] += std::fabs(x);
        }
      }
    }
  }
  return r;
}

}  // namespace trialstat::reference

// SPDX-License-Identifier: Apache-2.0
// stats::run_selftest: every statistic on two sides (CUDA and the CPU twin, or a CPU SIMD level
// and the baseline level) over the generated batches of selftest_data.hpp, compared field by
// field at the tolerances of selftest.hpp. Everything runs through the public entry points.
#include "trialstat/stats/selftest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <new>
#include <optional>
#include <string_view>
#include <unistd.h>

#include "host/stats/selftest_data.hpp"
#include "kernels/common/cpu_simd.hpp"
#include "trialstat/config.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/channel_sums.hpp"
#include "trialstat/stats/class_counts.hpp"
#include "trialstat/stats/float64_values.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/order_statistics.hpp"
#include "trialstat/stats/pairwise.hpp"
#include "trialstat/stats/result_comparison.hpp"
#include "trialstat/stats/statistics_executor.hpp"
#include "trialstat/stats/value_counts.hpp"

#if TRIALSTAT_HAS_CUDA
#include "kernels/common/cuda_device.hpp"
#endif

namespace trialstat::stats {
namespace {

using detail::selftest_batch;

/// One implementation: a backend, and for the CPU the SIMD level cap (-1: the detected level).
struct side {
  std::string name;
  stats::backend which = stats::backend::cpu;
  int isa_limit = -1;
  void activate() const { kernels::set_cpu_isa_limit(isa_limit); }
};

// --- the comparison (result_comparison.hpp) ----------------------------------------------------

/// The shared comparer, writing into one check, with the sides' names.
class comparer : public result_comparer {
 public:
  comparer(selftest_check& check, const side& reference, const side& other, bool exact_floats)
      : result_comparer(check, reference.name, other.name, exact_floats) {}
  using result_comparer::error;
  void error(const side& s, const status& failure) { result_comparer::error(s.name, failure); }
};

// Σ|x| over the finite values, the scale of sums (the headers' tolerances are relative to it).
double finite_abs_sum(std::span<const double> values) {
  double s = 0.0;
  for (double x : values) {
    if (std::isfinite(x)) s += std::fabs(x);
  }
  return s;
}

/// Σ|x| of each channel along `axis` of a [outer, channels, inner] view.
std::vector<double> channel_abs_sums(std::span<const double> values, std::span<const int64_t> shape, int64_t axis) {
  const auto rank = static_cast<int64_t>(shape.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return {};
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[static_cast<std::size_t>(d)];
  const int64_t channels = shape[static_cast<std::size_t>(axis)];
  std::vector<double> sums(static_cast<std::size_t>(channels), 0.0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) sums[static_cast<std::size_t>((static_cast<int64_t>(i) / inner) % channels)] += std::fabs(values[i]);
  }
  return sums;
}

// --- the statistics, per batch -----------------------------------------------------------------

constexpr int histogram_bin_counts[] = {64, 7};
constexpr double percentile_q[] = {0.0, 5.0, 50.0, 95.0, 100.0};
constexpr double counted_values[] = {0.0, 1.0, -0.5, 64.0, std::numeric_limits<double>::infinity()};
constexpr int64_t class_count = 10;
const stats::allclose_params allclose_sets[] = {stats::allclose_params{}, stats::allclose_params{1e-2, 1e-4, true}};

/// How checks change the compared side's outputs (the test hook): once per named statistic.
struct perturber {
  std::vector<std::string> statistics;
  selftest_perturbation kind = selftest_perturbation::none;
  std::vector<std::string> applied;
  /// Calls `change(kind)` when `name` is to be perturbed and was not yet; `change` returns
  /// whether it found something to change.
  void maybe(const std::string& name, const std::function<bool(selftest_perturbation)>& change) {
    if (kind == selftest_perturbation::none) return;
    if (std::find(statistics.begin(), statistics.end(), name) == statistics.end()) return;
    if (std::find(applied.begin(), applied.end(), name) != applied.end()) return;
    if (change(kind)) applied.push_back(name);
  }
};

double next_up(double v) { return std::nextafter(v, std::numeric_limits<double>::infinity()); }

/// The checks of one batch between two sides.
class batch_checks {
 public:
  batch_checks(const selftest_batch& batch, const side& reference, const side& other, bool exact_floats,
               perturber& perturb, std::vector<selftest_check>& out)
      : b_(batch), ref_(reference), other_(other), exact_(exact_floats), perturb_(perturb), out_(out) {}

  /// One check: `compute(side, outputs)` on each side, the hook on the compared side, then
  /// `compare_all(comparer, reference outputs, other outputs)`.
  template <class Outputs, class Compute, class Perturb, class Compare>
  void run(std::string statistic, int64_t elements, Compute&& compute, Perturb&& change, Compare&& compare_all) {
    selftest_check& check = out_.emplace_back();
    check.statistic = std::move(statistic);
    check.data_case = b_.label;
    check.backends = fmt::format("{} vs {}", other_.name, ref_.name);
    check.num_elements = elements;
    check.passed = true;
    comparer c(check, ref_, other_, exact_);
    Outputs ref_out{}, other_out{};
    ref_.activate();
    if (status s = compute(ref_, ref_out); !s.ok()) return c.error(ref_, s);
    other_.activate();
    if (status s = compute(other_, other_out); !s.ok()) return c.error(other_, s);
    perturb_.maybe(check.statistic, [&](selftest_perturbation kind) { return change(kind, other_out); });
    compare_all(c, ref_out, other_out);
  }

  std::string where(std::size_t i) const {
    return fmt::format("{} {} #{} (n={})", b_.label, b_.names[i], i, b_.segments[i].num_elements);
  }

  /// Per-tensor statistics: out[i] = f(side, i).
  template <class T, class Compute, class Perturb, class Compare>
  void per_tensor(std::string statistic, int64_t elements, Compute&& compute_one, Perturb&& change_one,
                  Compare&& compare_one) {
    const std::size_t n = b_.segments.size();
    run<std::vector<T>>(
        std::move(statistic), elements,
        [&](const side& s, std::vector<T>& out) {
          out.resize(n);
          for (std::size_t i = 0; i < n; ++i) {
            auto r = compute_one(s, i);
            if (!r) return status(r.error_status().code(), fmt::format("{}: {}", where(i), r.error_status().message()));
            out[i] = std::move(*r);
          }
          return status::success();
        },
        [&](selftest_perturbation kind, std::vector<T>& out) {
          for (auto& o : out) {
            if (change_one(kind, o)) return true;
          }
          return false;
        },
        [&](comparer& c, const std::vector<T>& ref, const std::vector<T>& got) {
          for (std::size_t i = 0; i < n; ++i) {
            c.at(where(i));
            compare_one(c, ref[i], got[i], i);
          }
        });
  }

  void batch_statistics() {
    const int64_t elements = b_.total_elements();
    const auto& segs = b_.segments;
    const std::byte* base = b_.bytes.data();
    run<std::vector<moments>>(
        "moments", elements,
        [&](const side& s, std::vector<moments>& out) {
          out.resize(segs.size());
          return compute_moments(base, segs, out, s.which);
        },
        [](selftest_perturbation kind, std::vector<moments>& out) {
          if (kind == selftest_perturbation::float_ulp) out[0].max = next_up(out[0].max);
          if (kind == selftest_perturbation::count_off_by_one) ++out[0].nan_count;
          return true;
        },
        [&](comparer& c, const std::vector<moments>& ref, const std::vector<moments>& got) {
          for (std::size_t i = 0; i < segs.size(); ++i) {
            c.at(where(i));
            compare(c, ref[i], got[i]);
          }
        });
    // The histograms bin over the reference side's [min, max] on both sides: only the binning
    // is compared here (the moments are compared above).
    std::vector<moments> ranges(segs.size());
    ref_.activate();
    const status ranged = compute_moments(base, segs, ranges, backend::cpu);
    using histogram_sets = std::vector<std::vector<histogram>>;
    run<histogram_sets>(
        "histogram", elements,
        [&](const side& s, histogram_sets& out) {
          TRIALSTAT_RETURN_IF_ERROR(ranged);
          for (const int bins : histogram_bin_counts) {
            auto& h = out.emplace_back(segs.size());
            TRIALSTAT_RETURN_IF_ERROR(compute_histograms(base, segs, ranges, bins, h, s.which));
          }
          return status::success();
        },
        [](selftest_perturbation kind, histogram_sets& out) {
          for (auto& h : out[0]) {
            if (h.counts.empty()) continue;
            if (kind == selftest_perturbation::float_ulp) h.hi = next_up(h.hi);
            if (kind == selftest_perturbation::count_off_by_one) ++h.counts[0];
            return true;
          }
          return false;
        },
        [&](comparer& c, const histogram_sets& ref, const histogram_sets& got) {
          for (std::size_t k = 0; k < ref.size(); ++k) {
            for (std::size_t i = 0; i < segs.size(); ++i) {
              c.at(fmt::format("{} bins={}", where(i), histogram_bin_counts[k]));
              compare(c, ref[k][i], got[k][i]);
            }
          }
        });
    run<std::vector<log_histogram>>(
        "log_histogram", elements,
        [&](const side& s, std::vector<log_histogram>& out) {
          out.resize(segs.size());
          return compute_log_histograms(base, segs, out, s.which);
        },
        [](selftest_perturbation kind, std::vector<log_histogram>& out) {
          if (kind != selftest_perturbation::count_off_by_one) return false;
          ++out[0].counts[774];
          return true;
        },
        [&](comparer& c, const std::vector<log_histogram>& ref, const std::vector<log_histogram>& got) {
          for (std::size_t i = 0; i < segs.size(); ++i) {
            c.at(where(i));
            compare(c, ref[i], got[i]);
          }
        });
  }

  void per_tensor_statistics() {
    const int64_t elements = b_.total_elements();
    using pairwise_set = std::vector<pairwise>;
    per_tensor<pairwise_set>(
        "pairwise", 2 * elements,
        [&](const side& s, std::size_t i) -> result<pairwise_set> {
          pairwise_set out;
          for (const auto& params : allclose_sets) {
            auto r = compute_pairwise(b_.view(i, true), b_.view(i), params, s.which);
            if (!r) return r.error_status();
            out.push_back(*r);
          }
          return out;
        },
        [](selftest_perturbation kind, pairwise_set& p) {
          if (kind == selftest_perturbation::float_ulp && std::isfinite(p[0].diff_max_abs)) {
            p[0].diff_max_abs = next_up(p[0].diff_max_abs);
            return true;
          }
          if (kind == selftest_perturbation::count_off_by_one) return ++p[0].allclose_violations, true;
          return false;
        },
        [](comparer& c, const pairwise_set& ref, const pairwise_set& got, std::size_t) {
          for (std::size_t k = 0; k < ref.size(); ++k) compare(c, ref[k], got[k]);
        });
    using axis_set = std::vector<axis0_counts>;
    per_tensor<axis_set>(
        "axis0_counts", elements,
        [&](const side& s, std::size_t i) -> result<axis_set> {
          axis_set out;
          for (const auto& predicate : {axis0_predicate{}, axis0_predicate{axis0_predicate::kind::open_interval, -1.5, 10.0}}) {
            auto r = count_along_axis0(b_.view(i), predicate, s.which);
            if (!r) return r.error_status();
            out.push_back(std::move(*r));
          }
          return out;
        },
        [](selftest_perturbation kind, axis_set& a) {
          if (kind != selftest_perturbation::count_off_by_one || a[0].per_node.empty()) return false;
          return ++a[0].per_node[0], true;
        },
        [](comparer& c, const axis_set& ref, const axis_set& got, std::size_t) {
          for (std::size_t k = 0; k < ref.size(); ++k) compare(c, ref[k], got[k]);
        });
    per_tensor<std::vector<double>>(
        "percentiles", elements,
        [&](const side& s, std::size_t i) { return compute_percentiles(b_.view(i), percentile_q, s.which); },
        [](selftest_perturbation kind, std::vector<double>& p) {
          if (kind != selftest_perturbation::float_ulp || !std::isfinite(p[2])) return false;
          return p[2] = next_up(p[2]), true;
        },
        [](comparer& c, const std::vector<double>& ref, const std::vector<double>& got, std::size_t) {
          for (std::size_t k = 0; k < std::size(percentile_q); ++k) {
            c.value({"q", percentile_q[k]}, ref[k], got[k]);
          }
        });
    per_tensor<std::vector<int64_t>>(
        "count_equal", elements,
        [&](const side& s, std::size_t i) { return count_equal(b_.view(i), counted_values, s.which); },
        [](selftest_perturbation kind, std::vector<int64_t>& counts) {
          return kind == selftest_perturbation::count_off_by_one && (++counts[0], true);
        },
        [](comparer& c, const std::vector<int64_t>& ref, const std::vector<int64_t>& got, std::size_t) {
          compare_counts(c, "count", ref, got);
        });
    // Channel sums along the last and the first axis; the scale needs each channel's Σ|x|.
    std::vector<std::vector<double>> values(b_.segments.size());
    for (std::size_t i = 0; i < values.size(); ++i) static_cast<void>(append_as_float64(b_.view(i), values[i]));
    const int64_t channel_axes[] = {-1, 0};
    using channel_set = std::vector<channel_sums>;
    per_tensor<channel_set>(
        "channel_sums", elements,
        [&](const side& s, std::size_t i) -> result<channel_set> {
          channel_set out;
          for (const int64_t axis : channel_axes) {
            auto r = compute_channel_sums(b_.view(i), axis, s.which);
            if (!r) return r.error_status();
            out.push_back(std::move(*r));
          }
          return out;
        },
        [](selftest_perturbation kind, channel_set& sums) {
          if (kind != selftest_perturbation::count_off_by_one || sums[0].count.empty()) return false;
          return ++sums[0].count[0], true;
        },
        [&](comparer& c, const channel_set& ref, const channel_set& got, std::size_t i) {
          for (std::size_t k = 0; k < ref.size(); ++k) {
            compare(c, ref[k], got[k], channel_abs_sums(values[i], b_.shapes[i], channel_axes[k]));
          }
        });
    per_tensor<class_histogram>(
        "bincount", elements,
        [&](const side& s, std::size_t i) { return compute_bincount(b_.view(i), class_count, s.which); },
        [](selftest_perturbation kind, class_histogram& h) {
          return kind == selftest_perturbation::count_off_by_one && (++h.counts[0], true);
        },
        [](comparer& c, const class_histogram& ref, const class_histogram& got, std::size_t) {
          compare_counts(c, "class", ref.counts, got.counts);
        });
    // Labels against the perturbed copy as predicted classes, and (rank 2) the first rows'
    // worth of labels against the argmax of each row.
    using confusion_set = std::vector<confusion_counts>;
    int64_t confusion_elements = 2 * elements;
    for (std::size_t i = 0; i < b_.segments.size(); ++i) {
      if (b_.shapes[i].size() == 2) confusion_elements += b_.shapes[i][0] + b_.segments[i].num_elements;
    }
    per_tensor<confusion_set>(
        "confusion", confusion_elements,
        [&](const side& s, std::size_t i) -> result<confusion_set> {
          confusion_set out;
          auto same = compute_confusion(b_.view(i), b_.view(i, true), class_count, prediction_kind::class_values, s.which);
          if (!same) return same.error_status();
          out.push_back(std::move(*same));
          if (b_.shapes[i].size() == 2) {
            tensor_view labels = b_.view(i);
            labels.shape = {};
            labels.num_elements = b_.shapes[i][0];
            auto argmax = compute_confusion(labels, b_.view(i, true), class_count, prediction_kind::argmax_last_axis, s.which);
            if (!argmax) return argmax.error_status();
            out.push_back(std::move(*argmax));
          }
          return out;
        },
        [](selftest_perturbation kind, confusion_set& m) {
          return kind == selftest_perturbation::count_off_by_one && (++m[0].counts[0], true);
        },
        [](comparer& c, const confusion_set& ref, const confusion_set& got, std::size_t) {
          c.count("matrices", static_cast<int64_t>(ref.size()), static_cast<int64_t>(got.size()));
          for (std::size_t k = 0; k < std::min(ref.size(), got.size()); ++k) compare_counts(c, "cell", ref[k].counts, got[k].counts);
        });
    using top_set = std::vector<top_k_sum>;
    per_tensor<top_set>(
        "top_k_sum", elements,
        [&](const side& s, std::size_t i) -> result<top_set> {
          top_set out;
          for (const int64_t k : {int64_t{0}, int64_t{5}, b_.segments[i].num_elements + 1}) {
            auto r = compute_top_k_sum(b_.view(i), k, s.which);
            if (!r) return r.error_status();
            out.push_back(*r);
          }
          return out;
        },
        [](selftest_perturbation kind, top_set& t) {
          if (kind == selftest_perturbation::float_ulp && std::isfinite(t[1].max)) return t[1].max = next_up(t[1].max), true;
          if (kind == selftest_perturbation::count_off_by_one) return ++t[1].k, true;
          return false;
        },
        [&](comparer& c, const top_set& ref, const top_set& got, std::size_t i) {
          const double scale = finite_abs_sum(values[i]);
          for (std::size_t k = 0; k < ref.size(); ++k) {
            c.count("k", ref[k].k, got[k].k);
            c.near("top_sum", ref[k].top_sum, got[k].top_sum, scale);
            c.near("total_sum", ref[k].total_sum, got[k].total_sum, scale);
            c.value("max", ref[k].max, got[k].max);
          }
        });
  }

  /// The executors over two steps: the perturbed copy, then the batch (pairwise against it).
  void executor() {
    statistics_request request;
    request.histogram_bins = 64;
    request.log_histogram = true;
    request.history_depth = 1;
    request.allclose.assign(std::begin(allclose_sets), std::end(allclose_sets));
    request.axis0 = {axis0_predicate{}};
    request.percentiles.assign(std::begin(percentile_q), std::end(percentile_q));
    request.equal_values = {0.0, 1.0};
    request.channel_axes = {-1};
    request.normalise();
    using step_records = std::vector<std::vector<statistics_record>>;
    const std::size_t n = b_.segments.size();
    run<step_records>(
        "executor", 2 * b_.total_elements(),
        [&](const side& s, step_records& steps) {
          executor_options options;
          options.pinned_pool_bytes = std::size_t{64} << 20;
          auto made = make_statistics_executor(s.which, options);
          if (!made) return made.error_status();
          for (int step = 0; step < 2; ++step) {
            auto& records = steps.emplace_back(n);
            tensor_batch batch;
            batch.base = (step == 0 ? b_.perturbed : b_.bytes).data();
            batch.segments = b_.segments;
            for (std::size_t i = 0; i < n; ++i) {
              statistics_record& r = records[i];
              r.tensor = static_cast<trial::tensor_id>(i);
              r.step = step;
              r.type = b_.segments[i].type;
              r.shape = b_.shapes[i];
              r.num_elements = b_.segments[i].num_elements;
              batch.records.push_back(&r);
              batch.requests.push_back(&request);
            }
            TRIALSTAT_RETURN_IF_ERROR((*made)->compute(batch));
          }
          return status::success();
        },
        [](selftest_perturbation kind, step_records& steps) {
          auto& m = steps[1][0].moments;
          if (!m) return false;
          if (kind == selftest_perturbation::float_ulp) m->max = next_up(m->max);
          if (kind == selftest_perturbation::count_off_by_one) ++m->count;
          return kind != selftest_perturbation::none;
        },
        [&](comparer& c, const step_records& ref, const step_records& got) {
          for (std::size_t step = 0; step < ref.size(); ++step) {
            for (std::size_t i = 0; i < n; ++i) {
              c.at(fmt::format("step {} {}", step, where(i)));
              compare_records(c, ref[step][i], got[step][i], i);
            }
          }
        });
  }

 private:
  void compare_records(comparer& c, const statistics_record& ref, const statistics_record& got, std::size_t i) {
    record_comparison_options options;
    options.channel_abs_sums = [&](const channel_sums& sums) {
      std::vector<double> values;
      static_cast<void>(append_as_float64(b_.view(i), values));
      return channel_abs_sums(values, b_.shapes[i], sums.axis);
    };
    stats::compare_records(c, ref, got, options);
  }

  const selftest_batch& b_;
  const side& ref_;
  const side& other_;
  bool exact_;
  perturber& perturb_;
  std::vector<selftest_check>& out_;
};

// --- memory for the large case -----------------------------------------------------------------

/// MemAvailable from /proc/meminfo (Linux), else free physical pages; bytes.
uint64_t available_host_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page_bytes > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes) : 0;
}

std::string gib(uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1u << 30)); }

/// Why the large case cannot run here, or empty when it can.
std::string large_case_refusal(bool cuda) {
  const auto bytes = static_cast<uint64_t>(selftest_large_elements);
  const uint64_t host_needed = 3 * bytes;
  const uint64_t host = available_host_bytes();
  if (host < host_needed) {
    return fmt::format("large: skipped: {} of host memory available, {} needed", gib(host), gib(host_needed));
  }
#if TRIALSTAT_HAS_CUDA
  if (cuda) {
    const uint64_t device_needed = 2 * bytes;
    const uint64_t device = kernels::cuda_free_device_bytes();
    if (device < device_needed) {
      return fmt::format("large: skipped: {} of device memory free, {} needed", gib(device), gib(device_needed));
    }
  }
#else
  static_cast<void>(cuda);
#endif
  return {};
}

/// The checks of every batch between `reference` and `other`.
void check_batches(const std::vector<selftest_batch>& batches, const side& reference, const side& other,
                   bool exact_floats, perturber& perturb, std::vector<selftest_check>& out) {
  for (const auto& batch : batches) {
    batch_checks checks(batch, reference, other, exact_floats, perturb, out);
    checks.batch_statistics();
    if (batch.per_tensor) checks.per_tensor_statistics();
    checks.executor();
  }
}

/// count_equal over the large tensor (the only per-tensor statistic that needs no n-sized
/// output or scratch).
void check_large(const selftest_batch& large, const side& reference, const side& other, bool exact_floats,
                 perturber& perturb, std::vector<selftest_check>& out) {
  batch_checks checks(large, reference, other, exact_floats, perturb, out);
  checks.batch_statistics();
  checks.per_tensor<std::vector<int64_t>>(
      "count_equal", large.total_elements(),
      [&](const side& s, std::size_t i) { return count_equal(large.view(i), counted_values, s.which); },
      [](selftest_perturbation, std::vector<int64_t>&) { return false; },
      [](comparer& c, const std::vector<int64_t>& ref, const std::vector<int64_t>& got, std::size_t) {
        compare_counts(c, "count", ref, got);
      });
}

}  // namespace

result<selftest_report> run_selftest(const selftest_options& options) {
  if (options.compare_cuda && !cuda_device_available()) {
    return status(error_code::invalid_argument,
                  TRIALSTAT_HAS_CUDA ? "selftest: no CUDA device is visible" : "selftest: this build has no CUDA backend");
  }
  if (!options.compare_cuda && !options.compare_cpu_isa) {
    return status(error_code::invalid_argument, "selftest: nothing to compare (neither CUDA nor the CPU levels)");
  }
  selftest_report report;
  const kernels::cpu_isa detected = kernels::detected_cpu_isa();
  std::vector<selftest_batch> batches;
  try {
    for (const dtype t : detail::selftest_dtypes()) batches.push_back(detail::make_dtype_batch(t, options.seed));
    batches.push_back(detail::make_tiny_batch(options.seed));
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory, "selftest: cannot allocate the generated data");
  }
  perturber perturb{options.perturb_statistics, options.perturbation, {}};
  std::optional<selftest_batch> large;
  if (options.large) {
    std::string refusal = large_case_refusal(options.compare_cuda);
    if (refusal.empty()) {
      try {
        large = detail::make_large_batch(selftest_large_elements);
      } catch (const std::bad_alloc&) {
        refusal = "large: skipped: the 2^31+4099-element tensor could not be allocated";
      }
    }
    if (!refusal.empty()) report.notes.push_back(std::move(refusal));
  }
  if (options.compare_cuda) {
    const side cpu{"cpu", backend::cpu, -1};
    const side cuda{"cuda", backend::cuda, -1};
    check_batches(batches, cpu, cuda, false, perturb, report.checks);
    if (large) check_large(*large, cpu, cuda, false, perturb, report.checks);
  }
  if (options.compare_cpu_isa) {
    const side baseline{"baseline", backend::cpu, static_cast<int>(kernels::cpu_isa::baseline)};
    std::vector<side> levels;
    for (int level = 1; level <= static_cast<int>(detected); ++level) {
      levels.push_back({kernels::cpu_isa_name(static_cast<kernels::cpu_isa>(level)), backend::cpu, level});
    }
    if (levels.empty()) {
      levels.push_back(baseline);
      report.notes.push_back("cpu: this CPU runs the baseline level only: the baseline is run twice and compared");
    } else {
      std::string names;
      for (const auto& l : levels) names += (names.empty() ? "" : " and ") + l.name;
      report.notes.push_back(fmt::format("cpu: detected {}; comparing {} against baseline", kernels::cpu_isa_name(detected), names));
    }
    for (const side& level : levels) {
      check_batches(batches, baseline, level, true, perturb, report.checks);
      if (large) check_large(*large, baseline, level, true, perturb, report.checks);
    }
  }
  kernels::set_cpu_isa_limit(-1);
  return report;
}

}  // namespace trialstat::stats

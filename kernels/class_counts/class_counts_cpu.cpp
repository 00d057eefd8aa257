// SPDX-License-Identifier: Apache-2.0
// CPU twin of the class counts: the elements are cut into fixed chunks, a bounded number of
// chunk groups count into private counters (when those fit a small budget; otherwise one group),
// and the groups are added at the end — integers, so the result is exact in any order.
#include "kernels/class_counts/class_counts_cpu.hpp"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "kernels/class_counts/class_counts_op.hpp"
#include "kernels/common/cpu_parallel.hpp"

namespace trialstat::kernels {
namespace {

/// Private counters of all groups together stay below this many int64 (64 MiB).
constexpr int64_t private_counter_budget = int64_t{1} << 23;
constexpr int64_t max_groups = 16;

int64_t group_count(int64_t items, int64_t counters) {
  const int64_t by_work = (items + cpu_chunk_elements - 1) / cpu_chunk_elements;
  const int64_t by_memory = counters > 0 ? private_counter_budget / counters : 1;
  return std::max<int64_t>(1, std::min({max_groups, by_work, by_memory}));
}

/// Run body(begin, end, counts) over [0, items) split into groups with private `counters`-long
/// arrays, and add the groups into `total`.
template <class Body>
void count_in_groups(int64_t items, int64_t counters, std::vector<int64_t>& total, Body&& body) {
  const int64_t groups = group_count(items, counters);
  if (groups == 1) {
    body(0, items, total.data());
    return;
  }
  std::vector<int64_t> partial(static_cast<std::size_t>(groups * counters), 0);
  const int64_t per_group = (items + groups - 1) / groups;
  cpu_parallel_for(groups, [&](int64_t g) {
    const int64_t begin = std::min(items, g * per_group);
    const int64_t end = std::min(items, begin + per_group);
    body(begin, end, partial.data() + g * counters);
  });
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t c = 0; c < counters; ++c) {
      total[static_cast<std::size_t>(c)] += partial[static_cast<std::size_t>(g * counters + c)];
    }
  }
}

}  // namespace

result<stats::class_histogram> compute_bincount_cpu(const tensor_view& tensor,
                                                    int64_t num_classes) noexcept {
  try {
    stats::class_histogram out;
    out.num_classes = num_classes;
    out.counts.assign(static_cast<std::size_t>(num_classes + 1), 0);
    const auto* bytes = reinterpret_cast<const unsigned char*>(tensor.data);
    visit_real_dtype(tensor.type, [&](auto tag) {
      constexpr dtype D = decltype(tag)::value;
      count_in_groups(tensor.num_elements, num_classes + 1, out.counts,
                      [&](int64_t begin, int64_t end, int64_t* counts) {
                        for (int64_t i = begin; i < end; ++i) {
                          ++counts[class_of(load_as_double<D, false>(bytes, i), num_classes)];
                        }
                      });
    });
    return out;
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory, "compute_bincount: cannot allocate " +
                                                 std::to_string(num_classes + 1) + " counters");
  }
}

result<stats::confusion_counts> compute_confusion_cpu(const tensor_view& labels,
                                                      const tensor_view& predictions,
                                                      int64_t num_pairs, int64_t width,
                                                      int64_t num_classes,
                                                      stats::prediction_kind kind) noexcept {
  try {
    stats::confusion_counts out;
    out.num_classes = num_classes;
    const int64_t side = num_classes + 1;
    out.counts.assign(static_cast<std::size_t>(side * side), 0);
    const auto* label_bytes = reinterpret_cast<const unsigned char*>(labels.data);
    const auto* prediction_bytes = reinterpret_cast<const unsigned char*>(predictions.data);
    const bool argmax = kind == stats::prediction_kind::argmax_last_axis;
    count_in_groups(num_pairs, side * side, out.counts,
                    [&](int64_t begin, int64_t end, int64_t* counts) {
                      for (int64_t i = begin; i < end; ++i) {
                        const int64_t label =
                            class_of(load_any_as_double(labels.type, label_bytes, i), num_classes);
                        const int64_t prediction =
                            argmax ? argmax_class(predictions.type, prediction_bytes, i, width,
                                                  num_classes)
                                   : class_of(load_any_as_double(predictions.type,
                                                                 prediction_bytes, i),
                                              num_classes);
                        ++counts[label * side + prediction];
                      }
                    });
    return out;
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_confusion: cannot allocate " + std::to_string((num_classes + 1) * (num_classes + 1)) +
                      " counters");
  }
}

}  // namespace trialstat::kernels

// SPDX-License-Identifier: Apache-2.0
// `trialstat bench [TRIAL]`: how fast each statistic runs on this machine, as GB/s and as a
// fraction of a plain read of the same bytes (issue 24, item 3). The tensors are loaded into
// memory once; every statistic is then checked (invariants on the CPU, equality with the CPU
// twin on CUDA) and timed over those same bytes through the public `stats::compute_*` entry
// points. Without TRIAL, `--generate SIZE` writes a trial (--dtype, --tensor-bytes) into a
// temporary folder that is removed afterwards.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "tools/example_trial/example_trial_cli.hpp"
#include "tools/trialstat/commands.hpp"
#include "trialstat/config.hpp"
#include "trialstat/decode/indexed_record.hpp"
#include "trialstat/detail/float_convert.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/order_statistics.hpp"
#include "trialstat/stats/pairwise.hpp"
#include "trialstat/writer/trial_writer.hpp"

#if TRIALSTAT_HAS_CUDA
#include <cuda_runtime_api.h>

#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::cli {
namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

struct bench_options {
  std::string trial;
  std::string generate;            // --generate SIZE: write a trial of about SIZE tensor bytes
  std::string dtype_text = "float32";
  std::string tensor_size = "256K";
  int steps = 4;                   // generated steps (update ratio compares consecutive ones)
  std::string max_size = "1G";     // --max-bytes: tensor bytes loaded from TRIAL at most
  std::string format = "table";
  std::string device = "auto";
  std::string reference = "read";
  double min_time_s = 0.2;
  int threads = 0;
};

// --- generated trials --------------------------------------------------------------------------

/// Elements of `type` from float values (the generated data are float32 draws).
std::vector<std::byte> encode_values(std::span<const float> values, dtype type) {
  std::vector<std::byte> out(values.size() * dtype_size_bytes(type));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::byte* at = out.data() + i * dtype_size_bytes(type);
    if (type == dtype::float32) {
      std::memcpy(at, &values[i], 4);
    } else if (type == dtype::float64) {
      const double wide = values[i];
      std::memcpy(at, &wide, 8);
    } else {
      const uint16_t half = type == dtype::float16 ? detail::float_to_half_bits(values[i])
                                                   : detail::float_to_bfloat16_bits(values[i]);
      std::memcpy(at, &half, 2);
    }
  }
  return out;
}

/// A temporary folder, removed with everything in it when this goes out of scope.
struct temporary_folder {
  fs::path path;
  temporary_folder() = default;
  temporary_folder(const temporary_folder&) = delete;
  temporary_folder& operator=(const temporary_folder&) = delete;
  ~temporary_folder() {
    std::error_code ignored;
    if (!path.empty()) fs::remove_all(path, ignored);
  }
};

struct generated_trial {
  int64_t steps = 0;
  int64_t tensors_per_step = 0;
  uint64_t tensor_bytes = 0;
  dtype type = dtype::float32;
};

/// Write `total_bytes` of `tensor_bytes` tensors (`fc<i>.weight`, [rows, 256] or [n]) over up to
/// `steps` steps of one worker: normal(0, 0.05) draws, each step the previous one scaled by 1.01
/// (so that update ratios are small and non-zero, as in training).
result<generated_trial> generate_trial(const fs::path& root, uint64_t total_bytes, dtype type,
                                       uint64_t tensor_bytes, int64_t steps) {
  const std::size_t element_bytes = dtype_size_bytes(type);
  if (tensor_bytes < element_bytes || tensor_bytes % element_bytes != 0) {
    return status(error_code::invalid_argument,
                  fmt::format("--tensor-bytes {} is not a multiple of the {}-byte {} element",
                              tensor_bytes, element_bytes, dtype_name(type)));
  }
  const uint64_t num_tensors = total_bytes / tensor_bytes;
  if (num_tensors == 0) {
    return status(error_code::invalid_argument,
                  fmt::format("--generate {} is smaller than one {}-byte tensor", total_bytes, tensor_bytes));
  }
  generated_trial g;
  g.type = type;
  g.tensor_bytes = tensor_bytes;
  g.steps = std::min<int64_t>(steps, static_cast<int64_t>(num_tensors));
  g.tensors_per_step = static_cast<int64_t>(num_tensors) / g.steps;
  const auto num_elements = static_cast<int64_t>(tensor_bytes / element_bytes);
  const int64_t columns = num_elements % 256 == 0 ? 256 : num_elements;
  const std::vector<int64_t> shape = columns == num_elements ? std::vector<int64_t>{num_elements}
                                                             : std::vector<int64_t>{num_elements / columns, columns};
  writer::writer_options options;
  options.collections = writer::pytorch_default_collections(1);
  auto w = writer::trial_writer::create(root, "worker_0", options);
  if (!w) return w.error_status();
  std::mt19937_64 engine(24);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<std::vector<float>> values(static_cast<std::size_t>(g.tensors_per_step));
  for (auto& v : values) {
    v.resize(static_cast<std::size_t>(num_elements));
    for (float& x : v) x = normal(engine);
  }
  for (int64_t step = 0; step < g.steps; ++step) {
    TRIALSTAT_RETURN_IF_ERROR(w->begin_step(step, mode::train, step));
    for (int64_t t = 0; t < g.tensors_per_step; ++t) {
      auto& v = values[static_cast<std::size_t>(t)];
      if (step > 0) {
        for (float& x : v) x *= 1.01f;
      }
      const std::vector<std::byte> bytes = encode_values(v, type);
      const tensor_view view{bytes.data(), type, shape, num_elements, memory_kind::host};
      TRIALSTAT_RETURN_IF_ERROR(w->add_tensor(fmt::format("fc{}.weight", t), view, 0.0));
    }
    TRIALSTAT_RETURN_IF_ERROR(w->end_step());
  }
  TRIALSTAT_RETURN_IF_ERROR(w->close(true));
  return g;
}

// --- the tensors in memory ---------------------------------------------------------------------

struct loaded_tensor {
  trial::tensor_id tensor = 0;
  trial::worker_id worker = 0;
  int64_t step = 0;
  std::vector<int64_t> shape;
  stats::segment segment;
};

struct loaded_trial {
  std::vector<std::byte> bytes;           // every tensor's elements, each at a 64-byte offset
  std::vector<stats::segment> segments;   // [num tensors]
  std::vector<loaded_tensor> tensors;     // [num tensors], in step order
  std::vector<std::string> event_files;   // keys of the event files the records came from
  uint64_t tensor_bytes = 0;              // Σ element bytes (padding excluded)
  uint64_t event_file_bytes = 0;          // Σ sizes of `event_files`
  int64_t num_steps = 0;
  std::size_t skipped_count = 0;          // string or empty records (no numeric statistics)
};

/// Read the raw tensor records of whole steps, in step order, until the next step would pass
/// `max_bytes` of records (the first step always). Errors: the first unreadable record.
result<loaded_trial> load_tensors(const trial::catalog& trial, uint64_t max_bytes) {
  loaded_trial out;
  std::map<trial::file_id, std::unique_ptr<io::object_reader>> readers;
  decode::record_read_buffers buffers;
  decode::event_record record;
  uint64_t record_bytes = 0;
  for (const auto& info : trial.step_infos()) {
    const auto entries = trial.entries_at(info.step);
    uint64_t step_bytes = 0;
    for (const auto& e : entries) step_bytes += e.raw ? e.raw->length_bytes : 0;
    if (out.num_steps > 0 && record_bytes + step_bytes > max_bytes) break;
    record_bytes += step_bytes;
    ++out.num_steps;
    for (const auto& e : entries) {
      if (!e.raw) continue;
      auto reader = readers.find(e.raw->event_file);
      if (reader == readers.end()) {
        const std::string key(trial.event_file_key(e.raw->event_file));
        auto opened = trial.source().open(key);
        if (!opened) return opened.error_status();
        reader = readers.emplace(e.raw->event_file, std::move(*opened)).first;
        out.event_files.push_back(key);
        out.event_file_bytes += reader->second->size_bytes();
      }
      TRIALSTAT_RETURN_IF_ERROR(decode::read_tensor_record(
          *reader->second, {e.raw->start_bytes, e.raw->length_bytes}, buffers, record));
      if (!dtype_is_real_numeric(record.type) || record.num_elements == 0) {
        ++out.skipped_count;
        continue;
      }
      const std::size_t offset = (out.bytes.size() + 63) & ~std::size_t{63};
      out.bytes.resize(offset + record.content.size());
      std::memcpy(out.bytes.data() + offset, record.content.data(), record.content.size());
      const stats::segment seg{offset, record.num_elements, record.type};
      out.segments.push_back(seg);
      out.tensors.push_back({e.tensor, e.worker, e.step, record.shape, seg});
      out.tensor_bytes += record.content.size();
    }
  }
  if (out.tensors.empty()) {
    return status(error_code::invalid_argument,
                  fmt::format("{}: no numeric tensor records to benchmark", trial.location()));
  }
  return out;
}

// --- timing ------------------------------------------------------------------------------------

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

struct timing {
  double median_s = 0.0;
  int repetitions = 0;
};

/// Run `pass` until `min_time_s` has passed (and at least 3 times); the median of the passes.
template <class Pass>
result<timing> time_passes(Pass&& pass, double min_time_s) {
  std::vector<double> seconds;
  const auto start = clock_type::now();
  while (seconds.size() < 3 || seconds_since(start) < min_time_s) {
    const auto t0 = clock_type::now();
    TRIALSTAT_RETURN_IF_ERROR(pass());
    seconds.push_back(seconds_since(t0));
  }
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  const double median = n % 2 == 1 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  return timing{median, static_cast<int>(n)};
}

/// body(i) for i in [0, n) on `threads` threads (dynamic schedule); the first error wins. For
/// the per-tensor entry points, as the pipeline's workers call them.
status for_each_index(std::size_t n, int threads, const std::function<status(std::size_t)>& body) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  status first = status::success();
  const auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      status s = body(i);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (first.ok()) first = std::move(s);
        next = n;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads && static_cast<std::size_t>(t) < n; ++t) helpers.emplace_back(work);
  work();
  for (auto& h : helpers) h.join();
  return first;
}

// --- the statistics ----------------------------------------------------------------------------

/// Where the statistics read their input: host memory (CPU), device memory (CUDA, against the
/// device-to-device copy) or pinned host memory (CUDA end to end, against pinned H2D copies).
enum class input_kind { host, device, pinned_host };

std::string_view input_name(input_kind k) {
  switch (k) {
    case input_kind::host: return "host";
    case input_kind::device: return "device";
    case input_kind::pinned_host: return "pinned_host";
  }
  return "?";
}

memory_kind memory_of(input_kind k) {
  return k == input_kind::device ? memory_kind::device
       : k == input_kind::pinned_host ? memory_kind::host_pinned
                                      : memory_kind::host;
}

status mismatch(std::string_view statistic, std::size_t index, std::string_view what) {
  return status(error_code::data_loss,
                fmt::format("bench: {} of tensor #{} is wrong ({}): not timing a wrong path",
                            statistic, index, what));
}

/// One statistic: `run` computes it for every tensor (or step pair) from `base` and keeps the
/// outputs of the last pass; `check` verifies them (on CUDA: equal to the CPU's outputs).
struct statistic_case {
  std::string_view name;
  uint64_t bytes = 0;
  std::function<status(stats::backend, const std::byte* base, input_kind input)> run;
  std::function<status(stats::backend)> check;
};

constexpr double percentiles_q[] = {5.0, 50.0, 95.0};

/// Outputs of every statistic, per backend (index 0: cpu, 1: cuda).
struct outputs {
  std::vector<stats::moments> moments[2];
  std::vector<stats::histogram> histograms[2];
  std::vector<stats::log_histogram> log_histograms[2];
  std::vector<stats::pairwise> pairwise[2];
  std::vector<std::vector<double>> percentiles[2];
  std::vector<stats::axis0_counts> axis_counts[2];
};

/// `into` = the value of `r`, or r's error.
template <class T>
status store(result<T> r, T& into) {
  if (!r) return r.error_status();
  into = std::move(*r);
  return status::success();
}

bool same_double(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

std::vector<statistic_case> make_cases(const loaded_trial& data, outputs& out, int threads) {
  const std::size_t n = data.tensors.size();
  for (int b = 0; b < 2; ++b) {
    out.moments[b].resize(n);
    out.histograms[b].resize(n);
    out.log_histograms[b].resize(n);
    out.percentiles[b].resize(n);
    out.axis_counts[b].resize(n);
  }
  // Update ratio / allclose: each tensor against its previous loaded step (same worker, size).
  auto pairs = std::make_shared<std::vector<std::pair<std::size_t, std::size_t>>>();
  uint64_t pair_bytes = 0;
  {
    std::map<std::pair<trial::tensor_id, trial::worker_id>, std::size_t> last;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& t = data.tensors[i];
      const auto key = std::make_pair(t.tensor, t.worker);
      if (auto it = last.find(key); it != last.end()) {
        const auto& prev = data.tensors[it->second].segment;
        if (prev.num_elements == t.segment.num_elements && prev.type == t.segment.type) {
          pairs->emplace_back(it->second, i);
          pair_bytes += 2 * static_cast<uint64_t>(t.segment.num_elements) * dtype_size_bytes(t.segment.type);
        }
      }
      last[key] = i;
    }
  }
  for (int b = 0; b < 2; ++b) out.pairwise[b].resize(pairs->size());
  const auto view = [&data](std::size_t i, const std::byte* base, input_kind input) {
    const auto& t = data.tensors[i];
    return tensor_view{base + t.segment.offset_bytes, t.segment.type, t.shape, t.segment.num_elements,
                       memory_of(input)};
  };
  const auto slot = [](stats::backend b) { return b == stats::backend::cpu ? 0 : 1; };
  const uint64_t bytes = data.tensor_bytes;
  std::vector<statistic_case> cases;

  cases.push_back({"moments", bytes,
                   [&data, &out, slot](stats::backend b, const std::byte* base, input_kind) {
                     return stats::compute_moments(base, data.segments, out.moments[slot(b)], b);
                   },
                   [&data, &out, n, slot](stats::backend b) {
                     const auto& got = out.moments[slot(b)];
                     const auto& cpu = out.moments[0];
                     for (std::size_t i = 0; i < n; ++i) {
                       if (got[i].count != data.segments[i].num_elements) return mismatch("moments", i, "count");
                       if (got[i].nan_count != cpu[i].nan_count || got[i].zero_count != cpu[i].zero_count ||
                           got[i].positive_count != cpu[i].positive_count || got[i].min != cpu[i].min ||
                           got[i].max != cpu[i].max) {
                         return mismatch("moments", i, "differs from the CPU twin");
                       }
                     }
                     return status::success();
                   }});
  cases.push_back({"histogram", bytes,
                   [&data, &out, slot](stats::backend b, const std::byte* base, input_kind) {
                     // The pipeline takes [min, max] from the moments pass; only the binning is timed.
                     return stats::compute_histograms(base, data.segments, out.moments[0],
                                                      stats::default_histogram_bins,
                                                      out.histograms[slot(b)], b);
                   },
                   [&out, n, slot](stats::backend b) {
                     const auto& got = out.histograms[slot(b)];
                     for (std::size_t i = 0; i < n; ++i) {
                       int64_t total = 0;
                       for (int64_t c : got[i].counts) total += c;
                       if (total != out.moments[0][i].finite_count()) return mismatch("histogram", i, "total");
                       if (got[i].counts != out.histograms[0][i].counts) {
                         return mismatch("histogram", i, "differs from the CPU twin");
                       }
                     }
                     return status::success();
                   }});
  cases.push_back({"log_histogram", bytes,
                   [&data, &out, slot](stats::backend b, const std::byte* base, input_kind) {
                     return stats::compute_log_histograms(base, data.segments, out.log_histograms[slot(b)], b);
                   },
                   [&data, &out, n, slot](stats::backend b) {
                     const auto& got = out.log_histograms[slot(b)];
                     for (std::size_t i = 0; i < n; ++i) {
                       const auto& h = got[i];
                       if (h.binned_count() + h.nan_count + h.pos_inf_count + h.neg_inf_count +
                               h.below_count + h.above_count != data.segments[i].num_elements) {
                         return mismatch("log_histogram", i, "total");
                       }
                       if (h.counts != out.log_histograms[0][i].counts) {
                         return mismatch("log_histogram", i, "differs from the CPU twin");
                       }
                     }
                     return status::success();
                   }});
  cases.push_back({"update_ratio_allclose", pair_bytes,
                   [&out, pairs, slot, view, threads](stats::backend b, const std::byte* base, input_kind input) {
                     return for_each_index(pairs->size(), threads, [&](std::size_t k) {
                       const auto [prev, cur] = (*pairs)[k];
                       return store(stats::compute_pairwise(view(prev, base, input), view(cur, base, input), {}, b),
                                    out.pairwise[slot(b)][k]);
                     });
                   },
                   [&data, &out, pairs, slot](stats::backend b) {
                     for (std::size_t k = 0; k < pairs->size(); ++k) {
                       const auto& got = out.pairwise[slot(b)][k];
                       if (got.count != data.segments[(*pairs)[k].second].num_elements) {
                         return mismatch("update_ratio_allclose", (*pairs)[k].second, "count");
                       }
                       if (got.allclose_violations != out.pairwise[0][k].allclose_violations) {
                         return mismatch("update_ratio_allclose", (*pairs)[k].second, "differs from the CPU twin");
                       }
                     }
                     return status::success();
                   }});
  cases.push_back({"percentiles", bytes,
                   [&out, n, slot, view, threads](stats::backend b, const std::byte* base, input_kind input) {
                     return for_each_index(n, threads, [&](std::size_t i) {
                       return store(stats::compute_percentiles(view(i, base, input), percentiles_q, b),
                                    out.percentiles[slot(b)][i]);
                     });
                   },
                   [&out, n, slot](stats::backend b) {
                     for (std::size_t i = 0; i < n; ++i) {
                       const auto& got = out.percentiles[slot(b)][i];
                       if (got.size() != std::size(percentiles_q)) return mismatch("percentiles", i, "size");
                       const auto& m = out.moments[0][i];
                       if (m.nan_count == 0 && m.finite_count() == m.count &&
                           !(m.min <= got[0] && got[0] <= got[1] && got[1] <= got[2] && got[2] <= m.max)) {
                         return mismatch("percentiles", i, "not ordered within [min, max]");
                       }
                       for (std::size_t q = 0; q < got.size(); ++q) {
                         if (!same_double(got[q], out.percentiles[0][i][q])) {
                           return mismatch("percentiles", i, "differs from the CPU twin");
                         }
                       }
                     }
                     return status::success();
                   }});
  cases.push_back({"per_node_counts", bytes,
                   [&out, n, slot, view, threads](stats::backend b, const std::byte* base, input_kind input) {
                     return for_each_index(n, threads, [&](std::size_t i) {
                       return store(stats::count_along_axis0(view(i, base, input), {}, b),
                                    out.axis_counts[slot(b)][i]);
                     });
                   },
                   [&out, n, slot](stats::backend b) {
                     for (std::size_t i = 0; i < n; ++i) {
                       const auto& got = out.axis_counts[slot(b)][i];
                       int64_t total = 0;
                       for (int64_t c : got.per_node) total += c;
                       const auto& m = out.moments[0][i];
                       // x > 0: the finite positives and +Inf (NaN never counts).
                       if (got.batch * static_cast<int64_t>(got.per_node.size()) != m.count ||
                           total != m.positive_count + m.pos_inf_count) {
                         return mismatch("per_node_counts", i, "total");
                       }
                       if (got.per_node != out.axis_counts[0][i].per_node) {
                         return mismatch("per_node_counts", i, "differs from the CPU twin");
                       }
                     }
                     return status::success();
                   }});
  return cases;
}

// --- rows and output ---------------------------------------------------------------------------

struct bench_row {
  std::string statistic;
  std::string_view backend;
  input_kind input = input_kind::host;
  std::string reference;  // the row whose GB/s is the ratio's denominator
  uint64_t bytes = 0;
  timing time;
  double gb_per_s = 0.0;
  double ratio = 0.0;
};

bench_row make_row(std::string statistic, std::string_view backend, input_kind input, uint64_t bytes,
                   const timing& t) {
  return bench_row{.statistic = std::move(statistic), .backend = backend, .input = input, .bytes = bytes,
                   .time = t, .gb_per_s = t.median_s > 0 ? static_cast<double>(bytes) / t.median_s / 1e9 : 0.0};
}

/// Time every statistic on one backend and input, after checking its outputs.
status bench_statistics(std::vector<statistic_case>& cases, stats::backend backend, const std::byte* base,
                        input_kind input, double min_time_s, std::vector<bench_row>& rows) {
  for (auto& c : cases) {
    if (c.bytes == 0) continue;  // no step pairs: reported as skipped by the caller
    TRIALSTAT_RETURN_IF_ERROR(c.run(backend, base, input));  // also the warm-up pass
    TRIALSTAT_RETURN_IF_ERROR(c.check(backend));
    auto t = time_passes([&] { return c.run(backend, base, input); }, min_time_s);
    if (!t) return t.error_status();
    rows.push_back(make_row(std::string(c.name), stats::backend_name(backend), input, c.bytes, *t));
  }
  return status::success();
}

/// The reference rows of the CPU: the event files read into memory through the trial source
/// (one thread, as `cat`), and a one-thread memcpy of the loaded tensor bytes.
status bench_cpu_references(const trial::catalog& trial, const loaded_trial& data, double min_time_s,
                            std::vector<bench_row>& rows) {
  uint64_t read_bytes = 0;
  status read_status = status::success();
  auto read = time_passes(
      [&] {
        read_bytes = 0;
        trial.source().read_objects(data.event_files, [&](std::size_t, result<std::span<const std::byte>> bytes) {
          if (!bytes) {
            if (read_status.ok()) read_status = bytes.error_status();
            return;
          }
          read_bytes += bytes->size();
        });
        return read_status;
      },
      min_time_s);
  if (!read) return read.error_status();
  rows.push_back(make_row("read", "cpu", input_kind::host, read_bytes, *read));
  std::vector<std::byte> copy(data.bytes.size());
  auto memcpy_time = time_passes(
      [&] {
        std::memcpy(copy.data(), data.bytes.data(), data.bytes.size());
        return status::success();
      },
      min_time_s);
  if (!memcpy_time) return memcpy_time.error_status();
  rows.push_back(make_row("memcpy", "cpu", input_kind::host, data.bytes.size(), *memcpy_time));
  return status::success();
}

#if TRIALSTAT_HAS_CUDA
/// cudaMalloc'd or cudaMallocHost'd bytes, freed on destruction.
class cuda_bytes {
 public:
  cuda_bytes() = default;
  cuda_bytes(const cuda_bytes&) = delete;
  cuda_bytes& operator=(const cuda_bytes&) = delete;
  ~cuda_bytes() {
    if (ptr_ != nullptr) static_cast<void>(pinned_ ? cudaFreeHost(ptr_) : cudaFree(ptr_));
  }
  status allocate(std::size_t bytes, bool pinned_host) {
    pinned_ = pinned_host;
    if (pinned_host) {
      TRIALSTAT_CUDA_TRY(cudaMallocHost(&ptr_, std::max<std::size_t>(bytes, 1)));
    } else {
      TRIALSTAT_CUDA_TRY(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 1)));
    }
    return status::success();
  }
  [[nodiscard]] std::byte* get() const noexcept { return static_cast<std::byte*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  bool pinned_ = false;
};

/// CUDA rows: the statistics on device-resident bytes against the device-to-device copy of the
/// same bytes, then end to end from pinned host memory (the entry points copy to the device)
/// against pinned host-to-device copies.
status bench_cuda(const loaded_trial& data, std::vector<statistic_case>& cases, double min_time_s,
                  std::vector<bench_row>& rows) {
  const std::size_t size = data.bytes.size();
  cuda_bytes d_input, d_copy, h_pinned;
  TRIALSTAT_RETURN_IF_ERROR(d_input.allocate(size, false));
  TRIALSTAT_RETURN_IF_ERROR(d_copy.allocate(size, false));
  TRIALSTAT_RETURN_IF_ERROR(h_pinned.allocate(size, true));
  std::memcpy(h_pinned.get(), data.bytes.data(), size);
  cudaStream_t stream = nullptr;
  TRIALSTAT_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const auto copy_pass = [&](std::byte* to, const std::byte* from, cudaMemcpyKind kind) {
    return [=]() -> status {
      TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(to, from, size, kind, stream));
      TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream));
      return status::success();
    };
  };
  status s = copy_pass(d_input.get(), h_pinned.get(), cudaMemcpyHostToDevice)();
  auto d2d = s.ok() ? time_passes(copy_pass(d_copy.get(), d_input.get(), cudaMemcpyDeviceToDevice), min_time_s)
                    : result<timing>(s);
  auto h2d = d2d ? time_passes(copy_pass(d_copy.get(), h_pinned.get(), cudaMemcpyHostToDevice), min_time_s)
                 : result<timing>(d2d.error_status());
  static_cast<void>(cudaStreamDestroy(stream));
  if (!h2d) return h2d.error_status();
  rows.push_back(make_row("d2d_copy", "cuda", input_kind::device, size, *d2d));
  TRIALSTAT_RETURN_IF_ERROR(bench_statistics(cases, stats::backend::cuda, d_input.get(), input_kind::device,
                                             min_time_s, rows));
  rows.push_back(make_row("h2d_pinned", "cuda", input_kind::pinned_host, size, *h2d));
  return bench_statistics(cases, stats::backend::cuda, h_pinned.get(), input_kind::pinned_host, min_time_s,
                          rows);
}
#endif

/// Each row's ratio to its reference: CPU rows to `cpu_reference` ("read" or "memcpy"), CUDA
/// rows on device memory to "d2d_copy", CUDA rows from pinned host memory to "h2d_pinned".
void set_ratios(std::vector<bench_row>& rows, const std::string& cpu_reference) {
  const auto gb_per_s_of = [&](std::string_view name) {
    for (const auto& r : rows) {
      if (r.statistic == name) return r.gb_per_s;
    }
    return 0.0;
  };
  for (auto& r : rows) {
    r.reference = r.input == input_kind::host     ? cpu_reference
                : r.input == input_kind::device   ? "d2d_copy"
                                                  : "h2d_pinned";
    const double denominator = gb_per_s_of(r.reference);
    r.ratio = denominator > 0 ? r.gb_per_s / denominator : 0.0;
  }
}

struct bench_context {
  std::string trial;                          // the path benchmarked, or "generated"
  std::optional<generated_trial> generated;
  const loaded_trial* data = nullptr;
  int threads = 1;
  std::vector<std::string> skipped;           // "cuda: no CUDA device visible", ...
};

void print_json(const bench_context& c, const std::vector<bench_row>& rows) {
  std::string out = "{";
  out += fmt::format("\"trial\": {}, ", json_string(c.trial));
  if (c.generated) {
    out += fmt::format("\"generated\": {{\"dtype\": \"{}\", \"tensor_bytes\": {}, \"steps\": {}, "
                       "\"tensors_per_step\": {}}}, ",
                       dtype_name(c.generated->type), c.generated->tensor_bytes, c.generated->steps,
                       c.generated->tensors_per_step);
  }
  out += fmt::format("\"tensors\": {}, \"tensor_bytes\": {}, \"steps\": {}, \"event_file_bytes\": {}, "
                     "\"threads\": {}, \"rows\": [",
                     c.data->tensors.size(), c.data->tensor_bytes, c.data->num_steps,
                     c.data->event_file_bytes, c.threads);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    out += fmt::format("{}\n  {{\"statistic\": \"{}\", \"backend\": \"{}\", \"input\": \"{}\", \"bytes\": {}, "
                       "\"seconds\": {:.9f}, \"gb_per_s\": {:.4f}, \"ratio_to_read\": {:.4f}, "
                       "\"reference\": \"{}\", \"repetitions\": {}}}",
                       i == 0 ? "" : ",", r.statistic, r.backend, input_name(r.input), r.bytes,
                       r.time.median_s, r.gb_per_s, r.ratio, r.reference, r.time.repetitions);
  }
  out += "],\n \"skipped\": [";
  for (std::size_t i = 0; i < c.skipped.size(); ++i) out += (i ? ", " : "") + json_string(c.skipped[i]);
  out += "]}\n";
  fmt::print("{}", out);
}

void print_table(const bench_context& c, const std::vector<bench_row>& rows) {
  fmt::print("trial: {}", c.trial);
  if (c.generated) {
    fmt::print(" ({} steps x {} {} tensors of {} bytes, removed afterwards)", c.generated->steps,
               c.generated->tensors_per_step, dtype_name(c.generated->type), c.generated->tensor_bytes);
  }
  fmt::print("\n{} tensors, {} tensor bytes in {} steps; {} event-file bytes; {} thread(s) for "
             "per-tensor statistics\n",
             c.data->tensors.size(), c.data->tensor_bytes, c.data->num_steps, c.data->event_file_bytes,
             c.threads);
  fmt::print("{:<22} {:<7} {:<12} {:>12} {:>11} {:>8} {:>7}  {}\n", "statistic", "backend", "input",
             "bytes", "median s", "GB/s", "ratio", "reference");
  for (const auto& r : rows) {
    fmt::print("{:<22} {:<7} {:<12} {:>12} {:>11.6f} {:>8.2f} {:>6.0f}%  {}\n", r.statistic, r.backend,
               input_name(r.input), r.bytes, r.time.median_s, r.gb_per_s, 100.0 * r.ratio, r.reference);
  }
  for (const auto& s : c.skipped) fmt::print("skipped: {}\n", s);
}

result<dtype> parse_generate_dtype(const std::string& text) {
  for (dtype t : {dtype::float32, dtype::float16, dtype::bfloat16, dtype::float64}) {
    if (text == dtype_name(t)) return t;
  }
  return status(error_code::invalid_argument,
                fmt::format("--dtype '{}': expected float32, float16, bfloat16 or float64", text));
}

int run_bench(const bench_options& o) {
  if (o.format != "table" && o.format != "json") {
    return report_error(status(error_code::invalid_argument, "--format must be table or json"));
  }
  if (o.reference != "read" && o.reference != "memcpy") {
    return report_error(status(error_code::invalid_argument, "--reference must be read or memcpy"));
  }
  if (o.trial.empty() == o.generate.empty()) {
    return report_error(status(error_code::invalid_argument, "give either TRIAL or --generate SIZE"));
  }
  if (!(o.min_time_s >= 0) || o.steps < 1 || o.threads < 0) {
    return report_error(status(error_code::invalid_argument, "--min-time, --steps and --threads must be positive"));
  }
  auto choice = pipeline::parse_device_choice(o.device);
  if (!choice) return report_error(choice.error_status());
  bench_context context;
  if (*choice == pipeline::device_choice::cuda) {
    auto resolved = pipeline::resolve_backend(*choice);  // an error naming why CUDA cannot run
    if (!resolved) return report_error(resolved.error_status());
  }
  const bool run_cpu = *choice != pipeline::device_choice::cuda;
  const bool run_cuda = *choice != pipeline::device_choice::cpu && stats::cuda_device_available();
  if (*choice == pipeline::device_choice::automatic && !run_cuda) {
    context.skipped.emplace_back(TRIALSTAT_HAS_CUDA ? "cuda: no CUDA device visible"
                                                    : "cuda: this build has no CUDA backend");
  }

  temporary_folder generated_root;
  std::string path = o.trial;
  if (!o.generate.empty()) {
    auto total = example::parse_size_bytes(o.generate);
    if (!total) return report_error(total.error_status());
    auto tensor_bytes = example::parse_size_bytes(o.tensor_size);
    if (!tensor_bytes) return report_error(tensor_bytes.error_status());
    auto type = parse_generate_dtype(o.dtype_text);
    if (!type) return report_error(type.error_status());
    std::string pattern = (fs::temp_directory_path() / "trialstat-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return report_error(status(error_code::io_error, fmt::format("{}: cannot create a temporary folder", pattern)));
    }
    generated_root.path = pattern;
    auto g = generate_trial(generated_root.path, *total, *type, *tensor_bytes, o.steps);
    if (!g) return report_error(g.error_status());
    context.generated = *g;
    path = generated_root.path.string();
  }
  auto max_bytes = example::parse_size_bytes(o.max_size);
  if (!max_bytes) return report_error(max_bytes.error_status());
  auto opened = open_trial(path);
  if (!opened) return report_error(opened.error_status());
  auto data = load_tensors(*opened, *max_bytes);
  if (!data) return report_error(data.error_status());
  if (data->skipped_count > 0) {
    fmt::print(stderr, "bench: {} string or empty record(s) not benchmarked\n", data->skipped_count);
  }
  context.trial = o.generate.empty() ? o.trial : "generated";
  context.data = &*data;
  context.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  outputs out;
  auto cases = make_cases(*data, out, context.threads);
  for (const auto& c : cases) {
    if (c.bytes == 0) context.skipped.push_back(fmt::format("{}: no tensor saved at two loaded steps", c.name));
  }
  std::vector<bench_row> rows;
  // The CPU outputs are what the CUDA rows are checked against: the CPU runs first, always.
  if (status s = bench_statistics(cases, stats::backend::cpu, data->bytes.data(), input_kind::host,
                                  run_cpu ? o.min_time_s : 0.0, rows);
      !s.ok()) {
    return report_error(s);
  }
  if (!run_cpu) {
    rows.clear();
  } else if (status s = bench_cpu_references(*opened, *data, o.min_time_s, rows); !s.ok()) {
    return report_error(s);
  }
#if TRIALSTAT_HAS_CUDA
  if (run_cuda) {
    if (status s = bench_cuda(*data, cases, o.min_time_s, rows); !s.ok()) return report_error(s);
  }
#endif
  // References first, as the table reads.
  std::stable_partition(rows.begin(), rows.end(), [](const bench_row& r) {
    return r.statistic == "read" || r.statistic == "memcpy";
  });
  set_ratios(rows, o.reference);
  if (o.format == "json") {
    print_json(context, rows);
  } else {
    print_table(context, rows);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "bench", "GB/s of every statistic on each backend, and its ratio to a plain read of the same bytes");
  auto o = std::make_shared<bench_options>();
  cmd->add_option("trial", o->trial, "Trial folder or s3://bucket/prefix (or --generate SIZE)");
  add_source_options(cmd);
  cmd->add_option("--generate", o->generate,
                  "Benchmark a generated trial of SIZE tensor bytes (e.g. 64M), written to a temporary "
                  "folder and removed afterwards");
  cmd->add_option("--dtype", o->dtype_text, "Generated tensors: float32, float16, bfloat16 or float64")
      ->capture_default_str();
  cmd->add_option("--tensor-bytes", o->tensor_size, "Generated tensors: bytes each (e.g. 1K, 256K)")
      ->capture_default_str();
  cmd->add_option("--steps", o->steps, "Generated trial: steps (the update ratio compares consecutive ones)")
      ->capture_default_str();
  cmd->add_option("--max-bytes", o->max_size,
                  "TRIAL: load whole steps while their records total at most this many bytes (the first "
                  "step always)")->capture_default_str();
  cmd->add_option("--format", o->format, "table or json")->capture_default_str();
  cmd->add_option("--device", o->device, "auto (cpu, and cuda where a device is visible), cpu or cuda")
      ->capture_default_str();
  cmd->add_option("--reference", o->reference,
                  "CPU rows' ratio denominator: read (the event files read into memory) or memcpy")
      ->capture_default_str();
  cmd->add_option("--min-time", o->min_time_s, "Seconds of repetitions per row at least (3 at least)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads for the per-tensor statistics (0: all cores)")
      ->capture_default_str();
  cmd->callback([=] { *exit_code = run_bench(*o); });
}

}  // namespace trialstat::cli

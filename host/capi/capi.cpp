// SPDX-License-Identifier: Apache-2.0
// The C API (include/trialstat/trialstat.h) over the C++ library. No exception crosses the C
// boundary: every entry point catches and turns failures into a status plus a thread-local
// message.
#include "trialstat/trialstat.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "trialstat/frontend/device_options.hpp"
#include "trialstat/frontend/open_catalog.hpp"
#include "trialstat/frontend/rule_invocations.hpp"
#include "trialstat/frontend/store_choice.hpp"
#include "trialstat/frontend/statistics_row.hpp"
#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/report/statistics_writer.hpp"
#include "trialstat/rules/rule_config.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/store/store_source.hpp"
#include "trialstat/trial/catalog.hpp"

struct trialstat_trial {
  trialstat::trial::catalog catalog;
  std::vector<trialstat::trial::tensor_id> sorted_tensors;        // sorted index -> id
  std::vector<uint32_t> tensor_rank;                              // id -> sorted index
  std::vector<trialstat::trial::worker_id> sorted_workers;
  std::vector<uint32_t> worker_rank;
  std::vector<std::string> warnings;
  bool strict = false;  // trialstat_set_strict: unreadable records make rules Error
  /// trialstat_set_store: the statistics store of later statistics and rule evaluations (null: off)
  std::unique_ptr<trialstat::store::store_source> store;
  /// trialstat_set_device_options: verification and staging of CUDA runs (`device` is per call)
  trialstat::frontend::device_options device;

  explicit trialstat_trial(trialstat::trial::catalog c) : catalog(std::move(c)) { reindex(); }

  void reindex() {
    sorted_tensors = catalog.sorted_tensor_ids();
    tensor_rank.assign(catalog.tensor_names().size(), 0);
    for (std::size_t i = 0; i < sorted_tensors.size(); ++i) {
      tensor_rank[sorted_tensors[i]] = static_cast<uint32_t>(i);
    }
    sorted_workers = catalog.sorted_worker_ids();
    worker_rank.assign(catalog.workers().size(), 0);
    for (std::size_t i = 0; i < sorted_workers.size(); ++i) {
      worker_rank[sorted_workers[i]] = static_cast<uint32_t>(i);
    }
    warnings.clear();
    for (const auto& w : catalog.warnings()) {
      warnings.push_back(trialstat::frontend::load_warning_text(w));
    }
  }
};

struct trialstat_rule_results {
  std::vector<trialstat::pipeline::rule_result> results;
};

namespace {

using trialstat::error_code;
using trialstat::status;

thread_local std::string last_error;

trialstat_status fail(const status& s) {
  last_error = s.to_string();
  return static_cast<trialstat_status>(s.code());
}

trialstat_status fail(trialstat_status code, std::string message) {
  last_error = std::move(message);
  return code;
}

/// Run `body`, converting C++ exceptions into statuses (nothing may unwind into C).
template <typename Body>
trialstat_status guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(TRIALSTAT_OUT_OF_MEMORY, "out of memory");
  } catch (const trialstat::error& e) {
    return fail(e.get_status());
  } catch (const std::exception& e) {
    return fail(TRIALSTAT_INVALID_ARGUMENT, e.what());
  } catch (...) {
    return fail(TRIALSTAT_INVALID_ARGUMENT, "unknown error");
  }
}

/// trialstat_set_store: the store `choice` names for `trial` (replacing the one it had); its
/// later problems become the trial's warnings.
status set_store(trialstat_trial& trial, std::string_view choice) {
  trial.store.reset();
  auto options = trialstat::frontend::store_options(choice, trial.catalog.location(), [&trial](const status& s) {
    trial.warnings.push_back(s.message());
  });
  if (!options) return options.error_status();
  if (*options) trial.store = std::make_unique<trialstat::store::store_source>(std::move(**options));
  return status::success();
}

/// Where `trial`'s statistics come from: its store, else the plain pipeline.
trialstat::pipeline::statistics_source statistics_source(trialstat_trial& trial) {
  if (!trial.store) return {};
  return trial.store->source();
}

trialstat_status open_impl(const char* path, std::optional<int64_t> begin,
                           std::optional<int64_t> end, trialstat_trial** out) {
  if (out) *out = nullptr;
  if (!path || !out) return fail(TRIALSTAT_INVALID_ARGUMENT, "trialstat_open: NULL argument");
  return guarded([&] {
    auto catalog = trialstat::frontend::open_catalog(path, begin, end);
    if (!catalog) return fail(catalog.error_status());
    auto trial = std::make_unique<trialstat_trial>(std::move(*catalog));
    // TRIALSTAT_STORE (as the CLI and Python read it) chooses a store; without it, none.
    if (const char* given = std::getenv("TRIALSTAT_STORE"); given != nullptr && *given != '\0') {
      if (const status chosen = set_store(*trial, given); !chosen.ok()) {
        trial->warnings.push_back("TRIALSTAT_STORE: " + chosen.message() + " (the trial is read)");
      }
    }
    *out = trial.release();
    return TRIALSTAT_OK;
  });
}

struct selection {
  std::vector<trialstat::trial::tensor_id> tensors;
  std::optional<int64_t> begin, end;
};

trialstat::result<selection> select(const trialstat_trial& t, const trialstat_stats_options& o) {
  std::vector<std::string> collections, regexes;
  for (std::size_t i = 0; i < o.num_collections; ++i) {
    if (!o.collections || !o.collections[i]) {
      return status(error_code::invalid_argument, "NULL collection name");
    }
    collections.emplace_back(o.collections[i]);
  }
  for (std::size_t i = 0; i < o.num_regexes; ++i) {
    if (!o.regexes || !o.regexes[i]) return status(error_code::invalid_argument, "NULL regex");
    regexes.emplace_back(o.regexes[i]);
  }
  selection s;
  if (collections.empty() && regexes.empty()) {
    s.tensors = t.sorted_tensors;
  } else {
    auto chosen = t.catalog.select(collections, regexes);
    if (!chosen) return chosen.error_status();
    s.tensors = std::move(*chosen);
  }
  if (o.step_begin >= 0) s.begin = o.step_begin;
  if (o.step_end >= 0) s.end = o.step_end;
  return s;
}

bool in_range(const selection& s, int64_t step) {
  return (!s.begin || step >= *s.begin) && (!s.end || step < *s.end);
}

std::size_t count_rows(const trialstat_trial& t, const selection& s) {
  std::vector<char> wanted(t.catalog.tensor_names().size(), 0);
  for (auto id : s.tensors) wanted[id] = 1;
  std::size_t n = 0;
  for (const auto& e : t.catalog.entries()) {
    if (wanted[e.tensor] && in_range(s, e.step)) ++n;
  }
  return n;
}

/// Pipeline options of a call on `t` with `device` (NULL: auto) and the trial's device options.
trialstat::result<trialstat::pipeline::pipeline_options> make_options(const trialstat_trial& t, const char* device) {
  trialstat::frontend::device_options chosen = t.device;
  chosen.device = device ? device : "auto";
  return trialstat::frontend::make_pipeline_options(chosen);
}

void fill_row(const trialstat_trial& t, const trialstat::stats::statistics_record& r,
              trialstat_stats_row& row) {
  const trialstat::frontend::statistics_row values = trialstat::frontend::make_statistics_row(r);
  row = trialstat_stats_row{};
  row.tensor = t.tensor_rank[r.tensor];
  row.worker = t.worker_rank[r.worker];
  row.step = r.step;
  row.mode = static_cast<int32_t>(r.mode);
  row.dtype = static_cast<int32_t>(r.type);
  row.mode_step = r.mode_step;
  row.numel = r.num_elements;
  row.status = static_cast<int32_t>(r.raw_status.code());
  row.has_raw = values.has_raw ? 1 : 0;
  row.nan_count = values.nan_count;
  row.pos_inf_count = values.pos_inf_count;
  row.neg_inf_count = values.neg_inf_count;
  row.zero_count = values.zero_count;
  row.min = values.min;
  row.max = values.max;
  row.mean = values.mean;
  row.variance = values.variance;
  row.std = values.std_dev;
  row.sum = values.sum;
  row.l1 = values.l1;
  row.l2 = values.l2;
  row.linf = values.linf;
  row.mean_abs = values.mean_abs;
  row.update_ratio = values.update_ratio;
  row.prev_step = values.prev_step;
}

static_assert(TRIALSTAT_LOG_HISTOGRAM_BINS == trialstat::stats::log_histogram_bins);
static_assert(TRIALSTAT_LOG_HISTOGRAM_EDGES == trialstat::stats::log_histogram_bins + 1);
static_assert(TRIALSTAT_LOG_HISTOGRAM_CELLS == TRIALSTAT_LOG_HISTOGRAM_BINS + 5);

static_assert(TRIALSTAT_LOG_HISTOGRAM_CELLS == trialstat::frontend::log_histogram_row_cells);
static_assert(TRIALSTAT_LOG_HISTOGRAM_NAN == trialstat::frontend::log_histogram_nan_cell);
static_assert(TRIALSTAT_LOG_HISTOGRAM_POS_INF == trialstat::frontend::log_histogram_pos_inf_cell);
static_assert(TRIALSTAT_LOG_HISTOGRAM_NEG_INF == trialstat::frontend::log_histogram_neg_inf_cell);
static_assert(TRIALSTAT_LOG_HISTOGRAM_BELOW == trialstat::frontend::log_histogram_below_cell);
static_assert(TRIALSTAT_LOG_HISTOGRAM_ABOVE == trialstat::frontend::log_histogram_above_cell);

/// trialstat_compute_statistics[_log_histogram]: `log_histograms` NULL = no log histograms.
trialstat_status compute_statistics(trialstat_trial* trial, const trialstat_stats_options* options,
                                    trialstat_stats_row* rows, int64_t* log_histograms,
                                    size_t capacity, size_t* num_rows, const char* caller) {
  return guarded([&] {
    auto sel = select(*trial, *options);
    if (!sel) return fail(sel.error_status());
    const std::size_t needed = count_rows(*trial, *sel);
    *num_rows = needed;
    if (!rows || capacity < needed) {
      return fail(TRIALSTAT_BUFFER_TOO_SMALL,
                  fmt::format("{}: {} rows, capacity {}", caller, needed, capacity));
    }
    auto pipeline_options = make_options(*trial, options->device);
    if (!pipeline_options) return fail(pipeline_options.error_status());
    pipeline_options->step_begin = sel->begin;
    pipeline_options->step_end = sel->end;
    using trialstat::report::update_ratio_tensors;
    const trialstat::plan::read_plan plan = trialstat::report::statistics_plan(
        trial->catalog, sel->tensors,
        {.histogram_bins = 0,
         .log_histogram = log_histograms != nullptr,
         .saved_reductions = false,
         .update_ratio = options->update_ratio == 2   ? update_ratio_tensors::all
                         : options->update_ratio == 1 ? update_ratio_tensors::weights_and_biases
                                                      : update_ratio_tensors::none});
    std::size_t written = 0;
    bool overflow = false;
    auto run = trialstat::pipeline::run_statistics_from(
        statistics_source(*trial), trial->catalog, plan, *pipeline_options,
        [&](const trialstat::stats::step_statistics& step) {
          for (const auto& r : step.records) {
            if (written == capacity) {
              overflow = true;
              return;
            }
            if (log_histograms) {
              static_cast<void>(trialstat::frontend::fill_log_histogram_row(
                  r, std::span<int64_t, TRIALSTAT_LOG_HISTOGRAM_CELLS>(
                         log_histograms + written * TRIALSTAT_LOG_HISTOGRAM_CELLS,
                         TRIALSTAT_LOG_HISTOGRAM_CELLS)));
            }
            fill_row(*trial, r, rows[written++]);
          }
        });
    if (!run) return fail(run.error_status());
    *num_rows = written;
    if (overflow) {
      return fail(TRIALSTAT_BUFFER_TOO_SMALL,
                  fmt::format("{}: the trial grew while computing; refresh and retry", caller));
    }
    return TRIALSTAT_OK;
  });
}

trialstat_status evaluate(trialstat_trial* trial,
                          std::vector<trialstat::pipeline::rule_invocation>& invocations,
                          const char* device, trialstat_rule_results** out) {
  auto options = make_options(*trial, device);
  if (!options) return fail(options.error_status());
  options->strict = trial->strict;
  auto run = trialstat::pipeline::evaluate_rules(trial->catalog, invocations, *options, statistics_source(*trial));
  if (!run) return fail(run.error_status());
  auto results = std::make_unique<trialstat_rule_results>();
  results->results = std::move(*run);
  *out = results.release();
  return TRIALSTAT_OK;
}

}  // namespace

extern "C" {

const char* trialstat_status_name(trialstat_status s) {
  if (s == TRIALSTAT_BUFFER_TOO_SMALL) return "buffer_too_small";
  if (s < TRIALSTAT_OK || s > TRIALSTAT_NOT_FOUND) return "unknown";
  return trialstat::to_string(static_cast<error_code>(s)).data();
}

const char* trialstat_last_error_message(void) { return last_error.c_str(); }

const char* trialstat_version(void) { return "0.1.0"; }

trialstat_status trialstat_open(const char* path, trialstat_trial** out) {
  return open_impl(path, std::nullopt, std::nullopt, out);
}

trialstat_status trialstat_open_range(const char* path, int64_t begin, int64_t end,
                                      trialstat_trial** out) {
  return open_impl(path, begin >= 0 ? std::optional<int64_t>(begin) : std::nullopt,
                   end >= 0 ? std::optional<int64_t>(end) : std::nullopt, out);
}

void trialstat_close(trialstat_trial* trial) { delete trial; }

trialstat_status trialstat_refresh(trialstat_trial* trial, size_t* new_files) {
  if (!trial) return fail(TRIALSTAT_INVALID_ARGUMENT, "trialstat_refresh: NULL trial");
  return guarded([&] {
    auto loaded = trial->catalog.refresh();
    if (!loaded) return fail(loaded.error_status());
    if (*loaded > 0) trial->reindex();
    if (new_files) *new_files = *loaded;
    return TRIALSTAT_OK;
  });
}

size_t trialstat_num_warnings(const trialstat_trial* trial) {
  return trial ? trial->warnings.size() : 0;
}

const char* trialstat_warning(const trialstat_trial* trial, size_t index) {
  return trial && index < trial->warnings.size() ? trial->warnings[index].c_str() : nullptr;
}

size_t trialstat_num_tensors(const trialstat_trial* trial) {
  return trial ? trial->sorted_tensors.size() : 0;
}

const char* trialstat_tensor_name(const trialstat_trial* trial, size_t index) {
  if (!trial || index >= trial->sorted_tensors.size()) return nullptr;
  return trial->catalog.tensor_names()[trial->sorted_tensors[index]].c_str();
}

trialstat_status trialstat_find_tensor(const trialstat_trial* trial, const char* name,
                                       size_t* index) {
  if (!trial || !name || !index) return fail(TRIALSTAT_INVALID_ARGUMENT, "NULL argument");
  return guarded([&] {
    auto id = trial->catalog.find_tensor(name);
    if (!id) return fail(TRIALSTAT_NOT_FOUND, fmt::format("tensor '{}' was not saved", name));
    *index = trial->tensor_rank[*id];
    return TRIALSTAT_OK;
  });
}

size_t trialstat_num_workers(const trialstat_trial* trial) {
  return trial ? trial->sorted_workers.size() : 0;
}

const char* trialstat_worker_name(const trialstat_trial* trial, size_t index) {
  if (!trial || index >= trial->sorted_workers.size()) return nullptr;
  return trial->catalog.workers()[trial->sorted_workers[index]].c_str();
}

int trialstat_expected_workers(const trialstat_trial* trial) {
  return trial ? trial->catalog.num_workers() : 0;
}

int trialstat_training_ended(const trialstat_trial* trial) {
  return trial && trial->catalog.training_ended() ? 1 : 0;
}

trialstat_status trialstat_steps(const trialstat_trial* trial, trialstat_mode mode,
                                 int include_incomplete, int64_t* steps, size_t capacity,
                                 size_t* count) {
  if (!trial || !count) return fail(TRIALSTAT_INVALID_ARGUMENT, "trialstat_steps: NULL argument");
  // A C caller may pass any int: read its bits, since loading a C++ enum outside the range of
  // its enumerators (e.g. 9 here) is undefined behaviour (UBSan: -fsanitize=enum).
  std::underlying_type_t<trialstat_mode> raw_mode = 0;
  std::memcpy(&raw_mode, &mode, sizeof raw_mode);
  if (raw_mode < TRIALSTAT_MODE_TRAIN || raw_mode > TRIALSTAT_MODE_GLOBAL) {
    return fail(TRIALSTAT_INVALID_ARGUMENT, fmt::format("trialstat_steps: bad mode {}", raw_mode));
  }
  return guarded([&] {
    const auto list = trial->catalog.steps(static_cast<trialstat::mode>(raw_mode), include_incomplete != 0);
    *count = list.size();
    if (!steps) return TRIALSTAT_OK;
    if (capacity < list.size()) {
      return fail(TRIALSTAT_BUFFER_TOO_SMALL,
                  fmt::format("trialstat_steps: {} steps, capacity {}", list.size(), capacity));
    }
    std::copy(list.begin(), list.end(), steps);
    return TRIALSTAT_OK;
  });
}

trialstat_status trialstat_step_mode(const trialstat_trial* trial, int64_t global_step,
                                     trialstat_mode* mode, int64_t* mode_step) {
  if (!trial) return fail(TRIALSTAT_INVALID_ARGUMENT, "NULL trial");
  const auto* info = trial->catalog.find_step(global_step);
  if (!info) return fail(TRIALSTAT_NOT_FOUND, fmt::format("step {} was not saved", global_step));
  if (mode) *mode = static_cast<trialstat_mode>(info->mode);
  if (mode_step) *mode_step = info->mode_step;
  return TRIALSTAT_OK;
}

void trialstat_stats_options_init(trialstat_stats_options* options) {
  if (!options) return;
  *options = trialstat_stats_options{};
  options->step_begin = -1;
  options->step_end = -1;
  options->device = "auto";
  options->update_ratio = 1;
}

trialstat_status trialstat_count_statistics(const trialstat_trial* trial,
                                            const trialstat_stats_options* options,
                                            size_t* num_rows) {
  if (!trial || !options || !num_rows) return fail(TRIALSTAT_INVALID_ARGUMENT, "NULL argument");
  return guarded([&] {
    auto sel = select(*trial, *options);
    if (!sel) return fail(sel.error_status());
    *num_rows = count_rows(*trial, *sel);
    return TRIALSTAT_OK;
  });
}

trialstat_status trialstat_compute_statistics(trialstat_trial* trial,
                                              const trialstat_stats_options* options,
                                              trialstat_stats_row* rows, size_t capacity,
                                              size_t* num_rows) {
  if (!trial || !options || !num_rows) return fail(TRIALSTAT_INVALID_ARGUMENT, "NULL argument");
  return compute_statistics(trial, options, rows, nullptr, capacity, num_rows,
                            "trialstat_compute_statistics");
}

trialstat_status trialstat_compute_statistics_log_histogram(trialstat_trial* trial,
                                                            const trialstat_stats_options* options,
                                                            trialstat_stats_row* rows,
                                                            int64_t* log_histograms,
                                                            size_t capacity, size_t* num_rows) {
  if (!trial || !options || !num_rows) return fail(TRIALSTAT_INVALID_ARGUMENT, "NULL argument");
  if (rows && !log_histograms) {
    return fail(TRIALSTAT_INVALID_ARGUMENT,
                "trialstat_compute_statistics_log_histogram: NULL log_histograms buffer");
  }
  if (!rows) {
    // Size query (BUFFER_TOO_SMALL with the count), as trialstat_compute_statistics.
    return compute_statistics(trial, options, nullptr, nullptr, capacity, num_rows,
                              "trialstat_compute_statistics_log_histogram");
  }
  return compute_statistics(trial, options, rows, log_histograms, capacity, num_rows,
                            "trialstat_compute_statistics_log_histogram");
}

trialstat_status trialstat_log_histogram_edges(double* edges, size_t capacity, size_t* count) {
  if (!count) return fail(TRIALSTAT_INVALID_ARGUMENT, "trialstat_log_histogram_edges: NULL count");
  const auto table = trialstat::stats::log_histogram_edges();
  *count = table.size();
  if (!edges) return TRIALSTAT_OK;
  if (capacity < table.size()) {
    return fail(TRIALSTAT_BUFFER_TOO_SMALL,
                fmt::format("trialstat_log_histogram_edges: {} edges, capacity {}", table.size(),
                            capacity));
  }
  std::copy(table.begin(), table.end(), edges);
  return TRIALSTAT_OK;
}

trialstat_status trialstat_evaluate_rules(trialstat_trial* trial, const trialstat_rule_spec* rules,
                                          size_t num_rules, const char* device,
                                          trialstat_rule_results** out) {
  if (out) *out = nullptr;
  if (!trial || !out || (num_rules > 0 && !rules)) {
    return fail(TRIALSTAT_INVALID_ARGUMENT, "trialstat_evaluate_rules: NULL argument");
  }
  return guarded([&] {
    std::vector<trialstat::pipeline::rule_invocation> invocations;
    for (size_t i = 0; i < num_rules; ++i) {
      const auto& spec = rules[i];
      if (!spec.rule_name) return fail(TRIALSTAT_INVALID_ARGUMENT, fmt::format("rule {}: NULL name", i));
      trialstat::rules::rule_parameters params;
      for (size_t p = 0; p < spec.num_params; ++p) {
        if (!spec.param_keys || !spec.param_values || !spec.param_keys[p] || !spec.param_values[p]) {
          return fail(TRIALSTAT_INVALID_ARGUMENT, fmt::format("rule {}: NULL parameter {}", i, p));
        }
        params[spec.param_keys[p]] = spec.param_values[p];
      }
      invocations.push_back(trialstat::frontend::make_rule_invocation(
          spec.configuration_name ? spec.configuration_name : "", spec.rule_name, params));
    }
    return evaluate(trial, invocations, device, out);
  });
}

trialstat_status trialstat_evaluate_rule_config(trialstat_trial* trial, const char* json_text,
                                                const char* device, trialstat_rule_results** out) {
  if (out) *out = nullptr;
  if (!trial || !json_text || !out) {
    return fail(TRIALSTAT_INVALID_ARGUMENT, "trialstat_evaluate_rule_config: NULL argument");
  }
  return guarded([&] {
    auto entries = trialstat::rules::parse_rule_config(json_text);
    if (!entries) return fail(entries.error_status());
    auto invocations = trialstat::frontend::make_rule_invocations(*entries);
    return evaluate(trial, invocations, device, out);
  });
}

void trialstat_rule_results_free(trialstat_rule_results* results) { delete results; }

size_t trialstat_rule_results_count(const trialstat_rule_results* results) {
  return results ? results->results.size() : 0;
}

const char* trialstat_rule_result_name(const trialstat_rule_results* results, size_t rule) {
  if (!results || rule >= results->results.size()) return nullptr;
  return results->results[rule].rule_name.c_str();
}

const char* trialstat_rule_result_configuration_name(const trialstat_rule_results* results,
                                                     size_t rule) {
  if (!results || rule >= results->results.size()) return nullptr;
  return results->results[rule].configuration_name.c_str();
}

trialstat_rule_status trialstat_rule_result_status(const trialstat_rule_results* results,
                                                   size_t rule) {
  if (!results || rule >= results->results.size()) return TRIALSTAT_RULE_ERROR;
  switch (results->results[rule].status) {
    case trialstat::rules::rule_status::in_progress: return TRIALSTAT_RULE_IN_PROGRESS;
    case trialstat::rules::rule_status::no_issues_found: return TRIALSTAT_RULE_NO_ISSUES_FOUND;
    case trialstat::rules::rule_status::issues_found: return TRIALSTAT_RULE_ISSUES_FOUND;
    case trialstat::rules::rule_status::error: return TRIALSTAT_RULE_ERROR;
  }
  return TRIALSTAT_RULE_ERROR;
}

const char* trialstat_rule_result_details(const trialstat_rule_results* results, size_t rule) {
  if (!results || rule >= results->results.size()) return nullptr;
  return results->results[rule].status_details.c_str();
}

size_t trialstat_rule_result_num_findings(const trialstat_rule_results* results, size_t rule) {
  if (!results || rule >= results->results.size()) return 0;
  return results->results[rule].findings.size();
}

trialstat_status trialstat_rule_result_finding(const trialstat_rule_results* results, size_t rule,
                                               size_t finding, trialstat_finding* out) {
  if (!results || !out) return fail(TRIALSTAT_INVALID_ARGUMENT, "NULL argument");
  if (rule >= results->results.size() || finding >= results->results[rule].findings.size()) {
    return fail(TRIALSTAT_NOT_FOUND, fmt::format("no finding {} of rule {}", finding, rule));
  }
  const auto& f = results->results[rule].findings[finding];
  out->rule = f.rule.c_str();
  out->step = f.step;
  out->mode = static_cast<int32_t>(f.mode);
  out->mode_step = f.mode_step;
  out->tensor = f.tensor.c_str();
  out->worker = f.worker.c_str();
  out->value = f.value;
  out->message = f.message.c_str();
  return TRIALSTAT_OK;
}

}  // extern "C"

void trialstat_set_strict(trialstat_trial* trial, int strict) {
  if (trial) trial->strict = strict != 0;
}

trialstat_status trialstat_set_store(trialstat_trial* trial, const char* store) {
  if (!trial || !store) return fail(TRIALSTAT_INVALID_ARGUMENT, "trialstat_set_store: NULL argument");
  return guarded([&] {
    const status chosen = set_store(*trial, store);
    return chosen.ok() ? TRIALSTAT_OK : fail(chosen);
  });
}

trialstat_status trialstat_set_device_options(trialstat_trial* trial, const char* verify_device, int64_t pinned_mb) {
  if (!trial) return fail(TRIALSTAT_INVALID_ARGUMENT, "trialstat_set_device_options: NULL trial");
  return guarded([&] {
    trialstat::frontend::device_options chosen;
    chosen.device = "cpu";  // checked here: the two settings only (each call names its device)
    chosen.verify_device = verify_device ? verify_device : "";
    chosen.pinned_mb = pinned_mb == 0 ? trialstat::frontend::default_pinned_mb : pinned_mb;
    if (auto checked = trialstat::frontend::make_pipeline_options(chosen); !checked) {
      return fail(checked.error_status());
    }
    trial->device.verify_device = chosen.verify_device;
    trial->device.pinned_mb = chosen.pinned_mb;
    return TRIALSTAT_OK;
  });
}

trialstat_status trialstat_get_store_summary(const trialstat_trial* trial, trialstat_store_summary* out) {
  if (!trial || !out) return fail(TRIALSTAT_INVALID_ARGUMENT, "trialstat_get_store_summary: NULL argument");
  *out = trialstat_store_summary{};
  if (!trial->store) return fail(TRIALSTAT_NOT_FOUND, "trialstat_get_store_summary: the trial has no statistics store");
  const trialstat::store::store_run_summary& s = trial->store->summary();
  out->path = trial->store->path().c_str();
  out->served = s.served;
  out->read = s.read;
  out->written = s.written;
  out->bytes_read = s.bytes_read;
  return TRIALSTAT_OK;
}

size_t trialstat_rule_result_num_skipped(const trialstat_rule_results* results, size_t rule) {
  if (!results || rule >= results->results.size()) return 0;
  return results->results[rule].skipped.size();
}

trialstat_status trialstat_rule_result_skipped(const trialstat_rule_results* results, size_t rule,
                                               size_t index, trialstat_skipped_record* out) {
  if (!results || !out) return fail(TRIALSTAT_INVALID_ARGUMENT, "NULL argument");
  if (rule >= results->results.size() || index >= results->results[rule].skipped.size()) {
    return fail(TRIALSTAT_NOT_FOUND, fmt::format("no skipped record {} of rule {}", index, rule));
  }
  const auto& k = results->results[rule].skipped[index];
  out->tensor = k.tensor.c_str();
  out->worker = k.worker.c_str();
  out->step = k.step;
  out->file = k.file.c_str();
  out->offset_bytes = k.offset_bytes;
  out->saved_reduction = k.saved_reduction ? 1 : 0;
  out->code = static_cast<trialstat_status>(k.reason.code());
  out->reason = k.reason.message().c_str();
  return TRIALSTAT_OK;
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file trialstat.h
 * @brief The C API of trialstat, for embedding in other tools: open an smdebug trial, list its
 * tensors, workers and steps, compute per-tensor statistics into caller-owned buffers, and
 * evaluate the built-in rules. Pure C (C99), opaque handles, status codes.
 *
 * Errors: every function that can fail returns a `trialstat_status`; on failure
 * `trialstat_last_error_message()` gives the message of the calling thread's last failure (it
 * names the file, byte offset, step or parameter). Codes mirror `trialstat::error_code`.
 * Thread safety: distinct handles may be used from different threads; one handle must not be
 * used by two threads at once. Strings returned by the library stay valid until the handle they
 * came from is closed/freed (or, for tensor and worker names, refreshed).
 *
 * Example (error handling omitted):
 * @code
 *   trialstat_trial* trial = NULL;
 *   trialstat_open("/data/trial", &trial);
 *   size_t rows = 0;
 *   trialstat_stats_options options;
 *   trialstat_stats_options_init(&options);
 *   trialstat_count_statistics(trial, &options, &rows);
 *   trialstat_stats_row* out = malloc(rows * sizeof *out);
 *   trialstat_compute_statistics(trial, &options, out, rows, &rows);
 *   trialstat_close(trial);
 * @endcode
 * Source: DESIGN.md "Interfaces users touch"; statistics as ../shared/trials/README.md.
 */
#ifndef TRIALSTAT_TRIALSTAT_H_
#define TRIALSTAT_TRIALSTAT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Status codes; the values equal `trialstat::error_code`. */
typedef enum trialstat_status {
  TRIALSTAT_OK = 0,
  TRIALSTAT_END_OF_STREAM = 1,
  TRIALSTAT_TRUNCATED_RECORD = 2,
  TRIALSTAT_DATA_LOSS = 3,
  TRIALSTAT_INVALID_ARGUMENT = 4,
  TRIALSTAT_UNSUPPORTED_DTYPE = 5,
  TRIALSTAT_OUT_OF_MEMORY = 6,
  TRIALSTAT_CUDA_ERROR = 7,
  TRIALSTAT_CUDA_FATAL = 8,
  TRIALSTAT_IO_ERROR = 9,
  TRIALSTAT_NOT_FOUND = 10,
  /** The output buffer is too small; the needed count was written to the count argument. */
  TRIALSTAT_BUFFER_TOO_SMALL = 100
} trialstat_status;

/** @brief Training modes (smdebug ModeKeys). */
typedef enum trialstat_mode {
  TRIALSTAT_MODE_TRAIN = 1,
  TRIALSTAT_MODE_EVAL = 2,
  TRIALSTAT_MODE_PREDICT = 3,
  TRIALSTAT_MODE_GLOBAL = 4
} trialstat_mode;

/** @brief Rule statuses (SageMaker's). */
typedef enum trialstat_rule_status {
  TRIALSTAT_RULE_IN_PROGRESS = 0,
  TRIALSTAT_RULE_NO_ISSUES_FOUND = 1,
  TRIALSTAT_RULE_ISSUES_FOUND = 2,
  TRIALSTAT_RULE_ERROR = 3
} trialstat_rule_status;

/** @brief An open trial (opaque). */
typedef struct trialstat_trial trialstat_trial;
/** @brief The results of one `trialstat_evaluate_*` call (opaque). */
typedef struct trialstat_rule_results trialstat_rule_results;

/** @brief Name of a status code, e.g. "data_loss"; "buffer_too_small"; "unknown" otherwise. */
const char* trialstat_status_name(trialstat_status status);

/** @brief The message of the calling thread's last failed call ("" if none). Valid until the
 *  next failing call on this thread. */
const char* trialstat_last_error_message(void);

/** @brief Library version, "MAJOR.MINOR.PATCH". */
const char* trialstat_version(void);

/* ---- trials ------------------------------------------------------------------------------- */

/**
 * @brief Open a local trial folder (index, collections and event files; FORMAT.md §1).
 * @param path  the trial folder
 * @param out   receives the handle (NULL on failure); close it with `trialstat_close`
 * @return OK; NOT_FOUND (not a directory), IO_ERROR (cannot be listed), INVALID_ARGUMENT (NULL).
 * Damaged individual files do not fail the open (they are skipped; see `trialstat_num_warnings`).
 */
trialstat_status trialstat_open(const char* path, trialstat_trial** out);

/** @brief Like `trialstat_open`, loading only global steps `begin <= s < end` (smdebug's
 *  `range_steps`); a negative bound means unbounded. */
trialstat_status trialstat_open_range(const char* path, int64_t begin, int64_t end,
                                      trialstat_trial** out);

/** @brief Close a trial (NULL is ignored). Invalidates every string obtained from it. */
void trialstat_close(trialstat_trial* trial);

/** @brief Load files written since the last look (live trials).
 *  @param new_files  optional: receives the number of (step, worker) files loaded. */
trialstat_status trialstat_refresh(trialstat_trial* trial, size_t* new_files);

/** @brief Problems met while loading (never fatal); message `index` < count. */
size_t trialstat_num_warnings(const trialstat_trial* trial);
const char* trialstat_warning(const trialstat_trial* trial, size_t index);

/** @brief Tensors, sorted by name. `trialstat_tensor_name` returns NULL for an index >= count.
 *  The index used everywhere in this API is this sorted position. */
size_t trialstat_num_tensors(const trialstat_trial* trial);
const char* trialstat_tensor_name(const trialstat_trial* trial, size_t index);
/** @brief Sorted index of a tensor. @return OK or NOT_FOUND. */
trialstat_status trialstat_find_tensor(const trialstat_trial* trial, const char* name,
                                       size_t* index);

/** @brief Workers, sorted lexicographically (`worker_10` < `worker_2`, as smdebug). */
size_t trialstat_num_workers(const trialstat_trial* trial);
const char* trialstat_worker_name(const trialstat_trial* trial, size_t index);
/** @brief `_meta.num_workers` from the collections file (else the number of workers seen). */
int trialstat_expected_workers(const trialstat_trial* trial);
/** @brief 1 when `training_job_end.ts` exists. */
int trialstat_training_ended(const trialstat_trial* trial);

/**
 * @brief Saved steps of a mode, ascending: global steps for GLOBAL, mode steps otherwise;
 * complete steps only unless `include_incomplete` (TRIAL_API §4, exact completeness).
 * Two-phase: with `steps` NULL (or `capacity` too small) only `*count` is set.
 * @return OK; BUFFER_TOO_SMALL when `capacity` < `*count` (steps non-NULL); INVALID_ARGUMENT.
 */
trialstat_status trialstat_steps(const trialstat_trial* trial, trialstat_mode mode,
                                 int include_incomplete, int64_t* steps, size_t capacity,
                                 size_t* count);

/** @brief Mode and mode step of a global step. @return OK or NOT_FOUND. */
trialstat_status trialstat_step_mode(const trialstat_trial* trial, int64_t global_step,
                                     trialstat_mode* mode, int64_t* mode_step);

/* ---- statistics --------------------------------------------------------------------------- */

/** @brief What to compute. Initialise with `trialstat_stats_options_init`. */
typedef struct trialstat_stats_options {
  const char* const* collections; /**< [num_collections] collection names, or NULL */
  size_t num_collections;
  const char* const* regexes;     /**< [num_regexes] Python re.search patterns, or NULL */
  size_t num_regexes;             /**< selection: union of both; both empty = every tensor */
  int64_t step_begin;             /**< global steps [step_begin, step_end); < 0 = unbounded */
  int64_t step_end;
  const char* device;             /**< "auto" (default, NULL = auto), "cpu" or "cuda" */
  /** 1: update ratio for tensors of the weights/biases collections (default); 2: for every
   *  selected tensor; 0: none. */
  int update_ratio;
} trialstat_stats_options;

/** @brief Defaults: every tensor, every step, device auto, update ratio for weights/biases. */
void trialstat_stats_options_init(trialstat_stats_options* options);

/**
 * @brief Statistics of one (tensor, global step, worker), float64 over the finite values
 * (../shared/trials/README.md "stats"); NaN where undefined (no finite value, or no raw value:
 * then `has_raw` = 0 and the counts are -1).
 */
typedef struct trialstat_stats_row {
  uint32_t tensor;        /**< sorted tensor index (`trialstat_tensor_name`) */
  uint32_t worker;        /**< sorted worker index (`trialstat_worker_name`) */
  int64_t step;           /**< global step */
  int32_t mode;           /**< trialstat_mode */
  int32_t dtype;          /**< TensorFlow DataType number (1 float32, 2 float64, 19 float16, ...) */
  int64_t mode_step;
  int32_t has_raw;        /**< 1: the raw tensor was read; 0: not saved or unreadable */
  int32_t status;         /**< trialstat_status of the raw read (NOT_FOUND: not saved) */
  int64_t numel;
  int64_t nan_count, pos_inf_count, neg_inf_count, zero_count;
  double min, max, mean, variance, std, sum, l1, l2, linf, mean_abs;
  double update_ratio;    /**< ‖W_s − W_p‖₂ / (‖W_p‖₂ + 1e-9), NaN when not computed */
  int64_t prev_step;      /**< p, or -1 */
} trialstat_stats_row;

/** @brief Number of rows `trialstat_compute_statistics` will produce (one per saved entry of
 *  a selected tensor in the step range). Cheap: reads no event file.
 *  @return OK; INVALID_ARGUMENT (bad regex, NULL). */
trialstat_status trialstat_count_statistics(const trialstat_trial* trial,
                                            const trialstat_stats_options* options,
                                            size_t* num_rows);

/**
 * @brief Compute the statistics into `rows` (ordered by step, then worker, then index order).
 * @param rows      [capacity] caller-owned
 * @param num_rows  receives the number of rows (on BUFFER_TOO_SMALL: the number needed)
 * @return OK; BUFFER_TOO_SMALL; INVALID_ARGUMENT (bad option, regex or device); IO_ERROR.
 * A record that cannot be read costs only its row (`has_raw` = 0, `status` says why).
 */
trialstat_status trialstat_compute_statistics(trialstat_trial* trial,
                                              const trialstat_stats_options* options,
                                              trialstat_stats_row* rows, size_t capacity,
                                              size_t* num_rows);

/* ---- fixed log-scale histograms ------------------------------------------------------------ */

/** @brief Bins of every log-scale histogram (the same for every tensor and step). */
#define TRIALSTAT_LOG_HISTOGRAM_BINS 1548
/** @brief Edges of the log-scale histogram (bins + 1). */
#define TRIALSTAT_LOG_HISTOGRAM_EDGES 1549
/** @brief Cells per row of a log-histogram buffer: the 1548 bin counts, then the five counts
 *  beside the bins at these offsets. */
#define TRIALSTAT_LOG_HISTOGRAM_CELLS 1553
#define TRIALSTAT_LOG_HISTOGRAM_NAN 1548     /**< NaN */
#define TRIALSTAT_LOG_HISTOGRAM_POS_INF 1549 /**< +Inf */
#define TRIALSTAT_LOG_HISTOGRAM_NEG_INF 1550 /**< -Inf */
#define TRIALSTAT_LOG_HISTOGRAM_BELOW 1551   /**< finite x < edge[0] (about -9.92e19) */
#define TRIALSTAT_LOG_HISTOGRAM_ABOVE 1552   /**< finite x > edge[1548] (about 9.92e19) */

/**
 * @brief The edges of the fixed log-scale histogram, ascending, float64: TensorBoard's default
 * buckets as smdebug builds them (v = 1e-12; v *= 1.1 while v < 1e20 gives 774 positive edges
 * p; edges = [-p[773] ... -p[0], 0, p[0] ... p[773]], edge[774] = 0). Bin i = [edge[i],
 * edge[i+1]), the last bin closed (`numpy.histogram(x, bins=edges)`).
 * Two-phase like `trialstat_steps`: with `edges` NULL only `*count` (1549) is set.
 * @param edges     [capacity] caller-owned, or NULL
 * @param count     receives TRIALSTAT_LOG_HISTOGRAM_EDGES
 * @return OK; BUFFER_TOO_SMALL when `capacity` < 1549 (edges non-NULL; nothing written);
 *   INVALID_ARGUMENT (`count` NULL).
 * Source: spec/FORMAT.md §10; smdebug `_get_default_bins`; include/trialstat/stats/log_histogram.hpp.
 */
trialstat_status trialstat_log_histogram_edges(double* edges, size_t capacity, size_t* count);

/**
 * @brief `trialstat_compute_statistics` plus the fixed log-scale histogram of every row, in one
 * pass (the counts of `trialstat stats --log-hist`). Row r of `log_histograms` (int64,
 * TRIALSTAT_LOG_HISTOGRAM_CELLS cells, row-major) belongs to `rows[r]`: cells [0, 1548) are the
 * bin counts over the values converted to float64 (bool 0/1, integers to the nearest double),
 * then NaN, +Inf, -Inf, below-range and above-range counts (offsets TRIALSTAT_LOG_HISTOGRAM_*);
 * with a raw value (`has_raw` = 1) all 1553 cells sum to `numel`. A row without a raw value gets
 * zero bin counts and -1 in the five side cells (as its `nan_count`).
 * @param rows            [capacity] caller-owned
 * @param log_histograms  [capacity × TRIALSTAT_LOG_HISTOGRAM_CELLS] caller-owned int64
 * @param num_rows        receives the number of rows (on BUFFER_TOO_SMALL: the number needed)
 * @return as `trialstat_compute_statistics`; INVALID_ARGUMENT when `log_histograms` is NULL
 *   (with `rows` non-NULL). Counts are exact and identical on the CPU and CUDA backends.
 */
trialstat_status trialstat_compute_statistics_log_histogram(trialstat_trial* trial,
                                                            const trialstat_stats_options* options,
                                                            trialstat_stats_row* rows,
                                                            int64_t* log_histograms,
                                                            size_t capacity, size_t* num_rows);

/* ---- rules -------------------------------------------------------------------------------- */

/** @brief One rule: its smdebug name and SageMaker-style string parameters. */
typedef struct trialstat_rule_spec {
  const char* configuration_name; /**< NULL: the rule name */
  const char* rule_name;          /**< e.g. "VanishingGradient" */
  const char* const* param_keys;  /**< [num_params] */
  const char* const* param_values;
  size_t num_params;
} trialstat_rule_spec;

/** @brief One finding; strings are owned by the results object. */
typedef struct trialstat_finding {
  const char* rule;
  int64_t step;           /**< global step */
  int32_t mode;           /**< trialstat_mode */
  int64_t mode_step;
  const char* tensor;
  const char* worker;
  double value;
  const char* message;
} trialstat_finding;

/**
 * @brief Evaluate rules in one pass over the trial. A rule that cannot be built (unknown name,
 * bad parameter) gets status ERROR with details; it does not fail the call.
 * @param device  "auto" / NULL, "cpu" or "cuda"
 * @param out     receives the results; free with `trialstat_rule_results_free`
 * @return OK; INVALID_ARGUMENT (NULL, bad device); IO_ERROR.
 */
trialstat_status trialstat_evaluate_rules(trialstat_trial* trial, const trialstat_rule_spec* rules,
                                          size_t num_rules, const char* device,
                                          trialstat_rule_results** out);

/** @brief Same with a SageMaker rule configuration (JSON text, rule_config.hpp).
 *  @return as above, plus DATA_LOSS / INVALID_ARGUMENT for a malformed configuration. */
trialstat_status trialstat_evaluate_rule_config(trialstat_trial* trial, const char* json_text,
                                                const char* device, trialstat_rule_results** out);

void trialstat_rule_results_free(trialstat_rule_results* results);
size_t trialstat_rule_results_count(const trialstat_rule_results* results);
const char* trialstat_rule_result_name(const trialstat_rule_results* results, size_t rule);
const char* trialstat_rule_result_configuration_name(const trialstat_rule_results* results,
                                                     size_t rule);
trialstat_rule_status trialstat_rule_result_status(const trialstat_rule_results* results,
                                                   size_t rule);
const char* trialstat_rule_result_details(const trialstat_rule_results* results, size_t rule);
size_t trialstat_rule_result_num_findings(const trialstat_rule_results* results, size_t rule);
/** @return OK or NOT_FOUND (index out of range). */
trialstat_status trialstat_rule_result_finding(const trialstat_rule_results* results, size_t rule,
                                               size_t finding, trialstat_finding* out);

/* ---- records that could not be read (issue 12) ------------------------------------------ */

/** @brief A record a rule's verdict could not see (cut short, corrupt, its event file missing or
 *  unreadable); strings are owned by the results object. */
typedef struct trialstat_skipped_record {
  const char* tensor;
  const char* worker;
  int64_t step;              /**< global step */
  const char* file;          /**< event file, trial-relative */
  uint64_t offset_bytes;     /**< the record's byte offset in `file` */
  int32_t saved_reduction;   /**< 1: a saved-reduction record; 0: the raw tensor */
  trialstat_status code;     /**< why: DATA_LOSS, TRUNCATED_RECORD, IO_ERROR, ... */
  const char* reason;        /**< the message (names file and byte offset) */
} trialstat_skipped_record;

/** @brief Strict reading for later rule evaluations on `trial`: a rule whose tensors have a
 *  record that cannot be read gets status ERROR (default 0: the record is listed as skipped). */
void trialstat_set_strict(trialstat_trial* trial, int strict);
/** @brief How many records of the rule's tensors could not be read. */
size_t trialstat_rule_result_num_skipped(const trialstat_rule_results* results, size_t rule);
/** @return OK or NOT_FOUND (index out of range). */
trialstat_status trialstat_rule_result_skipped(const trialstat_rule_results* results, size_t rule,
                                               size_t index, trialstat_skipped_record* out);

/* ---- the statistics store (issue 26) ---------------------------------------------------- */

/**
 * @brief The statistics store of later `trialstat_compute_statistics*` and `trialstat_evaluate_*`
 * calls on `trial` (README "Statistics store"): a SQLite file of per-record statistics that
 * later calls (and the CLI, Python) take instead of reading the event files again, while they
 * still describe the records (same event file bytes, same request); the results are the same
 * with or without it.
 * @param store  "auto": a file under $XDG_CACHE_HOME/trialstat/ (else ~/.cache/trialstat/),
 *   keyed by the trial's location; "off": none; anything else: the path of the SQLite file.
 *   Default after `trialstat_open`: $TRIALSTAT_STORE when set, else "off" (an embedding tool
 *   opts in; the CLI and Python default to "auto").
 * @return OK; INVALID_ARGUMENT (NULL; "auto" with neither XDG_CACHE_HOME nor HOME set: the
 *   trial then has no store). A store that cannot be used later (an unwritable folder, a file
 *   that is not a trialstat store, a full disk) fails nothing: the trial is read and the problem
 *   is added to the trial's warnings (`trialstat_warning`, until the next refresh).
 */
trialstat_status trialstat_set_store(trialstat_trial* trial, const char* store);

/** @brief What the trial's statistics store did so far (totals over its calls). */
typedef struct trialstat_store_summary {
  const char* path;    /**< the SQLite file; valid until the store is changed or the trial closed */
  int64_t served;      /**< records taken from the store */
  int64_t read;        /**< records read from the event files */
  int64_t written;     /**< rows written */
  int64_t bytes_read;  /**< event-file bytes read */
} trialstat_store_summary;

/** @return OK; NOT_FOUND (the trial has no store: "off"); INVALID_ARGUMENT (NULL). */
trialstat_status trialstat_get_store_summary(const trialstat_trial* trial, trialstat_store_summary* out);

/**
 * @brief How later statistics and rule evaluations of `trial` use a CUDA device (the CPU backend
 * ignores both): `--verify-device` and `--pinned-mb` of the CLI (README "GPU safety").
 * @param verify_device  "off", "first" (the first step) or "sampled" (the first, every 64th and
 *   the last step are checked against the CPU twin; on a difference or a CUDA error the run
 *   warns and finishes on the CPU); NULL: $TRIALSTAT_VERIFY_DEVICE when set, else "sampled"
 *   (the default after `trialstat_open`).
 * @param pinned_mb  pinned host staging memory in MiB, in [1, 1048576]; 0: the default (256).
 * @return OK; INVALID_ARGUMENT (NULL trial, another verify_device, pinned_mb out of range: the
 *   settings are then unchanged).
 */
trialstat_status trialstat_set_device_options(trialstat_trial* trial, const char* verify_device,
                                              int64_t pinned_mb);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* TRIALSTAT_TRIALSTAT_H_ */

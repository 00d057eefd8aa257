// SPDX-License-Identifier: Apache-2.0
/// @file builtin_rules.hpp
/// @brief The built-in rules trialstat implements, with typed parameters (smdebug's names and
/// defaults) and factories. `make_rule` (rule.hpp) parses SageMaker string parameters into these
/// structs; C++ users may construct rules from the structs directly.
///
/// Conventions shared by every rule here (spec/RULES.md §2):
///  - Tensor selection is the union of `collection_names` and `tensor_regex` (Python re.search),
///    resolved against the catalog in `prepare`; tensors added to a live trial later are not
///    selected.
///  - A rule evaluates at saved global steps in increasing order. A tensor without usable data at
///    a step (not saved there, raw value missing or corrupt) is skipped for that step only.
///  - Workers: by default each tensor is evaluated on the lexicographically smallest worker
///    that has a record for it at the step (smdebug `worker=None`, TRIAL_API §5).
///    `evaluate_all_workers = True` (trialstat's addition, default False) evaluates every worker
///    and reports a finding per worker.
///  - Statistics are compared in float64; a comparison with NaN is false (never fires).
///  - Every (step, tensor[, worker]) where the condition holds is reported as a finding; the rule
///    keeps running (smdebug stops at the first RuleEvaluationConditionMet).
/// Source: spec/RULES.md §1–§3.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trialstat/mode.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/status.hpp"

namespace trialstat::rules {

/// @brief Largest number of previous saved steps a pairwise rule asks the pipeline to keep per
/// (tensor, worker) (WeightUpdateRatio's `num_steps`, UnchangedTensor's `num_steps − 1`).
/// Pairs further back are not evaluated; UnchangedTensor rejects num_steps > this + 1.
inline constexpr int max_rule_history_depth = 64;

/// @brief VanishingGradient (spec/RULES.md §3.1). Reads collection `gradients`.
/// Fires for each gradient tensor with mean(|g|) < threshold. mean(|g|) is computed from the raw
/// tensor with numpy semantics (a NaN element makes it NaN → no fire; ±Inf makes it +Inf); when
/// only reductions were saved, the saved `abs_mean` reduction is used. A trial without gradient
/// tensors gives no findings.
struct vanishing_gradient_params {
  double threshold = 1e-7;
  bool evaluate_all_workers = false;
};

/// @brief ExplodingTensor (spec/RULES.md §3.5). Selection: collection_names ∪ tensor_regex; both
/// unset → every tensor. Fires when the raw tensor has NaN (`only_nan`) or any NaN/±Inf
/// elements; the finding's value is that count. When only reductions were saved [prop]: fires
/// when a saved reduction is NaN (`only_nan`) or non-finite (value = that reduction).
struct exploding_tensor_params {
  std::vector<std::string> collection_names;
  std::vector<std::string> tensor_regex;
  bool only_nan = false;
  bool evaluate_all_workers = false;
};

/// @brief AllZero (spec/RULES.md §3.4). One of collection_names / tensor_regex is required
/// (else prepare fails with InsufficientInformationForRuleInvocation). Fires when
/// 100·count(x == 0)/size ≥ threshold (percent; −0.0 counts as zero, NaN does not; empty
/// tensors never fire). Needs the raw tensor.
struct all_zero_params {
  std::vector<std::string> collection_names;
  std::vector<std::string> tensor_regex;
  double threshold = 100.0;
  bool evaluate_all_workers = false;
};

/// @brief TensorVariance (spec/RULES.md §3.14). One of collection_names / tensor_regex is
/// required, and at least one threshold (else prepare fails). Fires when var > max_threshold or
/// var < min_threshold (each only if set). var = population variance of the raw tensor's
/// *finite* elements (numpy would give NaN when a NaN/Inf is present — trialstat ignores
/// non-finite elements instead, so a mostly-finite tensor is still judged; ExplodingTensor
/// reports the non-finite ones; no finite element → no value). When only reductions were saved:
/// the saved `variance` (PyTorch stores ddof = 1), else the saved `std` squared.
struct tensor_variance_params {
  std::vector<std::string> collection_names;
  std::vector<std::string> tensor_regex;
  std::optional<double> max_threshold;
  std::optional<double> min_threshold;
  bool evaluate_all_workers = false;
};

/// @brief WeightUpdateRatio (spec/RULES.md §3.3). Reads collection `weights`. Mode: TRAIN when the
/// trial has TRAIN steps, else GLOBAL; only that mode's steps are evaluated and paired (steps
/// are mode steps, global steps for GLOBAL). At saved step s the pair is (p, s): p = the
/// tensor's previous saved step in the mode (num_steps unset), or its earliest saved step in
/// [s − num_steps, s). r = ‖W_s − W_p‖₂ / (‖W_p‖₂ + epsilon) (Frobenius, float64). Fires when
/// r > large_threshold or r < small_threshold. Steps without such a p, pairs with different
/// shapes, and p further back than `max_rule_history_depth` saves are skipped.
struct weight_update_ratio_params {
  std::optional<int64_t> num_steps;
  double large_threshold = 10.0;
  double small_threshold = 1e-8;
  double epsilon = 1e-9;
  bool evaluate_all_workers = false;
};

/// @brief UnchangedTensor (spec/RULES.md §3.6). One of collection_names / tensor_regex is
/// required. At step s, per tensor: W = its last `num_steps` saved steps ≤ s (raw value saved);
/// fires when every p ∈ W∖{s} satisfies numpy.allclose(value_p, value_s, rtol, atol, equal_nan)
/// (same shape required). Fewer than num_steps saves → no evaluation. num_steps ≥ 2 and
/// ≤ max_rule_history_depth + 1. Finding value: the largest |value_s − value_p| over W.
struct unchanged_tensor_params {
  std::vector<std::string> collection_names;
  std::vector<std::string> tensor_regex;
  int64_t num_steps = 3;
  double rtol = 1e-5;
  double atol = 1e-8;
  bool equal_nan = false;
  bool evaluate_all_workers = false;
};

/// @brief LossNotDecreasing (spec/RULES.md §3.7).
/// Loss tensors: collection `losses` (when use_losses_collection) ∪ collection_names ∪
/// tensor_regex; if that selects nothing, every tensor. Only one-element tensors are evaluated.
/// Mode: `mode` if set, else per tensor the first of EVAL, TRAIN, GLOBAL in which the tensor has
/// saved steps (decided from the catalog at the first step the tensor appears). Steps are that
/// mode's steps (global steps for GLOBAL). Schedule: at saved step s, evaluate when a saved step
/// ≤ s − num_steps exists and (first evaluation, or s ≥ last evaluation + num_steps); baseline b =
/// loss at the largest saved step ≤ s − num_steps, current c = loss at s.
/// Condition (default, literal 2023 docs): c ≤ b → fire when 100·(b − c)/|b| < diff_percent;
/// c > b → fire when 100·(c − b)/|b| > increase_threshold_percent.
/// `use_legacy_semantics = True` (trialstat's addition, default False): the 2019 tests' rule,
/// fire when 100·(c − b)/|b| ≥ diff_percent (increase_threshold_percent unused).
struct loss_not_decreasing_params {
  std::vector<std::string> collection_names;
  std::vector<std::string> tensor_regex;
  bool use_losses_collection = true;
  int64_t num_steps = 10;
  double diff_percent = 0.1;
  double increase_threshold_percent = 5.0;
  std::optional<trialstat::mode> mode;
  bool use_legacy_semantics = false;
  bool evaluate_all_workers = false;
};

/// @brief DeadRelu (spec/RULES.md §3.9). Selection: tensor_regex (default `.*relu_output`).
/// Per tensor at a step: axis 0 is the batch (rank ≤ 1: batch 1, one node per element); node
/// activity = 100·count(x > 0 along the batch)/batch; a node is dead when its activity <
/// threshold_inactivity; fires when 100·dead/nodes > threshold_layer (value: that percentage).
/// Per step, no accumulation over steps [prop]. NaN is never active.
struct dead_relu_params {
  std::vector<std::string> tensor_regex{".*relu_output"};
  double threshold_inactivity = 1.0;
  double threshold_layer = 50.0;
  bool evaluate_all_workers = false;
};

/// @brief SimilarAcrossRuns (spec/RULES.md §3.2). Compares the base trial with the trial at
/// `other_trials` (a path; the older name `other_trial` is accepted too; required). Selection:
/// collection_names ∪ tensor_regex on the base trial, both unset → every tensor; only tensors
/// the other trial also has. At each saved global step s of the base trial, per selected tensor
/// (default worker in each trial; with evaluate_all_workers, the same worker name in both):
/// fires when the other trial has the raw tensor at s and it differs [prop]: shapes differ
/// (value NaN), or numpy.allclose(other, base, rtol, atol, equal_nan) is false (value = the
/// number of elements not close). Tensors or steps missing (or unreadable) in either trial are
/// skipped. The other trial is opened in `prepare` (a failure is the rule's Error) and its
/// records are read on demand with one pread each (raw values of the base come from the
/// pipeline, `keep_values`). rtol/atol/equal_nan are trialstat's additions (defaults numpy's).
struct similar_across_runs_params {
  std::string other_trials;
  std::vector<std::string> collection_names;
  std::vector<std::string> tensor_regex;
  double rtol = 1e-5;
  double atol = 1e-8;
  bool equal_nan = false;
  bool evaluate_all_workers = false;
};

/// @brief CheckInputImages (spec/RULES.md §3.8). Tensors matching `regex`. Per tensor (and
/// worker with evaluate_all_workers), over saved steps in order: samples += shape[0]; per-channel
/// sums and counts along axis `channel` (Python-style; all other axes reduced) are added to
/// running totals. Once samples ≥ threshold_samples, at that and every later step: fires when
/// some channel's running mean has |mean| > threshold_mean (value: the largest such |mean|;
/// numpy mean semantics: a NaN in the channel → NaN → no fire, ±Inf → fires) [prop]. Tensors of
/// rank 0, or whose rank has no axis `channel`, or whose channel count changes, are skipped
/// (a changed count restarts the totals).
struct check_input_images_params {
  double threshold_mean = 0.2;
  int64_t threshold_samples = 500;
  std::string regex = ".*hybridsequential0_input_0";
  int64_t channel = 1;
  bool evaluate_all_workers = false;
};

/// @brief Confusion (spec/RULES.md §3.10). Labels: the tensors of collection
/// `labels_collection` if it exists and is non-empty, else the tensor named `labels`
/// (predictions likewise); several tensors are concatenated in name order [prop]. At each saved
/// step where both sides have raw values: they pair when the predictions hold one value per
/// label, or scores [N, C] for N labels — then the predicted class is the argmax over C, and a
/// warning says so (XGBoost's default `multi:softprob` saves such probabilities); any other
/// pair of shapes ends the rule with status Error naming both (issue 16; never a silent skip).
/// Floating predictions within [0, 1] that are not all whole numbers, cast to int, give a
/// warning (they look like probabilities); `prediction_threshold` [ours] reads one value per
/// label as a binary probability: class 1 when p > prediction_threshold, else 0.
/// C[label][prediction] counts of the values cast to int (toward zero) over `category_no`
/// classes — default
/// max(2, trunc(max(max label, max prediction)) + 1), at most stats::max_confusion_classes;
/// values outside [0, category_no) or non-finite are left out. For each column i with
/// Σ_j C[j][i] > 0 (column normalisation [test]): fires when C[i][i]/Σ < min_diag or some
/// C[j][i]/Σ > max_off_diag, j ≠ i. One finding per step (on the first label tensor), for the
/// first failing column; value = that ratio.
struct confusion_params {
  std::optional<int64_t> category_no;
  std::string labels = "labels";
  std::string predictions = "predictions";
  std::string labels_collection = "labels";
  std::string predictions_collection = "predictions";
  double min_diag = 0.9;
  double max_off_diag = 0.1;
  std::optional<double> prediction_threshold;  ///< [ours] binary probabilities: p > t → class 1
  bool evaluate_all_workers = false;
};

/// @brief TreeDepth (spec/RULES.md §3.11). Reads the XGBoost hook's tree tensors at each save of
/// `trees/Node`. depth = the exact depth (edges on the longest root-to-leaf path) from the
/// `trees/ID`, `trees/Yes`, `trees/No` links of the same step and worker [prop; issue 16: XGBoost
/// numbers nodes in creation order, not breadth-first]. Only when those were not saved (or cannot
/// be read) the node-id formula floor(log₂(max id + 1)) [prop: exact for heap-numbered full trees
/// only; the docs' log₂(max id) would flag a full depth-4 tree], max id = the largest finite
/// element, with a warning; each finding's message says which was used. Fires when
/// depth > `depth` (value: depth). Note: with `num_class` > 1 smdebug's hook (1.0.34) saves tree
/// number `step` of the model — at step s the s-th tree (round s / num_class, class
/// s % num_class), not the trees of round s — so the rule sees one class's tree per step.
struct tree_depth_params {
  double depth = 4.0;
  bool evaluate_all_workers = false;
};

/// @brief ClassImbalance (spec/RULES.md §3.12). Labels: tensors matching labels_regex;
/// predictions: tensors matching predictions_regex (several concatenated in name order). At each
/// saved step with both, labels and predictions pair as in Confusion (one value per label, or
/// scores [N, C] with the argmax over C and a warning; with `argmax`, predictions must be rows
/// over the last axis, one per label); shapes that do not pair end the rule with status Error
/// naming both (issue 16). `prediction_threshold` [ours] as in Confusion (not with `argmax`).
/// Per class c: n_c += labels of class c, k_c += those predicted c (class = value cast to int;
/// the argmax index with `argmax`), accumulated over steps. Once Σn_c ≥ samples: fires when
/// max n_c / min n_c > threshold_imbalance over classes with n_c > 0, or some class has
/// 1 − k_c/n_c > threshold_misprediction [doc; observed classes only: prop]. Value: the
/// imbalance ratio when it fires, else the worst misprediction rate. Labels outside
/// [0, stats::max_confusion_classes) or non-finite are not counted.
struct class_imbalance_params {
  double threshold_imbalance = 10.0;
  double threshold_misprediction = 0.7;
  int64_t samples = 500;
  bool argmax = false;
  std::optional<double> prediction_threshold;  ///< [ours] binary probabilities: p > t → class 1
  std::string labels_regex = ".*labels";
  std::string predictions_regex = ".*predictions";
  bool evaluate_all_workers = false;
};

/// @brief Overfit (spec/RULES.md §3.13). Loss tensors: tensor_regex; unset → collection `losses`
/// if it has tensors, else every tensor; one-element tensors only. Per tensor, over its saved
/// TRAIN and EVAL values in step order [prop]: a phase is a run of consecutive saves of one mode;
/// at each EVAL save with global step ≥ start_step, after at least one TRAIN phase:
/// v = mean of the current EVAL phase so far, t = mean of the last TRAIN phase,
/// ratio = (v − t)/t; counter += 1 if ratio > ratio_threshold else 0; fires when
/// counter ≥ patience (value: ratio).
struct overfit_params {
  std::vector<std::string> tensor_regex;
  int64_t start_step = 0;
  int64_t patience = 1;
  double ratio_threshold = 0.1;
  bool evaluate_all_workers = false;
};

/// @brief Overtraining (spec/RULES.md §3.15). Loss tensors: collection `losses` if it has
/// tensors, else every tensor; one-element tensors only. Per tensor and mode (TRAIN, EVAL), on
/// each saved value x [prop]: the first value sets best; later, best − x > delta (absolute)
/// → best = x, counter = 0, else counter += 1. Fires when counter(TRAIN) ≥ patience_train or
/// counter(EVAL) ≥ patience_validation (counts of saved steps; value: the counter).
struct overtraining_params {
  int64_t patience_train = 5;
  int64_t patience_validation = 10;
  double delta = 0.01;
  bool evaluate_all_workers = false;
};

/// @brief PoorWeightInitialization (spec/RULES.md §3.16). Only the first `steps` saved global
/// steps are evaluated. At each, fires on any of [formulas prop]:
///  (a) max_l var(A_l) / min_l var(A_l) > threshold over the activation-input tensors
///      (activation_inputs_regex) at the step — population variance of the finite elements;
///      min 0 with max > 0 counts as exceeding (ratio +Inf); needs two tensors with a variance;
///  (b) min over the `gradients` collection of (p95 − p5) < distribution_range, percentiles of
///      the flattened tensor with numpy's linear interpolation (NaN ranges are skipped);
///  (c) a `losses` tensor (one element) did not decrease (x ≥ previous save, per mode) for
///      `patience` consecutive saved steps.
/// Values: (a) the ratio, (b) the range, (c) the count of non-decreasing saves.
struct poor_weight_initialization_params {
  std::vector<std::string> activation_inputs_regex{".*relu_input"};
  double threshold = 10.0;
  double distribution_range = 0.001;
  int64_t patience = 5;
  int64_t steps = 10;
  bool evaluate_all_workers = false;
};

/// @brief SaturatedActivation (spec/RULES.md §3.17). Selection: collection_names ∪ tensor_regex.
/// A tensor's kind comes from its name (case-insensitive): containing "tanh" → tanh bounds, else
/// containing "sigmoid" → sigmoid bounds, else not judged [prop]. Per tensor at a step (axis 0 =
/// batch): node activity = 100·count(min < x < max along the batch)/batch; a node is saturated
/// when its activity < threshold_inactivity; fires when 100·saturated/nodes > threshold_layer
/// (value: that percentage). The older tuple forms `threshold_tanh="(-9.4999, 9.4999)"` and
/// `threshold_sigmoid="(-23, 16.99999)"` are accepted and override the min/max parameters.
struct saturated_activation_params {
  std::vector<std::string> collection_names;
  std::vector<std::string> tensor_regex{".*tanh_input|.*sigmoid_input"};
  double threshold_tanh_min = -9.4999;
  double threshold_tanh_max = 9.4999;
  double threshold_sigmoid_min = -23.0;
  double threshold_sigmoid_max = 16.99999;
  double threshold_inactivity = 1.0;
  double threshold_layer = 50.0;
  bool evaluate_all_workers = false;
};

/// @brief NLPSequenceRatio (spec/RULES.md §3.18). Per tensor matching tensor_regex at a step, for
/// each token value v_i: pct_i = 100·count(x == v_i)/size; fires when some pct_i >
/// threshold_i (value: the first such pct). Lists pair by position; a shorter threshold list
/// repeats its last value, extra thresholds are ignored [prop]. At most
/// stats::max_counted_values token values; empty tensors are skipped.
struct nlp_sequence_ratio_params {
  std::vector<std::string> tensor_regex{".*embedding0_input_0"};
  std::vector<double> token_values{0.0};
  std::vector<double> token_thresholds_percent{50.0};
  bool evaluate_all_workers = false;
};

/// @brief StalledTrainingRule (spec/RULES.md §3.19): time-based.
/// Live (`rule::on_poll`, called by a watcher after each refresh of the trial): progress = the
/// catalog gained a saved step or an entry since the previous poll (the first poll — the rule's
/// start — counts as progress); fires when now − last progress > threshold seconds while the
/// trial has no end marker; once per stall (it can fire again after progress resumes). The
/// finding's step is the last saved global step (−1 when none), value = the stall in seconds.
/// Offline (`evaluate_step` over a finished trial): each saved step's progress time is the
/// Event.wall_time of its first indexed record (one small read per step; file mtimes are not
/// used because copies of a trial lose them); fires at step s when the gap from the previous
/// saved step exceeds `threshold` (value: the gap). A step whose record cannot be read is
/// skipped. With stop_training_on_fire the finding's message asks for StopTraining with
/// training_job_name_prefix (trialstat itself stops nothing).
struct stalled_training_rule_params {
  int64_t threshold = 1800;
  bool stop_training_on_fire = false;
  std::string training_job_name_prefix;
};

/// @brief FeatureImportanceOverweight (spec/RULES.md §3.20). At each step, the scalar values of
/// every tensor matching tensor_regex (XGBoost's `feature_importance/<type>/<feature>`;
/// one-element tensors only, default worker): fires when Σ of the `nfeatures` largest / Σ of all
/// > threshold (value: that ratio; a zero total → no fire). Σ of all = that top sum + Σ of the
/// others, so nfeatures ≥ the number of features gives exactly 1 (issue 16). The finding names the most important
/// feature's tensor.
struct feature_importance_overweight_params {
  double threshold = 0.8;
  int64_t nfeatures = 3;
  std::string tensor_regex = ".*feature_importance/weight";
  bool evaluate_all_workers = false;
};

/// @brief ReplicaConsistency (trialstat's own rule, issue 27; not in smdebug or spec/RULES.md):
/// data-parallel replicas must agree. At every saved step (of `mode` when set), for every
/// selected tensor, each worker's copy is compared with the reference worker's copy:
///  - values: a = the worker's element, b = the reference's, in float64; an element differs
///    unless |a − b| ≤ atol + rtol·|b| (numpy.isclose with equal_nan: NaN equals NaN in the same
///    place, a NaN against a number differs, −0.0 equals +0.0, ±Inf equals only itself). Fires
///    when any element differs; value = the number of differing elements; the message gives
///    that count, max |a − b| over the pairs whose difference is a number, and how many of the
///    differing elements are a NaN against a number (stats::compute_pairwise, CPU backend: the
///    rule API carries no backend; the values were read once by the run's pipeline with
///    `keep_values`);
///  - dtype or shape different from the reference's: a finding (value NaN), values not compared;
///  - a missing step: a worker that saves selected tensors in this trial but saved none at a
///    step that other workers saved → one finding with tensor "" (value NaN); a worker that
///    saved the step but not a tensor it saves elsewhere → a finding for that tensor.
/// Selection: collection_names ∪ tensor_regex; both unset → collections `weights` and `biases`.
/// Gradients agree only where the trial saved them after the allreduce (averaged): select them
/// with collection_names=gradients. The reference: `reference_worker` (a worker name; one the
/// trial does not have → prepare fails naming the parameter), default the lowest worker name;
/// when the reference did not save a tensor at a step, the lowest-named worker that did stands
/// in (the message says so). Records that could not be read are skipped (the run reports them).
/// Findings per step: missing workers (name order), then tensors in name order, workers in name
/// order. At most `max_findings` findings in all (0 = no limit); past it a warning says so.
struct replica_consistency_params {
  std::vector<std::string> collection_names;
  std::vector<std::string> tensor_regex;
  double rtol = 0.0;   ///< ≥ 0, finite
  double atol = 0.0;   ///< ≥ 0, finite
  std::string reference_worker;  ///< empty: the lowest worker name
  std::optional<trialstat::mode> mode;
  int64_t max_findings = 100;  ///< ≥ 0; 0 = no limit
};

[[nodiscard]] std::unique_ptr<rule> make_vanishing_gradient(const vanishing_gradient_params& p);
[[nodiscard]] std::unique_ptr<rule> make_exploding_tensor(const exploding_tensor_params& p);
[[nodiscard]] std::unique_ptr<rule> make_all_zero(const all_zero_params& p);
[[nodiscard]] std::unique_ptr<rule> make_tensor_variance(const tensor_variance_params& p);
[[nodiscard]] std::unique_ptr<rule> make_weight_update_ratio(const weight_update_ratio_params& p);
[[nodiscard]] std::unique_ptr<rule> make_unchanged_tensor(const unchanged_tensor_params& p);
[[nodiscard]] std::unique_ptr<rule> make_loss_not_decreasing(const loss_not_decreasing_params& p);
[[nodiscard]] std::unique_ptr<rule> make_dead_relu(const dead_relu_params& p);
[[nodiscard]] std::unique_ptr<rule> make_similar_across_runs(const similar_across_runs_params& p);
[[nodiscard]] std::unique_ptr<rule> make_check_input_images(const check_input_images_params& p);
[[nodiscard]] std::unique_ptr<rule> make_confusion(const confusion_params& p);
[[nodiscard]] std::unique_ptr<rule> make_tree_depth(const tree_depth_params& p);
[[nodiscard]] std::unique_ptr<rule> make_class_imbalance(const class_imbalance_params& p);
[[nodiscard]] std::unique_ptr<rule> make_overfit(const overfit_params& p);
[[nodiscard]] std::unique_ptr<rule> make_overtraining(const overtraining_params& p);
[[nodiscard]] std::unique_ptr<rule> make_poor_weight_initialization(
    const poor_weight_initialization_params& p);
[[nodiscard]] std::unique_ptr<rule> make_saturated_activation(const saturated_activation_params& p);
[[nodiscard]] std::unique_ptr<rule> make_nlp_sequence_ratio(const nlp_sequence_ratio_params& p);
[[nodiscard]] std::unique_ptr<rule> make_stalled_training_rule(
    const stalled_training_rule_params& p);
[[nodiscard]] std::unique_ptr<rule> make_feature_importance_overweight(
    const feature_importance_overweight_params& p);
[[nodiscard]] std::unique_ptr<rule> make_replica_consistency(const replica_consistency_params& p);

/// @brief Parse SageMaker string parameters (see parameters.hpp) into each rule's struct.
/// Errors: invalid_argument naming the rule, the parameter and the expected type, for an unknown
/// parameter, an unparsable value or an out-of-range value (e.g. num_steps < 1).
[[nodiscard]] result<vanishing_gradient_params> parse_vanishing_gradient_params(const rule_parameters& p);
[[nodiscard]] result<exploding_tensor_params> parse_exploding_tensor_params(const rule_parameters& p);
[[nodiscard]] result<all_zero_params> parse_all_zero_params(const rule_parameters& p);
[[nodiscard]] result<tensor_variance_params> parse_tensor_variance_params(const rule_parameters& p);
[[nodiscard]] result<weight_update_ratio_params> parse_weight_update_ratio_params(const rule_parameters& p);
[[nodiscard]] result<unchanged_tensor_params> parse_unchanged_tensor_params(const rule_parameters& p);
[[nodiscard]] result<loss_not_decreasing_params> parse_loss_not_decreasing_params(const rule_parameters& p);
[[nodiscard]] result<dead_relu_params> parse_dead_relu_params(const rule_parameters& p);
[[nodiscard]] result<similar_across_runs_params> parse_similar_across_runs_params(const rule_parameters& p);
[[nodiscard]] result<check_input_images_params> parse_check_input_images_params(const rule_parameters& p);
[[nodiscard]] result<confusion_params> parse_confusion_params(const rule_parameters& p);
[[nodiscard]] result<tree_depth_params> parse_tree_depth_params(const rule_parameters& p);
[[nodiscard]] result<class_imbalance_params> parse_class_imbalance_params(const rule_parameters& p);
[[nodiscard]] result<overfit_params> parse_overfit_params(const rule_parameters& p);
[[nodiscard]] result<overtraining_params> parse_overtraining_params(const rule_parameters& p);
[[nodiscard]] result<poor_weight_initialization_params> parse_poor_weight_initialization_params(const rule_parameters& p);
[[nodiscard]] result<saturated_activation_params> parse_saturated_activation_params(const rule_parameters& p);
[[nodiscard]] result<nlp_sequence_ratio_params> parse_nlp_sequence_ratio_params(const rule_parameters& p);
[[nodiscard]] result<stalled_training_rule_params> parse_stalled_training_rule_params(const rule_parameters& p);
[[nodiscard]] result<feature_importance_overweight_params> parse_feature_importance_overweight_params(const rule_parameters& p);
[[nodiscard]] result<replica_consistency_params> parse_replica_consistency_params(const rule_parameters& p);

}  // namespace trialstat::rules

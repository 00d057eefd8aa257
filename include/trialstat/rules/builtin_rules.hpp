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

[[nodiscard]] std::unique_ptr<rule> make_vanishing_gradient(const vanishing_gradient_params& p);
[[nodiscard]] std::unique_ptr<rule> make_exploding_tensor(const exploding_tensor_params& p);
[[nodiscard]] std::unique_ptr<rule> make_all_zero(const all_zero_params& p);
[[nodiscard]] std::unique_ptr<rule> make_tensor_variance(const tensor_variance_params& p);
[[nodiscard]] std::unique_ptr<rule> make_weight_update_ratio(const weight_update_ratio_params& p);
[[nodiscard]] std::unique_ptr<rule> make_unchanged_tensor(const unchanged_tensor_params& p);
[[nodiscard]] std::unique_ptr<rule> make_loss_not_decreasing(const loss_not_decreasing_params& p);
[[nodiscard]] std::unique_ptr<rule> make_dead_relu(const dead_relu_params& p);

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

}  // namespace trialstat::rules

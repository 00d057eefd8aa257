// SPDX-License-Identifier: Apache-2.0
/// @file example_trial.hpp
/// @brief A real multilayer perceptron trained with Eigen (float32) on a synthetic
/// classification task, writing an smdebug trial through `trialstat::writer::trial_writer`
/// exactly as the smdebug PyTorch hook would: same tensor names, collections, save schedule,
/// capture points and step numbering. Used to produce test trials of any size, healthy or with
/// a chosen pathology. Library `trialstat_example_trial`; CLI `trialstat-example-trial`.
///
/// Model: `MLP` with `hidden_layers` fully connected hidden layers of `width` units and an output
/// layer of `classes` logits: fc1 (input_dim→width), fc2..fc<L> (width→width), fc<L+1>
/// (width→classes). Parameters use PyTorch's layout: weight [out, in], bias [out], C order.
/// PyTorch's default init (`U(-1/sqrt(fan_in), 1/sqrt(fan_in))` for weights and biases).
/// ReLU activations, cross-entropy loss (mean over the batch), SGD (PyTorch semantics:
/// v = momentum·v + g, w −= lr·v), with momentum 0.9 for the healthy run (as the golden
/// `healthy_mlp` trial) and plain SGD for the pathologies (as their golden trials).
///
/// Data: Gaussian blobs. K class centres drawn once from N(0, (4/sqrt(D))²) per coordinate
/// (centres ≈ 5.7 noise standard deviations apart), samples = centre + N(0, 1) noise, labels
/// uniform. Training batches are drawn fresh every step (an endless stream, no overfitting);
/// held-out EVAL data is a fixed set of `eval_batches × batch` samples. All randomness comes
/// from `seed` (std::mt19937_64), so a run is reproducible on one platform (the trial's bytes
/// differ only in wall times).
///
/// What is saved (hook semantics, spec/FORMAT.md §1, golden trial README):
///   - TRAIN mode step s is saved when s % save_interval == 0, in this order:
///     `MLP_fc<i>.weight`, `MLP_fc<i>.bias` (i = 1..L+1, captured before the step's update),
///     `relu<i>_output_0` [batch, width] (i = 1..L), the loss (0-d float32), then gradients in
///     backward order `gradient/MLP_fc<L+1>.bias`, `gradient/MLP_fc<L+1>.weight`, ...,
///     `gradient/MLP_fc1.weight` (the step's own gradients).
///   - With `eval_every` > 0, after every `eval_every` TRAIN steps an EVAL phase of
///     `eval_batches` steps runs on the held-out data; every EVAL step saves the ReLU outputs and
///     the loss (EVAL save interval 1). No gradients or parameters in EVAL (like the hook).
///   - The global step counts every step of every mode (TRAIN and EVAL), starting at 0.
///   - Collections (in this order): biases `^(?!gradient).*bias`, all, weights
///     `^(?!gradient).*weight`, gradients `^gradient`, default, losses
///     `[Ll]oss_(?!input).*output`, relu_activations `relu\d+_output_\d+` (as in the golden
///     trials) and relu_output (regex `.*relu_output`, the DeadRelu rule's default, plus the ReLU
///     outputs listed explicitly as a user would add them). Parameters and gradients state TRAIN
///     `save_interval` and `end_step: 0` for the other modes; the rest TRAIN `save_interval`, EVAL 1.
///
/// Workers: with `workers` = N, N data-parallel workers train the same model: each draws its
/// own batches (its own data shard and held-out set), the averaged gradient updates the shared
/// weights, and each writes its own files (`worker_<r>`) with its local activations, loss and
/// gradients and the shared weights; every collections file states `num_workers` = N, and the
/// last worker alone writes `training_job_end.ts`.
///
/// Pathologies:
///   - exploding: MSE loss against one-hot targets (`MSELoss_output_0`) with lr = 2.5 × classes
///     unless `lr` is given (25 for 10 classes, as the golden `exploding` trial): the output bias
///     flips sign and grows ~4× per step, the loss overflows to +Inf and later NaN appears in
///     parameters and gradients (needs roughly 40+ steps).
///   - vanishing: sigmoid activations, at least 8 hidden layers (more if `hidden_layers` says
///     so), weights from N(0, (0.2/sqrt(fan_in))²), zero biases: every layer shrinks the
///     back-propagated gradient ~20×, so early-layer weight gradients have mean |g| far below
///     1e-7. Activation outputs are not saved (as in the golden `vanishing` trial).
///   - dead_relu: every hidden bias is set so that no unit fires on an initial batch
///     (b_j = −max_batch (W h)_j − 0.1, layer by layer), so ≥ 90% of ReLU outputs are exactly 0
///     and, having zero gradient, stay 0.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/status.hpp"

namespace trialstat::example {

/// @brief Which training pathology to induce. `desync` (needs workers >= 2): healthy training,
/// but the last worker skips the optimizer step at TRAIN step steps/2, so from the next saved
/// step on its saved weights and biases are the others' plus that one update (a rank that
/// skipped a step; ReplicaConsistency's pathology).
enum class pathology { none, exploding, vanishing, dead_relu, desync };

/// @brief "none", "exploding", "vanishing", "dead_relu", "desync".
[[nodiscard]] std::string_view pathology_name(pathology p) noexcept;
/// @brief Inverse of `pathology_name`; nullopt for anything else.
[[nodiscard]] std::optional<pathology> parse_pathology(std::string_view name) noexcept;

/// @brief Everything a run needs. Defaults give a small healthy trial (~1 MB).
struct trainer_options {
  std::filesystem::path out;        ///< trial folder; must be empty or absent (see `overwrite`)
  int64_t steps = 100;              ///< TRAIN steps (>= 1)
  int64_t save_interval = 5;        ///< save TRAIN mode steps that are multiples of this (>= 1)
  int64_t width = 32;               ///< hidden units per hidden layer (>= 1)
  int hidden_layers = 2;            ///< number of hidden layers (>= 2)
  int64_t batch = 32;               ///< samples per step per worker (>= 1)
  int64_t input_dim = 64;           ///< D, input features (>= 1)
  int64_t classes = 10;             ///< K, output classes (>= 2)
  std::optional<double> lr;         ///< SGD learning rate; default 0.05 with momentum, 0.1 for
                                    ///< vanishing/dead_relu, 2.5 × classes for exploding
  std::optional<double> momentum;   ///< SGD momentum in [0, 1); default 0.9 (pathologies: 0)
  uint64_t seed = 0;                ///< all randomness (data, init)
  int workers = 1;                  ///< data-parallel workers, each writing its own files (>= 1)
  int64_t eval_every = 0;           ///< EVAL phase after every this many TRAIN steps; 0 = never
  int64_t eval_batches = 4;         ///< EVAL steps per phase (>= 1)
  pathology kind = pathology::none;
  /// When set, `steps` is replaced by the number of TRAIN steps that makes the trial about this
  /// many bytes (estimated from the exact record sizes; at least 1 step).
  std::optional<uint64_t> target_bytes;
  bool overwrite = false;           ///< delete an existing `out` folder first
  /// Threads for Eigen's matrix products (OpenMP builds): 1 by default (fastest on a shared
  /// machine, where spinning OpenMP threads compete); 0 = all cores.
  int threads = 1;
  bool write_end_marker = true;     ///< write `training_job_end.ts` when done
};

/// @brief What a run did.
struct trainer_summary {
  std::filesystem::path root;
  int64_t train_steps = 0;          ///< TRAIN steps run
  int64_t eval_steps = 0;           ///< EVAL steps run (all phases)
  int64_t global_steps = 0;         ///< train_steps + eval_steps
  int64_t saved_steps = 0;          ///< global steps with files (per worker)
  int workers = 0;
  int hidden_layers = 0;            ///< as trained (vanishing may raise it)
  uint64_t files = 0;               ///< files written, all workers
  uint64_t bytes = 0;               ///< their total size
  uint64_t tensor_records = 0;      ///< tensor records written, all workers
  double seconds = 0.0;             ///< wall-clock duration of the run
  std::vector<float> train_loss;    ///< worker 0's loss at every TRAIN step
  std::vector<float> eval_loss;     ///< worker 0's loss at every EVAL step
};

/// @brief Train and write the trial.
/// @return the summary; errors: invalid_argument (an option out of range, `out` not empty
///   without `overwrite`), io_error and others from the trial writer (naming the file).
/// Synchronous; uses Eigen (`threads` threads when built with OpenMP).
[[nodiscard]] result<trainer_summary> run_example_trial(const trainer_options& options);

/// @brief Bytes one saved TRAIN step and one EVAL step add per worker (exact record sizes plus
/// index file estimate), for planning sizes. Errors: invalid_argument as `run_example_trial`.
struct step_size_estimate {
  uint64_t train_save_bytes = 0;
  uint64_t eval_step_bytes = 0;
};
[[nodiscard]] result<step_size_estimate> estimate_step_bytes(const trainer_options& options);

/// @brief One line: "example-trial: <root>: pathology P, T TRAIN + E EVAL steps (G global, S
/// saved), W worker(s), F files, B bytes (X MiB), Ns".
[[nodiscard]] std::string format_summary(const trainer_summary& summary, pathology kind);

}  // namespace trialstat::example

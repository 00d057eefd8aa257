// SPDX-License-Identifier: Apache-2.0
// The example-trial trainer (tools/example_trial): each pathology at tiny sizes gives a trial
// whose catalog lists the expected tensors, steps and collections, and whose decoded values
// show the pathology (loss falls; loss overflows; early gradients vanish; ReLUs die). Also the
// hook semantics: weights captured before the update, gradients of the same step, global step
// numbering across TRAIN/EVAL, several workers.
#include <gtest/gtest.h>

#if TRIALSTAT_HAS_EXAMPLE_TRIAL

#include <cmath>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tests/support/shared_trials.hpp"
#include "tools/example_trial/example_trial.hpp"
#include "tools/example_trial/example_trial_cli.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/decode/indexed_record.hpp"
#include "trialstat/trial/catalog.hpp"

namespace ex = trialstat::example;
namespace fs = std::filesystem;
using trialstat::mode;
using trialstat::trial::catalog;

namespace {

ex::trainer_options tiny(const std::string& label, ex::pathology kind) {
  ex::trainer_options o;
  o.out = trialstat::testing::make_scratch_dir("example_" + label);
  o.kind = kind;
  o.steps = 60;
  o.save_interval = 5;
  o.width = 16;
  o.hidden_layers = 2;
  o.batch = 16;
  o.input_dim = 8;
  o.classes = 4;
  o.seed = 7;
  return o;
}

// Decoded float32 values of (tensor, global step, worker), via the catalog's byte ranges.
std::vector<float> values(const catalog& c, std::string_view tensor, int64_t step,
                          std::string_view worker = "worker_0") {
  const auto id = c.find_tensor(tensor);
  const auto w = c.find_worker(worker);
  EXPECT_TRUE(id && w) << tensor;
  if (!id || !w) return {};
  const auto* entry = c.find_entry(*id, step, *w);
  EXPECT_TRUE(entry != nullptr && entry->raw) << tensor << " @ " << step;
  if (entry == nullptr || !entry->raw) return {};
  auto file = c.source().open(c.event_file(entry->raw->event_file).string());
  EXPECT_TRUE(file.has_value());
  if (!file) return {};
  trialstat::decode::record_read_buffers buffers;
  trialstat::decode::event_record rec;
  const auto s = trialstat::decode::read_tensor_record(
      **file, {entry->raw->start_bytes, entry->raw->length_bytes}, buffers, rec);
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(rec.type, trialstat::dtype::float32);
  std::vector<float> out(static_cast<std::size_t>(rec.num_elements));
  if (s.ok() && rec.content.size() == out.size() * 4) std::memcpy(out.data(), rec.content.data(), rec.content.size());
  return out;
}

long double mean_abs(const std::vector<float>& v) {
  long double s = 0;
  for (float x : v) s += std::fabs(static_cast<long double>(x));
  return v.empty() ? 0 : s / static_cast<long double>(v.size());
}

std::set<std::string> names_of(const catalog& c) {
  return {c.tensor_names().begin(), c.tensor_names().end()};
}

std::set<std::string> expected_names(int hidden, bool activations, const std::string& loss) {
  std::set<std::string> n = {loss};
  for (int i = 1; i <= hidden + 1; ++i) {
    for (const char* p : {"weight", "bias"}) {
      n.insert("MLP_fc" + std::to_string(i) + "." + p);
      n.insert("gradient/MLP_fc" + std::to_string(i) + "." + p);
    }
  }
  if (activations) {
    for (int i = 1; i <= hidden; ++i) n.insert("relu" + std::to_string(i) + "_output_0");
  }
  return n;
}

std::vector<int64_t> range(int64_t begin, int64_t end, int64_t stride) {
  std::vector<int64_t> out;
  for (int64_t s = begin; s < end; s += stride) out.push_back(s);
  return out;
}

catalog open_catalog(const fs::path& root) {
  auto c = catalog::open(root);
  EXPECT_TRUE(c.has_value()) << c.error_status().to_string();
  EXPECT_TRUE(c->warnings().empty()) << c->warnings()[0].problem.to_string();
  return std::move(c).value();
}

}  // namespace

TEST(ExampleTrial, HealthyRunHasHookLayoutAndLearns) {
  auto o = tiny("none", ex::pathology::none);
  o.steps = 200;
  o.eval_every = 50;
  o.eval_batches = 4;
  auto s = ex::run_example_trial(o);
  ASSERT_TRUE(s.has_value()) << s.error_status().to_string();
  EXPECT_EQ(s->train_steps, 200);
  EXPECT_EQ(s->eval_steps, 16);
  EXPECT_EQ(s->global_steps, 216);
  EXPECT_EQ(s->saved_steps, 40 + 16);

  const auto c = open_catalog(o.out);
  EXPECT_EQ(names_of(c), expected_names(2, true, "CrossEntropyLoss_output_0"));
  EXPECT_EQ(c.steps(mode::train), range(0, 200, 5));
  EXPECT_EQ(c.steps(mode::eval), range(0, 16, 1));
  EXPECT_EQ(c.num_workers(), 1);
  EXPECT_TRUE(c.training_ended());
  // Global steps count every step: TRAIN 0..49 are global 0..49, then EVAL 0..3 = global
  // 50..53, so TRAIN mode step 50 is global 54 (FORMAT §1).
  EXPECT_EQ(c.global_step(mode::train, 45), 45);
  EXPECT_EQ(c.global_step(mode::eval, 0), 50);
  EXPECT_EQ(c.global_step(mode::train, 50), 54);
  EXPECT_EQ(c.global_step(mode::eval, 15), 215);
  // Parameters and gradients are TRAIN only; loss and activations in both modes.
  const auto grad = *c.find_tensor("gradient/MLP_fc1.weight");
  EXPECT_EQ(c.tensor_steps(grad).size(), 40u);
  EXPECT_EQ(c.tensor_steps(*c.find_tensor("relu2_output_0")).size(), 56u);

  // Collections as the hook states them.
  std::vector<std::string> collection_names;
  for (const auto& col : c.collections()) collection_names.push_back(col.name);
  EXPECT_EQ(collection_names, (std::vector<std::string>{"biases", "all", "weights", "gradients",
                                                        "default", "losses", "relu_activations",
                                                        "relu_output"}));
  const auto id = [&](const char* n) { return *c.find_tensor(n); };
  EXPECT_TRUE(c.in_collection(id("MLP_fc2.weight"), "weights"));
  EXPECT_FALSE(c.in_collection(id("gradient/MLP_fc2.weight"), "weights"));
  EXPECT_TRUE(c.in_collection(id("gradient/MLP_fc2.weight"), "gradients"));
  EXPECT_TRUE(c.in_collection(id("MLP_fc3.bias"), "biases"));
  EXPECT_TRUE(c.in_collection(id("CrossEntropyLoss_output_0"), "losses"));
  EXPECT_TRUE(c.in_collection(id("relu1_output_0"), "relu_activations"));
  EXPECT_TRUE(c.in_collection(id("relu1_output_0"), "relu_output"));
  EXPECT_EQ(c.find_collection("weights")->tensor_names,
            (std::vector<std::string>{"MLP_fc1.weight", "MLP_fc2.weight", "MLP_fc3.weight"}));

  // Shapes in PyTorch layout.
  EXPECT_EQ(values(c, "MLP_fc1.weight", 0).size(), 16u * 8u);
  EXPECT_EQ(values(c, "relu1_output_0", 0).size(), 16u * 16u);
  EXPECT_EQ(values(c, "CrossEntropyLoss_output_0", 0).size(), 1u);

  // It learns: the loss starts near ln 4 and the later losses are far lower.
  const auto train_steps = c.steps(mode::train);
  const float first = values(c, "CrossEntropyLoss_output_0", 0)[0];
  EXPECT_NEAR(first, std::log(4.f), 0.35f);
  long double late = 0;
  int n = 0;
  for (std::size_t i = train_steps.size() - 10; i < train_steps.size(); ++i) {
    late += values(c, "CrossEntropyLoss_output_0", *c.global_step(mode::train, train_steps[i]))[0];
    ++n;
  }
  EXPECT_LT(late / n, 0.5L * first) << "seed " << o.seed;
  long double eval_first = 0, eval_last = 0;
  for (int e = 0; e < 4; ++e) {
    eval_first += values(c, "CrossEntropyLoss_output_0", *c.global_step(mode::eval, e))[0];
    eval_last += values(c, "CrossEntropyLoss_output_0", *c.global_step(mode::eval, 12 + e))[0];
  }
  EXPECT_LT(eval_last, eval_first) << "seed " << o.seed;
  // ReLUs are alive (contrast with dead_relu).
  std::size_t zeros = 0, total = 0;
  for (float x : values(c, "relu1_output_0", *c.global_step(mode::train, 100))) {
    zeros += x == 0.f;
    ++total;
  }
  EXPECT_LT(static_cast<double>(zeros) / static_cast<double>(total), 0.9);
  fs::remove_all(o.out);
}

TEST(ExampleTrial, WeightsBeforeUpdateAndSameStepGradients) {
  auto o = tiny("sgd", ex::pathology::none);
  o.steps = 6;
  o.save_interval = 1;
  o.momentum = 0.0;
  o.lr = 0.05;
  auto s = ex::run_example_trial(o);
  ASSERT_TRUE(s.has_value()) << s.error_status().to_string();
  const auto c = open_catalog(o.out);
  // Plain SGD saved every step: W[t+1] = W[t] - lr * gradient[t] (float32 rounding).
  for (int64_t t = 0; t + 1 < 6; ++t) {
    for (const char* p : {"MLP_fc1.weight", "MLP_fc2.bias", "MLP_fc3.weight"}) {
      const auto w0 = values(c, p, t);
      const auto w1 = values(c, p, t + 1);
      const auto g = values(c, std::string("gradient/") + p, t);
      ASSERT_EQ(w0.size(), g.size());
      ASSERT_EQ(w1.size(), g.size());
      long double max_g = 0;
      for (std::size_t i = 0; i < g.size(); ++i) {
        EXPECT_NEAR(w1[i], w0[i] - 0.05f * g[i], 1e-6f + 1e-6f * std::fabs(w0[i])) << p << " step " << t;
        max_g = std::max<long double>(max_g, std::fabs(g[i]));
      }
      EXPECT_GT(max_g, 0) << p;  // real gradients, not zeros
    }
  }
  fs::remove_all(o.out);
}

TEST(ExampleTrial, ExplodingBecomesNonFinite) {
  auto o = tiny("exploding", ex::pathology::exploding);
  o.save_interval = 1;
  auto s = ex::run_example_trial(o);
  ASSERT_TRUE(s.has_value()) << s.error_status().to_string();
  const auto c = open_catalog(o.out);
  EXPECT_EQ(names_of(c), expected_names(2, true, "MSELoss_output_0"));
  ASSERT_EQ(c.steps(mode::train), range(0, 60, 1));
  const float first = values(c, "MSELoss_output_0", 0)[0];
  EXPECT_TRUE(std::isfinite(first));
  int first_non_finite = -1;
  for (int64_t t = 0; t < 60; ++t) {
    if (!std::isfinite(values(c, "MSELoss_output_0", t)[0])) {
      first_non_finite = static_cast<int>(t);
      break;
    }
  }
  EXPECT_GT(first_non_finite, 0) << "seed " << o.seed;
  // Before overflowing the loss grows by orders of magnitude.
  if (first_non_finite > 2) {
    EXPECT_GT(values(c, "MSELoss_output_0", first_non_finite - 1)[0], 1e6f * first);
  }
  // NaN reaches the parameters by the end.
  bool nan_in_weights = false;
  for (float x : values(c, "MLP_fc3.bias", 59)) nan_in_weights |= std::isnan(x);
  for (float x : values(c, "MLP_fc3.weight", 59)) nan_in_weights |= std::isnan(x);
  EXPECT_TRUE(nan_in_weights);
  fs::remove_all(o.out);
}

TEST(ExampleTrial, VanishingGradientsInEarlyLayers) {
  auto o = tiny("vanishing", ex::pathology::vanishing);
  o.steps = 20;
  o.save_interval = 2;
  auto s = ex::run_example_trial(o);
  ASSERT_TRUE(s.has_value()) << s.error_status().to_string();
  ASSERT_GE(s->hidden_layers, 8);
  const int hidden = s->hidden_layers;
  const auto c = open_catalog(o.out);
  // No activation outputs, as in the golden vanishing trial.
  EXPECT_EQ(names_of(c), expected_names(hidden, false, "CrossEntropyLoss_output_0"));
  EXPECT_EQ(c.find_collection("relu_activations"), nullptr);
  for (int64_t step : c.steps(mode::train)) {
    const auto first = mean_abs(values(c, "gradient/MLP_fc1.weight", step));
    const auto last = mean_abs(values(c, "gradient/MLP_fc" + std::to_string(hidden + 1) + ".weight", step));
    EXPECT_LT(first, 1e-7L) << "step " << step << " seed " << o.seed;
    EXPECT_GT(first, 0.0L) << "step " << step;  // tiny, not zero
    EXPECT_GT(last, 1e-4L) << "step " << step;
    // Monotone shrinking towards the input.
    long double previous = last;
    for (int l = hidden; l >= 1; --l) {
      const auto g = mean_abs(values(c, "gradient/MLP_fc" + std::to_string(l) + ".weight", step));
      EXPECT_LT(g, previous) << "layer " << l << " step " << step;
      previous = g;
    }
  }
  fs::remove_all(o.out);
}

TEST(ExampleTrial, DeadReluOutputsAreMostlyZero) {
  auto o = tiny("dead_relu", ex::pathology::dead_relu);
  o.eval_every = 20;
  o.eval_batches = 2;
  auto s = ex::run_example_trial(o);
  ASSERT_TRUE(s.has_value()) << s.error_status().to_string();
  const auto c = open_catalog(o.out);
  EXPECT_EQ(names_of(c), expected_names(2, true, "CrossEntropyLoss_output_0"));
  std::size_t checked = 0;
  for (const char* name : {"relu1_output_0", "relu2_output_0"}) {
    for (int64_t step : c.tensor_steps(*c.find_tensor(name))) {
      const auto v = values(c, name, step);
      std::size_t zeros = 0;
      for (float x : v) zeros += x == 0.f;
      EXPECT_GE(static_cast<double>(zeros), 0.9 * static_cast<double>(v.size()))
          << name << " step " << step << " seed " << o.seed;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2u * (12 + 6));  // 12 TRAIN saves + 3 EVAL phases x 2 steps, per ReLU
  fs::remove_all(o.out);
}

TEST(ExampleTrial, SeveralWorkersShareWeightsNotGradients) {
  auto o = tiny("workers", ex::pathology::none);
  o.steps = 10;
  o.workers = 3;
  o.eval_every = 5;
  o.eval_batches = 1;
  auto s = ex::run_example_trial(o);
  ASSERT_TRUE(s.has_value()) << s.error_status().to_string();
  const auto c = open_catalog(o.out);
  EXPECT_EQ(c.num_workers(), 3);
  ASSERT_EQ(c.workers().size(), 3u);
  for (const auto& si : c.step_infos()) EXPECT_EQ(si.workers.size(), 3u) << si.step;
  EXPECT_EQ(c.last_complete_step(), c.step_infos().back().step);
  for (int f = 0; f < 3; ++f) {
    EXPECT_TRUE(fs::exists(o.out / ("collections/000000000/worker_" + std::to_string(f) +
                                    "_collections.json")));
  }
  const int64_t step = *c.global_step(mode::train, 5);
  EXPECT_EQ(values(c, "MLP_fc2.weight", step, "worker_0"), values(c, "MLP_fc2.weight", step, "worker_2"));
  EXPECT_NE(values(c, "gradient/MLP_fc2.weight", step, "worker_0"),
            values(c, "gradient/MLP_fc2.weight", step, "worker_1"));
  EXPECT_NE(values(c, "relu1_output_0", step, "worker_0"), values(c, "relu1_output_0", step, "worker_1"));
  fs::remove_all(o.out);
}

TEST(ExampleTrial, TargetBytesPicksSteps) {
  auto o = tiny("target", ex::pathology::none);
  o.target_bytes = 2u << 20;
  auto s = ex::run_example_trial(o);
  ASSERT_TRUE(s.has_value()) << s.error_status().to_string();
  EXPECT_GT(s->train_steps, 60);
  uint64_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(o.out)) {
    if (e.is_regular_file()) bytes += e.file_size();
  }
  EXPECT_EQ(bytes, s->bytes);
  EXPECT_NEAR(static_cast<double>(bytes), 2.0 * (1 << 20), 0.15 * 2.0 * (1 << 20));
  fs::remove_all(o.out);
}

TEST(ExampleTrial, RejectsBadOptions) {
  auto o = tiny("bad", ex::pathology::none);
  auto code = [](ex::trainer_options x) { return ex::run_example_trial(x).error_status().code(); };
  auto with = [&](auto f) {
    auto x = o;
    f(x);
    return code(x);
  };
  using trialstat::error_code;
  EXPECT_EQ(with([](auto& x) { x.hidden_layers = 1; }), error_code::invalid_argument);
  EXPECT_EQ(with([](auto& x) { x.steps = 0; }), error_code::invalid_argument);
  EXPECT_EQ(with([](auto& x) { x.classes = 1; }), error_code::invalid_argument);
  EXPECT_EQ(with([](auto& x) { x.lr = -1.0; }), error_code::invalid_argument);
  EXPECT_EQ(with([](auto& x) { x.momentum = 1.0; }), error_code::invalid_argument);
  EXPECT_EQ(with([](auto& x) { x.workers = 0; }), error_code::invalid_argument);
  EXPECT_EQ(with([](auto& x) { x.out.clear(); }), error_code::invalid_argument);
  // A non-empty folder is refused unless overwrite is set.
  std::ofstream(o.out / "something") << "x";
  EXPECT_EQ(code(o), error_code::invalid_argument);
  o.overwrite = true;
  o.steps = 3;
  EXPECT_TRUE(ex::run_example_trial(o).has_value());
  EXPECT_FALSE(fs::exists(o.out / "something"));
  fs::remove_all(o.out);
}

TEST(ExampleTrial, CliFlagsAndSizes) {
  EXPECT_EQ(*ex::parse_size_bytes("123"), 123u);
  EXPECT_EQ(*ex::parse_size_bytes("64K"), 64u << 10);
  EXPECT_EQ(*ex::parse_size_bytes("500M"), 500ull << 20);
  EXPECT_EQ(*ex::parse_size_bytes("2GiB"), 2ull << 30);
  EXPECT_FALSE(ex::parse_size_bytes("2X").has_value());
  EXPECT_FALSE(ex::parse_size_bytes("big").has_value());
  CLI::App app;
  ex::cli_flags flags;
  ex::add_example_trial_flags(app, flags);
  std::vector<std::string> args = {"--no-end-marker", "--target-bytes", "1G", "--lr",        "0.5",
                                   "--pathology",     "vanishing",      "--layers", "12",
                                   "--width",         "4096",           "--out",    "/tmp/x"};
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse
  app.parse(args);
  auto o = ex::options_from_flags(flags);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->kind, ex::pathology::vanishing);
  EXPECT_EQ(o->hidden_layers, 12);
  EXPECT_EQ(o->width, 4096);
  EXPECT_EQ(*o->lr, 0.5);
  EXPECT_FALSE(o->momentum.has_value());
  EXPECT_EQ(*o->target_bytes, 1ull << 30);
  EXPECT_FALSE(o->write_end_marker);
  EXPECT_EQ(o->out, fs::path("/tmp/x"));
}

#else

TEST(ExampleTrial, NotBuilt) { GTEST_SKIP() << "built without TRIALSTAT_BUILD_TOOLS"; }

#endif

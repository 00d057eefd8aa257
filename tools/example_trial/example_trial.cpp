// SPDX-License-Identifier: Apache-2.0
#include "tools/example_trial/example_trial.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <new>
#include <random>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "trialstat/writer/trial_writer.hpp"

namespace trialstat::example {
namespace {

using mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using vec = Eigen::VectorXf;
namespace tw = trialstat::writer;

constexpr int vanishing_min_hidden_layers = 8;

struct layer {
  mat w;   // [out, in] (PyTorch layout)
  vec b;   // [out]
  mat dw;  // this worker's gradient
  vec db;
  mat dw_sum;  // sum over workers (only with several workers)
  vec db_sum;
  mat vw;      // momentum buffers (only with momentum)
  vec vb;
  mat lag_w;   // desync: the update the last worker skipped (its copy = w + lag_w); empty before
  vec lag_b;
};

struct tensor_names {
  std::vector<std::string> weight, bias, grad_weight, grad_bias, activation;
  std::string loss;
};

struct config {
  trainer_options o;
  int hidden = 2;
  double lr = 0.1;
  double momentum = 0.9;
  bool sigmoid = false;  // vanishing
  bool mse = false;      // exploding
  bool save_activations = true;
};

struct worker_state {
  std::mt19937_64 rng;
  mat x;                   // [batch, input_dim]
  std::vector<int> y;
  std::vector<mat> z;      // pre-activations per layer [batch, out]
  std::vector<mat> h;      // activations of hidden layers [batch, width]
  mat dz;                  // scratch
  mat eval_x;              // [eval_batches * batch, input_dim]
  std::vector<int> eval_y;
  std::optional<tw::trial_writer> writer;
};

result<config> make_config(const trainer_options& o) {
  auto bad = [](std::string what) { return status(error_code::invalid_argument, "example trial: " + what); };
  if (o.out.empty()) return bad("no output folder (--out)");
  if (o.steps < 1) return bad(fmt::format("steps must be >= 1, got {}", o.steps));
  if (o.save_interval < 1) return bad(fmt::format("save interval must be >= 1, got {}", o.save_interval));
  if (o.width < 1) return bad(fmt::format("width must be >= 1, got {}", o.width));
  if (o.hidden_layers < 2) return bad(fmt::format("layers must be >= 2, got {}", o.hidden_layers));
  if (o.batch < 1) return bad(fmt::format("batch must be >= 1, got {}", o.batch));
  if (o.input_dim < 1) return bad(fmt::format("input dim must be >= 1, got {}", o.input_dim));
  if (o.classes < 2) return bad(fmt::format("classes must be >= 2, got {}", o.classes));
  if (o.workers < 1 || o.workers > 4096) return bad(fmt::format("workers must be 1..4096, got {}", o.workers));
  if (o.eval_every < 0) return bad(fmt::format("eval-every must be >= 0, got {}", o.eval_every));
  if (o.kind == pathology::desync && o.workers < 2) {
    return bad(fmt::format("pathology desync needs at least 2 workers, got {}", o.workers));
  }
  if (o.eval_batches < 1) return bad(fmt::format("eval batches must be >= 1, got {}", o.eval_batches));
  if (o.lr && !(std::isfinite(*o.lr) && *o.lr > 0)) return bad(fmt::format("lr must be finite and > 0, got {}", *o.lr));
  if (o.threads < 0) return bad(fmt::format("threads must be >= 0, got {}", o.threads));
  if (o.momentum && !(*o.momentum >= 0 && *o.momentum < 1)) {
    return bad(fmt::format("momentum must be in [0, 1), got {}", *o.momentum));
  }
  const int64_t limit = int64_t{1} << 31;  // Eigen indices and record sizes stay sane
  if (o.width * std::max(o.width, o.input_dim) >= limit || o.batch * std::max(o.width, o.input_dim) >= limit) {
    return bad("width/batch/input dim too large (a matrix would exceed 2^31 elements)");
  }
  config c;
  c.o = o;
  c.hidden = o.hidden_layers;
  const bool healthy = o.kind == pathology::none || o.kind == pathology::desync;
  c.lr = o.lr.value_or(healthy ? 0.05 : 0.1);
  c.momentum = o.momentum.value_or(healthy ? 0.9 : 0.0);
  switch (o.kind) {
    case pathology::none:
    case pathology::desync:
    case pathology::dead_relu:
      break;
    case pathology::exploding:
      c.mse = true;
      c.lr = o.lr.value_or(2.5 * static_cast<double>(o.classes));
      break;
    case pathology::vanishing:
      c.sigmoid = true;
      c.save_activations = false;
      c.hidden = std::max(o.hidden_layers, vanishing_min_hidden_layers);
      break;
  }
  return c;
}

tensor_names make_names(const config& c) {
  tensor_names n;
  for (int i = 1; i <= c.hidden + 1; ++i) {
    n.weight.push_back(fmt::format("MLP_fc{}.weight", i));
    n.bias.push_back(fmt::format("MLP_fc{}.bias", i));
    n.grad_weight.push_back(fmt::format("gradient/MLP_fc{}.weight", i));
    n.grad_bias.push_back(fmt::format("gradient/MLP_fc{}.bias", i));
  }
  for (int i = 1; i <= c.hidden; ++i) n.activation.push_back(fmt::format("relu{}_output_0", i));
  n.loss = c.mse ? "MSELoss_output_0" : "CrossEntropyLoss_output_0";
  return n;
}

std::vector<tw::collection_spec> make_collections(const config& c, const tensor_names& names) {
  const int64_t n = c.o.save_interval;
  // Parameters and gradients: TRAIN only (the other modes end at step 0), as the golden
  // healthy_mlp trial states it; everything else: TRAIN every n, EVAL every step.
  std::array<std::optional<tw::save_config_spec>, 4> train_only;
  train_only[0] = tw::save_config_spec{n, {}, 0, std::nullopt};
  for (int m = 1; m < 4; ++m) train_only[m] = tw::save_config_spec{1, {}, 0, 0};
  std::array<std::optional<tw::save_config_spec>, 4> train_eval;
  train_eval[0] = tw::save_config_spec{n, {}, 0, std::nullopt};
  train_eval[1] = tw::save_config_spec{1, {}, 0, std::nullopt};
  auto make = [](std::string name, std::vector<std::string> rx,
                 const std::array<std::optional<tw::save_config_spec>, 4>& sc, bool hist) {
    tw::collection_spec s;
    s.name = std::move(name);
    s.include_regex = std::move(rx);
    s.save_configs = sc;
    s.save_histogram = hist;
    return s;
  };
  std::vector<tw::collection_spec> out = {
      make("biases", {"^(?!gradient).*bias"}, train_only, true),
      make("all", {}, train_eval, true),
      make("weights", {"^(?!gradient).*weight"}, train_only, true),
      make("gradients", {"^gradient"}, train_only, true),
      make("default", {}, train_eval, true),
      make("losses", {"[Ll]oss_(?!input).*output"}, train_eval, false)};
  if (c.save_activations) {
    out.push_back(make("relu_activations", {R"(relu\d+_output_\d+)"}, train_eval, true));
    auto relu_output = make("relu_output", {".*relu_output"}, train_eval, true);
    relu_output.tensor_names = names.activation;
    out.push_back(std::move(relu_output));
  }
  return out;
}

// Gaussian blobs: K centres, unit noise.
struct blobs {
  mat centres;  // [K, D]

  blobs(int64_t k, int64_t d, std::mt19937_64& rng) : centres(k, d) {
    std::normal_distribution<float> nd(0.f, 4.f / std::sqrt(static_cast<float>(d)));
    for (Eigen::Index i = 0; i < centres.size(); ++i) centres.data()[i] = nd(rng);
  }
  void sample(std::mt19937_64& rng, mat& x, std::vector<int>& y, int64_t rows) const {
    std::uniform_int_distribution<int> label(0, static_cast<int>(centres.rows()) - 1);
    std::normal_distribution<float> noise(0.f, 1.f);
    x.resize(rows, centres.cols());
    y.resize(static_cast<std::size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      const int c = label(rng);
      y[static_cast<std::size_t>(r)] = c;
      for (Eigen::Index j = 0; j < x.cols(); ++j) x(r, j) = centres(c, j) + noise(rng);
    }
  }
};

std::vector<layer> init_layers(const config& c, std::mt19937_64& rng) {
  std::vector<int64_t> sizes = {c.o.input_dim};
  for (int i = 0; i < c.hidden; ++i) sizes.push_back(c.o.width);
  sizes.push_back(c.o.classes);
  std::vector<layer> layers(static_cast<std::size_t>(c.hidden + 1));
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const int64_t in = sizes[l];
    const int64_t out = sizes[l + 1];
    auto& L = layers[l];
    L.w.resize(out, in);
    L.b.resize(out);
    if (c.sigmoid) {
      std::normal_distribution<float> nd(0.f, 0.2f / std::sqrt(static_cast<float>(in)));
      for (Eigen::Index i = 0; i < L.w.size(); ++i) L.w.data()[i] = nd(rng);
      L.b.setZero();
    } else {
      const float bound = 1.f / std::sqrt(static_cast<float>(in));
      std::uniform_real_distribution<float> ud(-bound, bound);
      for (Eigen::Index i = 0; i < L.w.size(); ++i) L.w.data()[i] = ud(rng);
      for (Eigen::Index i = 0; i < L.b.size(); ++i) L.b[i] = ud(rng);
    }
    L.dw.setZero(out, in);
    L.db.setZero(out);
    if (c.o.workers > 1) {
      L.dw_sum.setZero(out, in);
      L.db_sum.setZero(out);
    }
    if (c.momentum > 0) {
      L.vw.setZero(out, in);
      L.vb.setZero(out);
    }
  }
  return layers;
}

// dead_relu: bias each hidden unit below the largest pre-activation it sees on an initial
// batch, layer by layer, so nothing fires.
void kill_relus(std::vector<layer>& layers, const config& c, const blobs& data, std::mt19937_64& rng) {
  mat x;
  std::vector<int> y;
  data.sample(rng, x, y, 256);
  mat h = x;
  for (int l = 0; l < c.hidden; ++l) {
    auto& L = layers[static_cast<std::size_t>(l)];
    mat z = h * L.w.transpose();
    L.b = -(z.colwise().maxCoeff().transpose().array() + 0.1f).matrix();
    z.rowwise() += L.b.transpose();
    h = z.cwiseMax(0.f);
  }
}

// Forward pass; returns the mean loss and leaves dLoss/dlogits in ws.dz.
float forward_backward(std::vector<layer>& layers, const config& c, worker_state& ws, const mat& x,
                       const std::vector<int>& y, bool backward) {
  const std::size_t n_layers = layers.size();
  ws.z.resize(n_layers);
  ws.h.resize(n_layers - 1);
  for (std::size_t l = 0; l < n_layers; ++l) {
    const mat& in = l == 0 ? x : ws.h[l - 1];
    ws.z[l].noalias() = in * layers[l].w.transpose();
    ws.z[l].rowwise() += layers[l].b.transpose();
    if (l + 1 < n_layers) {
      if (c.sigmoid) {
        ws.h[l] = (1.f / (1.f + (-ws.z[l].array()).exp())).matrix();
      } else {
        ws.h[l] = ws.z[l].cwiseMax(0.f);
      }
    }
  }
  const mat& logits = ws.z.back();
  const auto rows = logits.rows();
  const auto k = logits.cols();
  ws.dz.resize(rows, k);
  double loss = 0.0;
  if (c.mse) {
    const float scale = 1.f / static_cast<float>(rows * k);
    ws.dz = logits;
    for (Eigen::Index r = 0; r < rows; ++r) ws.dz(r, y[static_cast<std::size_t>(r)]) -= 1.f;
    loss = static_cast<double>(ws.dz.squaredNorm() * scale);  // float32 like torch
    ws.dz *= 2.f * scale;
  } else {
    const float inv_rows = 1.f / static_cast<float>(rows);
    float total = 0.f;
    for (Eigen::Index r = 0; r < rows; ++r) {
      const float m = logits.row(r).maxCoeff();
      const float lse = m + std::log((logits.row(r).array() - m).exp().sum());
      total += lse - logits(r, y[static_cast<std::size_t>(r)]);
      ws.dz.row(r) = ((logits.row(r).array() - lse).exp() * inv_rows).matrix();
      ws.dz(r, y[static_cast<std::size_t>(r)]) -= inv_rows;
    }
    loss = static_cast<double>(total * inv_rows);
  }
  if (!backward) return static_cast<float>(loss);
  mat dz = ws.dz;
  for (std::size_t l = n_layers; l-- > 0;) {
    const mat& in = l == 0 ? x : ws.h[l - 1];
    layers[l].dw.noalias() = dz.transpose() * in;
    layers[l].db = dz.colwise().sum().transpose();
    if (l == 0) break;
    mat dh = dz * layers[l].w;
    if (c.sigmoid) {
      const auto& s = ws.h[l - 1].array();
      dz = (dh.array() * s * (1.f - s)).matrix();
    } else {
      dz = (dh.array() * (ws.z[l - 1].array() > 0.f).cast<float>()).matrix();
    }
  }
  return static_cast<float>(loss);
}

tensor_view view_of(const mat& m, std::array<int64_t, 2>& shape) {
  shape = {m.rows(), m.cols()};
  return {reinterpret_cast<const std::byte*>(m.data()), dtype::float32, shape, m.size()};
}
tensor_view view_of(const vec& v, std::array<int64_t, 1>& shape) {
  shape = {v.size()};
  return {reinterpret_cast<const std::byte*>(v.data()), dtype::float32, shape, v.size()};
}

status write_train_step(tw::trial_writer& w, const std::vector<layer>& layers, const config& c,
                        const tensor_names& names, const worker_state& ws, float loss,
                        int64_t global_step, int64_t mode_step, bool lagging) {
  TRIALSTAT_RETURN_IF_ERROR(w.begin_step(global_step, mode::train, mode_step));
  std::array<int64_t, 2> s2{};
  std::array<int64_t, 1> s1{};
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const layer& L = layers[l];
    if (lagging && L.lag_w.size() > 0) {  // desync: this worker's copy missed one update
      const mat lw = L.w + L.lag_w;
      const vec lb = L.b + L.lag_b;
      TRIALSTAT_RETURN_IF_ERROR(w.add_tensor(names.weight[l], view_of(lw, s2)));
      TRIALSTAT_RETURN_IF_ERROR(w.add_tensor(names.bias[l], view_of(lb, s1)));
      continue;
    }
    TRIALSTAT_RETURN_IF_ERROR(w.add_tensor(names.weight[l], view_of(L.w, s2)));
    TRIALSTAT_RETURN_IF_ERROR(w.add_tensor(names.bias[l], view_of(L.b, s1)));
  }
  if (c.save_activations) {
    for (std::size_t l = 0; l < ws.h.size(); ++l) {
      TRIALSTAT_RETURN_IF_ERROR(w.add_tensor(names.activation[l], view_of(ws.h[l], s2)));
    }
  }
  TRIALSTAT_RETURN_IF_ERROR(w.add_tensor(
      names.loss, {reinterpret_cast<const std::byte*>(&loss), dtype::float32, {}, 1}));
  for (std::size_t l = layers.size(); l-- > 0;) {
    TRIALSTAT_RETURN_IF_ERROR(w.add_tensor(names.grad_bias[l], view_of(layers[l].db, s1)));
    TRIALSTAT_RETURN_IF_ERROR(w.add_tensor(names.grad_weight[l], view_of(layers[l].dw, s2)));
  }
  return w.end_step();
}

status write_eval_step(tw::trial_writer& w, const config& c, const tensor_names& names,
                       const worker_state& ws, float loss, int64_t global_step, int64_t mode_step) {
  TRIALSTAT_RETURN_IF_ERROR(w.begin_step(global_step, mode::eval, mode_step));
  std::array<int64_t, 2> s2{};
  if (c.save_activations) {
    for (std::size_t l = 0; l < ws.h.size(); ++l) {
      TRIALSTAT_RETURN_IF_ERROR(w.add_tensor(names.activation[l], view_of(ws.h[l], s2)));
    }
  }
  TRIALSTAT_RETURN_IF_ERROR(w.add_tensor(
      names.loss, {reinterpret_cast<const std::byte*>(&loss), dtype::float32, {}, 1}));
  return w.end_step();
}

// Size of one record of `name` with `shape` (the encoder never reads the element bytes when
// writing the smdebug footer, so a placeholder pointer serves).
uint64_t record_bytes(std::string_view name, std::vector<int64_t> shape, int64_t step, mode m,
                      int64_t mode_step) {
  static const std::byte placeholder{};
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const tensor_view v{&placeholder, dtype::float32, shape, n};
  const tw::event_header h{1.7e9, step, name, m, mode_step};
  auto parts = tw::encode_tensor_record_parts(h, v, tw::footer_policy::smdebug_constant);
  const uint64_t index_entry = 55 + name.size();
  return parts.has_value() ? parts->size_bytes() + index_entry : 0;
}

step_size_estimate estimate(const config& c, const tensor_names& names) {
  std::vector<int64_t> sizes = {c.o.input_dim};
  for (int i = 0; i < c.hidden; ++i) sizes.push_back(c.o.width);
  sizes.push_back(c.o.classes);
  const int64_t step = std::max<int64_t>(c.o.steps, 1000);  // a typical step number width
  step_size_estimate e;
  e.train_save_bytes = e.eval_step_bytes = 190;  // index file: meta, event file name, brackets
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    e.train_save_bytes += 2 * record_bytes(names.weight[l], {sizes[l + 1], sizes[l]}, step, mode::train, step);
    e.train_save_bytes += 2 * record_bytes(names.bias[l], {sizes[l + 1]}, step, mode::train, step);
  }
  if (c.save_activations) {
    for (std::size_t l = 0; l < names.activation.size(); ++l) {
      e.train_save_bytes += record_bytes(names.activation[l], {c.o.batch, c.o.width}, step, mode::train, step);
      e.eval_step_bytes += record_bytes(names.activation[l], {c.o.batch, c.o.width}, step, mode::eval, step);
    }
  }
  e.train_save_bytes += record_bytes(names.loss, {}, step, mode::train, step);
  e.eval_step_bytes += record_bytes(names.loss, {}, step, mode::eval, step);
  return e;
}

result<trainer_summary> run(const trainer_options& options) {
  const auto t0 = std::chrono::steady_clock::now();
  auto cfg = make_config(options);
  if (!cfg) return cfg.error_status();
  config c = std::move(*cfg);
  const tensor_names names = make_names(c);

  if (c.o.target_bytes) {
    const auto e = estimate(c, names);
    double per_step = static_cast<double>(e.train_save_bytes) / static_cast<double>(c.o.save_interval);
    if (c.o.eval_every > 0) {
      per_step += static_cast<double>(e.eval_step_bytes) * static_cast<double>(c.o.eval_batches) /
                  static_cast<double>(c.o.eval_every);
    }
    per_step *= c.o.workers;
    c.o.steps = std::max<int64_t>(
        1, static_cast<int64_t>(std::llround(static_cast<double>(*c.o.target_bytes) / per_step)));
  }

  std::error_code ec;
  if (std::filesystem::exists(c.o.out, ec)) {
    if (c.o.overwrite) {
      std::filesystem::remove_all(c.o.out, ec);
      if (ec) {
        return status(error_code::io_error, fmt::format("example trial: cannot remove '{}': {}",
                                                        c.o.out.string(), ec.message()));
      }
    } else if (!std::filesystem::is_directory(c.o.out, ec) ||
               !std::filesystem::is_empty(c.o.out, ec)) {
      return status(error_code::invalid_argument,
                    fmt::format("example trial: '{}' exists and is not an empty folder (use "
                                "overwrite / --overwrite)",
                                c.o.out.string()));
    }
  }

  Eigen::setNbThreads(c.o.threads);  // 0 = Eigen's default (all cores); no-op without OpenMP
  std::mt19937_64 master(c.o.seed);
  const blobs data(c.o.classes, c.o.input_dim, master);
  std::vector<layer> layers = init_layers(c, master);
  if (c.o.kind == pathology::dead_relu) kill_relus(layers, c, data, master);

  tw::writer_options wopts;
  wopts.num_workers = c.o.workers;
  wopts.collections = make_collections(c, names);
  std::vector<worker_state> workers(static_cast<std::size_t>(c.o.workers));
  for (int r = 0; r < c.o.workers; ++r) {
    auto& ws = workers[static_cast<std::size_t>(r)];
    ws.rng.seed(c.o.seed * 0x9E3779B97F4A7C15ull + 1000003ull * static_cast<uint64_t>(r + 1));
    if (c.o.eval_every > 0) data.sample(ws.rng, ws.eval_x, ws.eval_y, c.o.eval_batches * c.o.batch);
    auto w = tw::trial_writer::create(c.o.out, fmt::format("worker_{}", r), wopts);
    if (!w) return w.error_status();
    ws.writer.emplace(std::move(*w));
  }

  trainer_summary summary;
  summary.root = c.o.out;
  summary.workers = c.o.workers;
  summary.hidden_layers = c.hidden;
  int64_t global_step = 0;
  int64_t eval_mode_step = 0;
  const float lr = static_cast<float>(c.lr);
  const float momentum = static_cast<float>(c.momentum);
  const bool several = c.o.workers > 1;
  for (int64_t t = 0; t < c.o.steps; ++t) {
    const bool save = t % c.o.save_interval == 0;
    if (several) {
      for (auto& L : layers) {
        L.dw_sum.setZero();
        L.db_sum.setZero();
      }
    }
    for (std::size_t r = 0; r < workers.size(); ++r) {
      auto& ws = workers[r];
      data.sample(ws.rng, ws.x, ws.y, c.o.batch);
      const float loss = forward_backward(layers, c, ws, ws.x, ws.y, /*backward=*/true);
      if (r == 0) summary.train_loss.push_back(loss);
      if (save) {
        TRIALSTAT_RETURN_IF_ERROR(
            write_train_step(*ws.writer, layers, c, names, ws, loss, global_step, t,
                             /*lagging=*/r + 1 == workers.size()));
      }
      if (several) {
        for (auto& L : layers) {
          L.dw_sum += L.dw;
          L.db_sum += L.db;
        }
      }
    }
    // torch.optim.SGD: v = momentum * v + g (v = g at the first step), w -= lr * v.
    const float inv_workers = 1.f / static_cast<float>(c.o.workers);
    const bool skip_on_last = c.o.kind == pathology::desync && t == c.o.steps / 2;
    for (auto& L : layers) {
      if (skip_on_last) {  // the last worker keeps the weights before this update
        L.lag_w = L.w;
        L.lag_b = L.b;
      }
      const mat& gw = several ? L.dw_sum : L.dw;
      const vec& gb = several ? L.db_sum : L.db;
      if (c.momentum > 0) {
        if (t == 0) {
          L.vw = gw * inv_workers;
          L.vb = gb * inv_workers;
        } else {
          L.vw = momentum * L.vw + inv_workers * gw;
          L.vb = momentum * L.vb + inv_workers * gb;
        }
        L.w.noalias() -= lr * L.vw;
        L.b.noalias() -= lr * L.vb;
      } else {
        L.w.noalias() -= (lr * inv_workers) * gw;
        L.b.noalias() -= (lr * inv_workers) * gb;
      }
      if (skip_on_last) {  // lag = before − after
        L.lag_w -= L.w;
        L.lag_b -= L.b;
      }
    }
    ++global_step;
    ++summary.train_steps;
    if (c.o.eval_every > 0 && (t + 1) % c.o.eval_every == 0) {
      for (int64_t e = 0; e < c.o.eval_batches; ++e) {
        for (std::size_t r = 0; r < workers.size(); ++r) {
          auto& ws = workers[r];
          const mat x = ws.eval_x.middleRows(e * c.o.batch, c.o.batch);
          const std::vector<int> y(ws.eval_y.begin() + e * c.o.batch,
                                   ws.eval_y.begin() + (e + 1) * c.o.batch);
          const float loss = forward_backward(layers, c, ws, x, y, /*backward=*/false);
          if (r == 0) summary.eval_loss.push_back(loss);
          TRIALSTAT_RETURN_IF_ERROR(
              write_eval_step(*ws.writer, c, names, ws, loss, global_step, eval_mode_step));
        }
        ++global_step;
        ++eval_mode_step;
        ++summary.eval_steps;
      }
    }
  }
  // The end marker last, by the last worker only: a reader treats the trial as complete once
  // it exists.
  for (std::size_t r = 0; r < workers.size(); ++r) {
    const bool last = r + 1 == workers.size();
    TRIALSTAT_RETURN_IF_ERROR(workers[r].writer->close(last && c.o.write_end_marker));
    const auto totals = workers[r].writer->totals();
    summary.files += totals.files_count;
    summary.bytes += totals.bytes;
    summary.tensor_records += totals.tensor_records_count;
    if (r == 0) summary.saved_steps = static_cast<int64_t>(totals.steps_count);
  }
  summary.global_steps = global_step;
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return summary;
}

}  // namespace

std::string_view pathology_name(pathology p) noexcept {
  switch (p) {
    case pathology::none: return "none";
    case pathology::exploding: return "exploding";
    case pathology::vanishing: return "vanishing";
    case pathology::dead_relu: return "dead_relu";
    case pathology::desync: return "desync";
  }
  return "none";
}

std::optional<pathology> parse_pathology(std::string_view name) noexcept {
  for (pathology p : {pathology::none, pathology::exploding, pathology::vanishing,
                      pathology::dead_relu, pathology::desync}) {
    if (name == pathology_name(p)) return p;
  }
  return std::nullopt;
}

result<trainer_summary> run_example_trial(const trainer_options& options) {
  try {
    return run(options);
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  fmt::format("example trial: out of memory (width {}, batch {}, layers {})",
                              options.width, options.batch, options.hidden_layers));
  }
}

result<step_size_estimate> estimate_step_bytes(const trainer_options& options) {
  auto c = make_config(options);
  if (!c) return c.error_status();
  return estimate(*c, make_names(*c));
}

std::string format_summary(const trainer_summary& s, pathology kind) {
  return fmt::format(
      "example-trial: {}: pathology {}, {} TRAIN + {} EVAL steps ({} global, {} saved), {} "
      "hidden layers, {} worker(s), {} files, {} bytes ({:.1f} MiB), {:.2f} s",
      s.root.string(), pathology_name(kind), s.train_steps, s.eval_steps, s.global_steps,
      s.saved_steps, s.hidden_layers, s.workers, s.files, s.bytes,
      static_cast<double>(s.bytes) / (1024.0 * 1024.0), s.seconds);
}

}  // namespace trialstat::example

// SPDX-License-Identifier: Apache-2.0
#include "tests/fuzz/sample_trial.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trialstat/tensor_view.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat::fuzz {

namespace {

template <typename T>
tensor_view view_of(const std::vector<T>& values, dtype type, std::span<const int64_t> shape) {
  return {reinterpret_cast<const std::byte*>(values.data()), type, shape,
          static_cast<int64_t>(values.size() * sizeof(T) / dtype_size_bytes(type))};
}

}  // namespace

status write_sample_trial(const std::filesystem::path& root, writer::footer_policy footer) {
  writer::writer_options options;
  options.footer = footer;
  options.collections = writer::pytorch_default_collections(1);
  writer::collection_spec custom;
  custom.name = "custom";
  custom.include_regex = {"^(?!gradient).*weight", "relu_output[0-9]+$"};
  custom.reductions = "min,max,l2";
  custom.save_shape = true;
  custom.save_configs = writer::uniform_save_configs(2);
  options.collections.push_back(custom);
  auto w = writer::trial_writer::create(root, sample_worker, options);
  if (!w.has_value()) return w.error_status();

  const std::vector<float> weight = {0.5f, -1.25f, 3.0f, 0.0f, -0.0f, 1e-8f};
  const std::array<int64_t, 2> weight_shape = {2, 3};
  const std::vector<double> loss = {0.6931471805599453};
  const std::vector<int64_t> labels = {0, 3, 1, 2};
  const std::array<int64_t, 1> labels_shape = {4};
  const std::vector<uint8_t> mask = {1, 0, 1};
  const std::array<int64_t, 1> mask_shape = {3};
  const std::vector<uint16_t> half = {0x3C00, 0xBC00, 0x7C00, 0x7E00};  // 1, -1, inf, nan
  const std::array<int64_t, 2> half_shape = {2, 2};
  const std::vector<float> empty;
  const std::array<int64_t, 2> empty_shape = {0, 5};
  const std::vector<std::string> words = {"cat", "", "a longer string"};
  const std::array<int64_t, 3> shape_only = {8, 3, 3};

  for (int64_t step = 0; step < 3; ++step) {
    const mode m = step < 2 ? mode::train : mode::eval;
    TRIALSTAT_RETURN_IF_ERROR(w->begin_step(step, m, step < 2 ? step : 0));
    TRIALSTAT_RETURN_IF_ERROR(w->add_tensor("MLP_fc1.weight", view_of(weight, dtype::float32, weight_shape)));
    TRIALSTAT_RETURN_IF_ERROR(w->add_tensor("gradient/MLP_fc1.weight", view_of(weight, dtype::float32, weight_shape)));
    TRIALSTAT_RETURN_IF_ERROR(w->add_tensor("loss_output_0", view_of(loss, dtype::float64, {})));
    TRIALSTAT_RETURN_IF_ERROR(w->add_tensor("labels", view_of(labels, dtype::int64, labels_shape)));
    TRIALSTAT_RETURN_IF_ERROR(w->add_tensor("mask", view_of(mask, dtype::boolean, mask_shape)));
    TRIALSTAT_RETURN_IF_ERROR(w->add_tensor("relu_output0", view_of(half, dtype::float16, half_shape)));
    TRIALSTAT_RETURN_IF_ERROR(w->add_tensor("empty", {nullptr, dtype::float32, empty_shape, 0}));
    TRIALSTAT_RETURN_IF_ERROR(w->add_strings("tokens", words));
    TRIALSTAT_RETURN_IF_ERROR(w->add_reduction("MLP_fc1.weight", "l2", false, 3.4f));
    TRIALSTAT_RETURN_IF_ERROR(w->add_reduction("MLP_fc1.weight", "max", true, 3.0f));
    TRIALSTAT_RETURN_IF_ERROR(w->add_shape("conv1.weight", shape_only));
    TRIALSTAT_RETURN_IF_ERROR(w->end_step());
  }
  return w->close(/*write_end_marker=*/true);
}

}  // namespace trialstat::fuzz

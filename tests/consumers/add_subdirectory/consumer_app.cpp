// SPDX-License-Identifier: Apache-2.0
// Source-tree consumer: write a two-step trial with trialstat::writer, read it back with the
// catalog (trialstat::trial) and check what it holds.
//   consumer_app DIR   (prints "ok: tensors 1 steps 2 workers 1"; exit 0 when the checks pass)
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <trialstat/trial/catalog.hpp>
#include <trialstat/writer/trial_writer.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer_app DIR\n");
    return 2;
  }
  const std::filesystem::path root = argv[1];
  std::filesystem::remove_all(root);
  auto writer = trialstat::writer::trial_writer::create(
      root, "worker_0", {.collections = trialstat::writer::pytorch_default_collections(1)});
  if (!writer) {
    std::fprintf(stderr, "%s\n", writer.error_status().to_string().c_str());
    return 1;
  }
  const std::vector<float> values = {1.0F, -2.0F, 3.5F, 0.0F};
  const std::vector<int64_t> shape = {2, 2};
  const trialstat::tensor_view view{.data = reinterpret_cast<const std::byte*>(values.data()),
                                    .type = trialstat::dtype::float32,
                                    .shape = shape,
                                    .num_elements = 4};
  for (int64_t step = 0; step < 2; ++step) {
    trialstat::status s = writer->begin_step(step, trialstat::mode::train, step);
    if (s.ok()) s = writer->add_tensor("fc.weight", view);
    if (s.ok()) s = writer->end_step();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.to_string().c_str());
      return 1;
    }
  }
  if (auto s = writer->close(true); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return 1;
  }
  auto trial = trialstat::trial::catalog::open(root);
  if (!trial) {
    std::fprintf(stderr, "%s\n", trial.error_status().to_string().c_str());
    return 1;
  }
  const std::size_t tensors = trial->tensor_names().size();
  const std::size_t steps = trial->steps().size();
  const std::size_t workers = trial->workers().size();
  if (tensors != 1 || steps != 2 || workers != 1 || !trial->training_ended()) {
    std::fprintf(stderr, "unexpected trial: tensors %zu steps %zu workers %zu\n", tensors, steps,
                 workers);
    return 1;
  }
  std::printf("ok: tensors %zu steps %zu workers %zu\n", tensors, steps, workers);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// A small trial written with the project's writer for catalog tests: `workers` × `steps` TRAIN
// steps (mode step = step), each with tensors "a" and "b" of shape [2, 3], float32, every value
// step + worker, and the PyTorch default collections.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trialstat/writer/trial_writer.hpp"

namespace trialstat::testing_support {

inline void write_small_trial(const std::filesystem::path& root, int workers, int steps) {
  for (int worker = 0; worker < workers; ++worker) {
    writer::writer_options options;
    options.num_workers = workers;
    options.collections = writer::pytorch_default_collections(1);
    auto w = writer::trial_writer::create(root, "worker_" + std::to_string(worker), options);
    ASSERT_TRUE(w.has_value()) << w.error_status().to_string();
    for (int64_t step = 0; step < steps; ++step) {
      EXPECT_TRUE(w->begin_step(step, mode::train, step).ok());
      std::vector<float> v(6, static_cast<float>(step + worker));
      const int64_t shape[] = {2, 3};
      const tensor_view view{reinterpret_cast<const std::byte*>(v.data()), dtype::float32, shape, 6,
                             memory_kind::host};
      EXPECT_TRUE(w->add_tensor("a", view).ok());
      EXPECT_TRUE(w->add_tensor("b", view).ok());
      EXPECT_TRUE(w->end_step().ok());
    }
    EXPECT_TRUE(w->close(true).ok());
  }
}

}  // namespace trialstat::testing_support

// SPDX-License-Identifier: Apache-2.0
// A trial written by trial_writer, read back through trial::catalog: every dtype's raw entry
// decodes to the written bytes; reductions attach to their base tensor; shape-only entries;
// modes, mode steps and global steps; two workers with completeness before and after the end
// marker; collections with regex-derived members.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/support/shared_trials.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/decode/indexed_record.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace tw = trialstat::writer;
namespace fs = std::filesystem;
using trialstat::dtype;
using trialstat::mode;
using trialstat::trial::catalog;

namespace {

struct tensor_data {
  std::string name;
  dtype type;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};

std::vector<tensor_data> all_dtypes(uint32_t seed, int64_t step) {
  const dtype types[] = {dtype::float32, dtype::float64, dtype::int32,     dtype::uint8,
                         dtype::int16,   dtype::int8,    dtype::complex64, dtype::int64,
                         dtype::boolean, dtype::bfloat16, dtype::uint16,   dtype::complex128,
                         dtype::float16, dtype::uint32,  dtype::uint64};
  std::mt19937 rng(seed + static_cast<uint32_t>(step));
  std::vector<tensor_data> out;
  for (dtype t : types) {
    const std::vector<int64_t> shape =
        t == dtype::float64 ? std::vector<int64_t>{} : std::vector<int64_t>{2, 3};
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    tensor_data d{"dt_" + std::string(trialstat::dtype_name(t)), t, shape,
                  std::vector<std::byte>(static_cast<std::size_t>(n) * trialstat::dtype_size_bytes(t))};
    for (auto& b : d.bytes) b = static_cast<std::byte>(rng() | 1u);  // never all-zero
    if (t == dtype::boolean) for (auto& b : d.bytes) b = std::byte{1};
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

TEST(CatalogRoundTrip, WriterTrialReadsBackThroughCatalog) {
  const uint32_t seed = 31337;
  const auto root = trialstat::testing::make_scratch_dir("writer_catalog");
  tw::writer_options options;
  options.num_workers = 2;
  options.collections = tw::pytorch_default_collections(1);
  tw::collection_spec dts;
  dts.name = "dtypes";
  dts.include_regex = {"^dt_"};
  dts.save_configs = tw::uniform_save_configs(1);
  options.collections.push_back(dts);
  auto w0 = tw::trial_writer::create(root, "worker_0", options);
  auto w1 = tw::trial_writer::create(root, "worker_1", options);
  ASSERT_TRUE(w0.has_value() && w1.has_value());

  // Global steps 0,1 TRAIN (mode steps 0,1), 2 EVAL (0), 3 PREDICT (0), 1000 TRAIN (2).
  struct step_plan { int64_t global; mode m; int64_t mode_step; };
  const step_plan plan[] = {{0, mode::train, 0}, {1, mode::train, 1}, {2, mode::eval, 0},
                            {3, mode::predict, 0}, {1000, mode::train, 2}};
  const std::vector<int64_t> shape_only = {7, 5};
  for (const auto& p : plan) {
    for (auto* w : {&*w0, &*w1}) {
      ASSERT_TRUE(w->begin_step(p.global, p.m, p.mode_step).ok());
      for (const auto& t : all_dtypes(seed, p.global)) {
        int64_t n = 1;
        for (int64_t d : t.shape) n *= d;
        ASSERT_TRUE(w->add_tensor(t.name, {t.bytes.data(), t.type, t.shape, n}).ok()) << t.name;
      }
      ASSERT_TRUE(w->add_reduction("MLP_fc1.weight", "mean", false, 0.5f).ok());
      ASSERT_TRUE(w->add_reduction("MLP_fc1.weight", "l2", true, 2.5f).ok());
      ASSERT_TRUE(w->add_shape("MLP_fc1.weight", shape_only).ok());
      ASSERT_TRUE(w->end_step().ok());
    }
  }
  // worker_1 writes one more step that worker_0 never writes: incomplete until the end marker.
  ASSERT_TRUE(w1->begin_step(1001, mode::train, 3).ok());
  const float loss = 1.25f;
  ASSERT_TRUE(w1->add_tensor("CrossEntropyLoss_output_0",
                             {reinterpret_cast<const std::byte*>(&loss), dtype::float32, {}, 1}).ok());
  ASSERT_TRUE(w1->end_step().ok());
  ASSERT_TRUE(w0->close(false).ok());
  ASSERT_TRUE(w1->close(false).ok());

  {
    auto c = catalog::open(root);
    ASSERT_TRUE(c.has_value()) << c.error_status().to_string();
    EXPECT_TRUE(c->warnings().empty());
    EXPECT_FALSE(c->training_ended());
    EXPECT_EQ(c->num_workers(), 2);
    EXPECT_EQ(c->steps(mode::global), (std::vector<int64_t>{0, 1, 2, 3, 1000}));
    EXPECT_EQ(c->steps(mode::global, true), (std::vector<int64_t>{0, 1, 2, 3, 1000, 1001}));
    EXPECT_FALSE(c->is_complete(1001));
    EXPECT_EQ(c->last_complete_step(), 1000);
  }
  // The end marker completes every step.
  ASSERT_TRUE(tw::trial_writer::write_end_marker(root).ok());

  auto c = catalog::open(root);
  ASSERT_TRUE(c.has_value()) << c.error_status().to_string();
  EXPECT_TRUE(c->warnings().empty());
  EXPECT_TRUE(c->training_ended());
  EXPECT_TRUE(c->is_complete(1001));
  EXPECT_EQ(c->last_complete_step(), 1001);
  EXPECT_EQ(c->steps(mode::train), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(c->steps(mode::eval), (std::vector<int64_t>{0}));
  EXPECT_EQ(c->steps(mode::predict), (std::vector<int64_t>{0}));
  EXPECT_EQ(c->global_step(mode::train, 2), 1000);
  EXPECT_EQ(c->global_step(mode::predict, 0), 3);
  ASSERT_EQ(c->workers().size(), 2u);

  // Every dtype's raw record decodes to the bytes written, for each step and worker.
  trialstat::decode::record_read_buffers buffers;
  trialstat::decode::event_record rec;
  std::size_t checked = 0;
  for (const auto& p : plan) {
    for (const char* worker : {"worker_0", "worker_1"}) {
      const auto wid = *c->find_worker(worker);
      for (const auto& t : all_dtypes(seed, p.global)) {
        const auto id = c->find_tensor(t.name);
        ASSERT_TRUE(id.has_value()) << t.name;
        const auto* e = c->find_entry(*id, p.global, wid);
        ASSERT_TRUE(e != nullptr && e->raw.has_value()) << t.name << " @ " << p.global;
        auto file = trialstat::io::file_reader::open(root / c->event_file(e->raw->event_file));
        ASSERT_TRUE(file.has_value());
        const auto s = trialstat::decode::read_tensor_record(
            *file, {e->raw->start_bytes, e->raw->length_bytes}, buffers, rec);
        ASSERT_TRUE(s.ok()) << s.to_string();
        EXPECT_EQ(rec.tag, t.name);
        EXPECT_EQ(rec.type, t.type);
        EXPECT_EQ(rec.shape, t.shape);
        EXPECT_EQ(rec.mode, p.m);
        EXPECT_EQ(rec.mode_step, p.mode_step);
        ASSERT_EQ(rec.content.size(), t.bytes.size());
        EXPECT_EQ(std::memcmp(rec.content.data(), t.bytes.data(), t.bytes.size()), 0)
            << t.name << " seed " << seed;
        ++checked;
      }
      // Reductions and the shape attach to the base tensor, which has no raw record.
      const auto base = c->find_tensor("MLP_fc1.weight");
      ASSERT_TRUE(base.has_value());
      const auto* e = c->find_entry(*base, p.global, wid);
      ASSERT_NE(e, nullptr);
      EXPECT_FALSE(e->raw.has_value());
      ASSERT_TRUE(e->shape.has_value());
      EXPECT_EQ(*e->shape, shape_only);
      ASSERT_EQ(e->reductions.size(), 2u);
      EXPECT_EQ(e->reductions[0].op, trialstat::trial::reduction_op::mean);
      EXPECT_FALSE(e->reductions[0].abs);
      EXPECT_EQ(e->reductions[1].op, trialstat::trial::reduction_op::l2);
      EXPECT_TRUE(e->reductions[1].abs);
    }
  }
  EXPECT_EQ(checked, std::size(plan) * 2 * 15);
  EXPECT_FALSE(c->find_tensor("smdebug/reductions/mean/MLP_fc1.weight").has_value());

  // Collections: regex-derived members, listed in the file.
  const auto* weights = c->find_collection("weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->tensor_names, (std::vector<std::string>{"MLP_fc1.weight"}));
  const auto* dtc = c->find_collection("dtypes");
  ASSERT_NE(dtc, nullptr);
  EXPECT_EQ(dtc->tensor_names.size(), 15u);
  EXPECT_TRUE(c->in_collection(*c->find_tensor("dt_uint64"), "dtypes"));
  EXPECT_TRUE(c->in_collection(*c->find_tensor("CrossEntropyLoss_output_0"), "losses"));
  fs::remove_all(root);
}

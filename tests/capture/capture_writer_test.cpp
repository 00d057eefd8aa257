// SPDX-License-Identifier: Apache-2.0
// capture_writer: trials written on the background thread read back through the catalog bit for
// bit (float32, bfloat16, float16, int64, bool, 0-d); record-mode overrides; collection members as
// supplied; the byte-bounded queue (blocking, dropping, a tensor larger than the queue); write
// failures (disk full through RLIMIT_FSIZE, an out_dir under a regular file) reported once per
// step while later steps succeed; TensorBoard files at smdebug's paths with smdebug's histogram;
// close idempotence and the destructor without close.
//
// Some tests stall the writer thread deterministically with a FIFO: the first command opens a
// TensorBoard file whose `.tmp` path is a named pipe, and open(O_WRONLY) blocks until the test
// opens the read end (`writer_gate`).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "event.pb.h"
#include "tests/support/shared_trials.hpp"
#include "tests/writer/golden_walk.hpp"
#include "trialstat/capture/capture_writer.hpp"
#include "trialstat/decode/indexed_record.hpp"
#include "trialstat/io/record_reader.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/trial/catalog.hpp"

namespace fs = std::filesystem;
namespace tw = trialstat::writer;
using trialstat::dtype;
using trialstat::error_code;
using trialstat::mode;
using trialstat::tensor_view;
using trialstat::capture::capture_options;
using trialstat::capture::capture_writer;
using trialstat::trial::catalog;

namespace {

constexpr const char* suffix = "4242_testhost";

struct host_tensor {
  std::string name;
  dtype type;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;

  int64_t num_elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  tensor_view view() const { return {bytes.data(), type, shape, num_elements()}; }
};

host_tensor random_tensor(std::string name, dtype type, std::vector<int64_t> shape, uint32_t seed) {
  host_tensor t{std::move(name), type, std::move(shape), {}};
  t.bytes.resize(static_cast<std::size_t>(t.num_elements()) * trialstat::dtype_size_bytes(type));
  std::mt19937 rng(seed);
  for (auto& b : t.bytes) b = static_cast<std::byte>(rng());
  if (type == dtype::boolean) {
    for (auto& b : t.bytes) b = static_cast<std::byte>(rng() & 1u);
  }
  return t;
}

host_tensor float_tensor(std::string name, std::vector<float> values) {
  host_tensor t{std::move(name), dtype::float32, {static_cast<int64_t>(values.size())}, {}};
  t.bytes.resize(values.size() * sizeof(float));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

std::unique_ptr<capture_writer> start(capture_options o) {
  if (o.worker.empty()) o.worker = "worker_0";
  if (o.tensorboard_file_suffix.empty()) o.tensorboard_file_suffix = suffix;
  auto w = capture_writer::start(std::move(o));
  EXPECT_TRUE(w.has_value()) << w.error_status().to_string();
  return w.has_value() ? std::move(*w) : nullptr;
}

/// Every path under `root` of any file type (FIFOs and .tmp files included), relative, sorted.
std::vector<std::string> all_files(const fs::path& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_directory()) out.push_back(fs::relative(it->path(), root).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool any_tmp(const fs::path& root) {
  for (const auto& f : all_files(root)) {
    if (f.ends_with(".tmp")) return true;
  }
  return false;
}

bool mentions(const std::vector<std::string>& errors, std::string_view text) {
  return std::any_of(errors.begin(), errors.end(),
                     [&](const std::string& e) { return e.find(text) != std::string::npos; });
}

/// One record read back through the catalog and the index.
struct read_back {
  std::string tag;
  dtype type = dtype::invalid;
  std::vector<int64_t> shape;
  mode m = mode::global;
  int64_t mode_step = -1;
  std::vector<std::byte> content;
};

read_back read_tensor(const catalog& c, const fs::path& root, std::string_view name, int64_t step) {
  read_back out;
  const auto id = c.find_tensor(name);
  EXPECT_TRUE(id.has_value()) << name;
  if (!id) return out;
  const auto* e = c.find_entry(*id, step, *c.find_worker("worker_0"));
  EXPECT_TRUE(e != nullptr && e->raw.has_value()) << name << " @ " << step;
  if (e == nullptr || !e->raw) return out;
  auto file = trialstat::io::file_reader::open(root / c.event_file(e->raw->event_file));
  EXPECT_TRUE(file.has_value());
  trialstat::decode::record_read_buffers buffers;
  trialstat::decode::event_record rec;
  const auto s = trialstat::decode::read_tensor_record(
      *file, {e->raw->start_bytes, e->raw->length_bytes}, buffers, rec);
  EXPECT_TRUE(s.ok()) << s.to_string();
  out.tag = std::string(rec.tag);
  out.type = rec.type;
  out.shape = rec.shape;
  out.m = rec.mode;
  out.mode_step = rec.mode_step;
  out.content.assign(rec.content.begin(), rec.content.end());
  return out;
}

/// Stalls the writer thread: `arm` makes `<tb_dir>/TRAIN/<S12 0>_<suffix>.tfevents.tmp` a FIFO
/// and queues a TRAIN scalar, whose file open then blocks until `release`.
class writer_gate {
 public:
  explicit writer_gate(const fs::path& tb_dir)
      : fifo_(capture_writer::tensorboard_file_path(tb_dir, mode::train, 0, suffix).string() + ".tmp") {
    fs::create_directories(fs::path(fifo_).parent_path());
    EXPECT_EQ(::mkfifo(fifo_.c_str(), 0644), 0) << std::strerror(errno);
    // Left ignored for the rest of the process: a failing test may close the read end before
    // the writer thread is done with the pipe.
    ::signal(SIGPIPE, SIG_IGN);
  }
  ~writer_gate() {
    release();
    if (fd_ >= 0) ::close(fd_);
  }
  void arm(capture_writer& w) { ASSERT_TRUE(w.add_tensorboard_scalar("gate", mode::train, 0, 1.0, 1.0).ok()); }
  /// Open the read end: the blocked open(O_WRONLY) returns. The writer's few bytes fit the pipe.
  void release() {
    if (fd_ < 0) fd_ = ::open(fifo_.c_str(), O_RDONLY | O_NONBLOCK);
  }

 private:
  std::string fifo_;
  int fd_ = -1;
};

/// Wait (bounded) until `pred` holds.
template <typename Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 2000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pred();
}

std::vector<tw::collection_spec> hook_collections(std::vector<std::string> weights_members) {
  tw::collection_spec weights;
  weights.name = "weights";
  weights.include_regex = {"^(?!gradient).*weight"};
  weights.tensor_names = std::move(weights_members);
  weights.save_configs = tw::uniform_save_configs(1);
  tw::collection_spec losses;
  losses.name = "losses";
  losses.include_regex = {"[Ll]oss_(?!input).*output"};
  losses.save_configs = tw::uniform_save_configs(1);
  losses.save_histogram = false;
  return {weights, losses};
}

}  // namespace

TEST(CaptureWriter, RoundTripEveryDtype) {
  const auto root = trialstat::testing::make_scratch_dir("capture_roundtrip");
  auto w = start({.out_dir = root});
  ASSERT_NE(w, nullptr);
  // Membership as the hook computes it: `b.weight` matches the weights regex but is not listed,
  // so it must not appear in the file.
  ASSERT_TRUE(w->set_collections(hook_collections({"a.weight", "zz_never_written"})).ok());
  const std::vector<host_tensor> tensors = {
      random_tensor("a.weight", dtype::float32, {3, 4}, 1),
      random_tensor("b.weight", dtype::bfloat16, {5}, 2),
      random_tensor("h16", dtype::float16, {2, 2, 2}, 3),
      random_tensor("i64", dtype::int64, {7}, 4),
      random_tensor("flags", dtype::boolean, {9}, 5),
      random_tensor("CrossEntropyLoss_output_0", dtype::float32, {}, 6),
  };
  for (int64_t step : {0, 2}) {
    ASSERT_TRUE(w->begin_step(step, mode::train, step).ok());
    for (const auto& t : tensors) {
      // The writer copies before returning: scribbling over the caller's buffer right after
      // must not change what is written.
      host_tensor scratch = t;
      auto queued = w->add_tensor(t.name, scratch.view(), 1.5e9 + static_cast<double>(step));
      ASSERT_TRUE(queued.has_value()) << queued.error_status().to_string();
      EXPECT_TRUE(*queued);
      std::fill(scratch.bytes.begin(), scratch.bytes.end(), std::byte{0xAB});
    }
    const std::vector<int64_t> shape = {64, 3};
    ASSERT_TRUE(w->add_shape("shape_only", shape).ok());
    ASSERT_TRUE(w->end_step().ok());
  }
  w->close(true);
  EXPECT_TRUE(w->take_errors().empty());
  const auto counters = w->counters();
  EXPECT_EQ(counters.tensors_queued, 12u);
  EXPECT_EQ(counters.tensors_written, 12u);
  EXPECT_EQ(counters.tensors_lost + counters.tensors_dropped + counters.errors_count, 0u);
  uint64_t payload = 0;
  for (const auto& t : tensors) payload += t.bytes.size();
  EXPECT_EQ(counters.bytes_written, 2 * payload);
  EXPECT_EQ(counters.queue_bytes_now, 0u);
  EXPECT_FALSE(any_tmp(root));

  auto c = catalog::open(root);
  ASSERT_TRUE(c.has_value()) << c.error_status().to_string();
  EXPECT_TRUE(c->warnings().empty());
  EXPECT_TRUE(c->training_ended());
  EXPECT_EQ(c->steps(mode::train), (std::vector<int64_t>{0, 2}));
  for (int64_t step : {0, 2}) {
    for (const auto& t : tensors) {
      const read_back r = read_tensor(*c, root, t.name, step);
      EXPECT_EQ(r.tag, t.name);
      EXPECT_EQ(r.type, t.type) << t.name;
      EXPECT_EQ(r.shape, t.shape) << t.name;
      EXPECT_EQ(r.m, mode::train);
      EXPECT_EQ(r.mode_step, step);
      EXPECT_EQ(r.content, t.bytes) << t.name << " @ " << step;
    }
    const auto* e = c->find_entry(*c->find_tensor("shape_only"), step, 0);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->shape, (std::vector<int64_t>{64, 3}));
  }
  const auto* weights = c->find_collection("weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->tensor_names, (std::vector<std::string>{"a.weight", "zz_never_written"}));
  const auto* losses = c->find_collection("losses");
  ASSERT_NE(losses, nullptr);
  EXPECT_TRUE(losses->tensor_names.empty());  // regexes are metadata only: no matching here
  fs::remove_all(root);
}

TEST(CaptureWriter, RecordModeOverridesEventMetadataNotIndexMeta) {
  const auto root = trialstat::testing::make_scratch_dir("capture_record_mode");
  auto w = start({.out_dir = root});
  ASSERT_NE(w, nullptr);
  const auto before = float_tensor("before", {1.f, 2.f});
  const auto after = float_tensor("scalar/after", {3.f});
  ASSERT_TRUE(w->begin_step(4, mode::train, 3).ok());
  ASSERT_TRUE(w->add_tensor(before.name, before.view(), 1.0).value());
  ASSERT_TRUE(w->set_record_mode(mode::eval, 7).ok());
  ASSERT_TRUE(w->add_tensor(after.name, after.view(), 2.0).value());
  ASSERT_TRUE(w->end_step().ok());
  // begin_step resets the record mode to the step's.
  ASSERT_TRUE(w->begin_step(5, mode::train, 4).ok());
  ASSERT_TRUE(w->add_tensor(before.name, before.view(), 3.0).value());
  ASSERT_TRUE(w->end_step().ok());
  EXPECT_EQ(w->set_record_mode(mode::eval, 1).code(), error_code::invalid_argument);  // no step
  w->close(false);
  EXPECT_TRUE(w->take_errors().empty());

  const auto index = nlohmann::json::parse(
      trialstat::testing::read_text(root / "index/000000000/000000000004_worker_0.json"));
  EXPECT_EQ(index["meta"]["mode"], "TRAIN");
  EXPECT_EQ(index["meta"]["mode_step"], 3);
  auto c = catalog::open(root);
  ASSERT_TRUE(c.has_value()) << c.error_status().to_string();
  EXPECT_FALSE(c->training_ended());
  const auto r0 = read_tensor(*c, root, "before", 4);
  EXPECT_EQ(r0.m, mode::train);
  EXPECT_EQ(r0.mode_step, 3);
  const auto r1 = read_tensor(*c, root, "scalar/after", 4);
  EXPECT_EQ(r1.m, mode::eval);
  EXPECT_EQ(r1.mode_step, 7);
  const auto r2 = read_tensor(*c, root, "before", 5);
  EXPECT_EQ(r2.m, mode::train);
  EXPECT_EQ(r2.mode_step, 4);
  fs::remove_all(root);
}

TEST(CaptureWriter, RejectsMisuseSynchronously) {
  const auto root = trialstat::testing::make_scratch_dir("capture_misuse");
  EXPECT_EQ(capture_writer::start({.out_dir = root, .worker = ""}).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(capture_writer::start({.out_dir = root, .worker = "a/b"}).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(capture_writer::start({.out_dir = root, .worker = "w", .num_workers = 0})
                .error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(capture_writer::start({.out_dir = "", .worker = "w"}).error_status().code(),
            error_code::invalid_argument);
  auto w = start({.out_dir = root});
  ASSERT_NE(w, nullptr);
  const auto t = float_tensor("x", {1.f, 2.f});
  EXPECT_EQ(w->add_tensor("x", t.view(), 0.0).error_status().code(), error_code::invalid_argument);
  EXPECT_EQ(w->end_step().code(), error_code::invalid_argument);
  EXPECT_EQ(w->begin_step(0, static_cast<mode>(9), 0).code(), error_code::invalid_argument);
  ASSERT_TRUE(w->begin_step(3, mode::train, 3).ok());
  EXPECT_EQ(w->begin_step(4, mode::train, 4).code(), error_code::invalid_argument);
  tensor_view bad = t.view();
  bad.num_elements = 3;  // shape says 2
  EXPECT_EQ(w->add_tensor("x", bad, 0.0).error_status().code(), error_code::invalid_argument);
  bad = t.view();
  bad.type = dtype::string;
  EXPECT_EQ(w->add_tensor("x", bad, 0.0).error_status().code(), error_code::invalid_argument);
  EXPECT_EQ(w->add_tensor("", t.view(), 0.0).error_status().code(), error_code::invalid_argument);
  const std::vector<int64_t> negative = {-1};
  EXPECT_EQ(w->add_shape("s", negative).code(), error_code::invalid_argument);
  EXPECT_EQ(w->add_tensorboard_scalar("t", mode::train, 3, 1.0, 0.0).code(),
            error_code::invalid_argument);  // no tensorboard_dir
  tw::collection_spec bad_regex{.name = "c", .include_regex = {"(unclosed"}};
  EXPECT_EQ(w->set_collections({bad_regex}).code(), error_code::invalid_argument);
  ASSERT_TRUE(w->end_step().ok());
  EXPECT_EQ(w->begin_step(3, mode::train, 3).code(), error_code::invalid_argument);  // not increasing
  w->close(false);
  EXPECT_TRUE(w->take_errors().empty());
  // Nothing was added: the step left no files, and without collections or marker nothing else.
  EXPECT_TRUE(all_files(root).empty());
  fs::remove_all(root);
}

TEST(CaptureWriter, QueueBoundBlocksTheProducer) {
  const auto root = trialstat::testing::make_scratch_dir("capture_queue_bound");
  const std::size_t queue_bytes = 64 << 10;
  auto w = start({.out_dir = root / "trial", .queue_bytes = queue_bytes, .tensorboard_dir = root / "tb"});
  ASSERT_NE(w, nullptr);
  writer_gate gate(root / "tb");
  gate.arm(*w);
  ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
  const auto t = random_tensor("t", dtype::float32, {4096}, 9);  // 16 KiB
  constexpr int num_tensors = 40;                                // 640 KiB through a 64 KiB queue
  std::atomic<int> pushed{0};
  std::thread producer([&] {
    for (int i = 0; i < num_tensors; ++i) {
      auto r = w->add_tensor("t_" + std::to_string(i), t.view(), 0.0);
      EXPECT_TRUE(r.has_value() && *r) << i;
      ++pushed;
    }
  });
  // The writer is stalled: exactly four tensors fit, then the producer blocks.
  ASSERT_TRUE(eventually([&] { return pushed.load() == 4; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(pushed.load(), 4);
  EXPECT_EQ(w->counters().queue_bytes_now, queue_bytes);
  gate.release();
  producer.join();
  ASSERT_TRUE(w->end_step().ok());
  w->flush();
  const auto c = w->counters();
  EXPECT_EQ(c.tensors_written, static_cast<uint64_t>(num_tensors));
  EXPECT_LE(c.queue_bytes_peak, queue_bytes);
  EXPECT_EQ(c.queue_bytes_now, 0u);
  EXPECT_EQ(c.tensors_dropped, 0u);
  w->close(false);
  EXPECT_TRUE(w->take_errors().empty());
  fs::remove_all(root);
}

TEST(CaptureWriter, DropWhenFullCountsDrops) {
  const auto root = trialstat::testing::make_scratch_dir("capture_drop");
  auto w = start({.out_dir = root / "trial", .queue_bytes = 32 << 10, .drop_when_full = true,
                  .tensorboard_dir = root / "tb"});
  ASSERT_NE(w, nullptr);
  writer_gate gate(root / "tb");
  gate.arm(*w);
  ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
  const auto t = random_tensor("t", dtype::float32, {4096}, 10);  // 16 KiB
  std::vector<bool> accepted;
  for (int i = 0; i < 5; ++i) accepted.push_back(w->add_tensor("t_" + std::to_string(i), t.view(), 0.0).value());
  EXPECT_EQ(accepted, (std::vector<bool>{true, true, false, false, false}));
  gate.release();
  ASSERT_TRUE(w->end_step().ok());
  w->close(false);
  const auto c = w->counters();
  EXPECT_EQ(c.tensors_queued, 2u);
  EXPECT_EQ(c.tensors_dropped, 3u);
  EXPECT_EQ(c.tensors_written, 2u);
  EXPECT_TRUE(w->take_errors().empty());
  auto cat = catalog::open(root / "trial");
  ASSERT_TRUE(cat.has_value());
  EXPECT_TRUE(cat->find_tensor("t_1").has_value());
  EXPECT_FALSE(cat->find_tensor("t_2").has_value());
  fs::remove_all(root);
}

TEST(CaptureWriter, TensorLargerThanTheQueueGoesThrough) {
  for (const bool drop : {false, true}) {
    const auto root = trialstat::testing::make_scratch_dir("capture_oversize");
    auto w = start({.out_dir = root, .queue_bytes = 1024, .drop_when_full = drop});
    ASSERT_NE(w, nullptr);
    const auto big = random_tensor("big", dtype::float32, {64, 1024}, 11);  // 256 KiB
    ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
    for (int i = 0; i < 3; ++i) {
      // Blocking: waits until the queue is empty, then is accepted though larger than the bound.
      // Dropping: accepted when the queue is empty (flush), which it then holds alone.
      if (drop) w->flush();
      EXPECT_TRUE(w->add_tensor("big_" + std::to_string(i), big.view(), 0.0).value());
    }
    ASSERT_TRUE(w->end_step().ok());
    w->close(false);
    EXPECT_EQ(w->counters().tensors_written, 3u) << "drop_when_full " << drop;
    EXPECT_TRUE(w->take_errors().empty());
    auto c = catalog::open(root);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(read_tensor(*c, root, "big_2", 0).content, big.bytes);
    fs::remove_all(root);
  }
}

TEST(CaptureWriter, CloseFromAnotherThreadWakesABlockedProducer) {
  const auto root = trialstat::testing::make_scratch_dir("capture_close_wakes");
  auto w = start({.out_dir = root / "trial", .queue_bytes = 16 << 10, .tensorboard_dir = root / "tb"});
  ASSERT_NE(w, nullptr);
  writer_gate gate(root / "tb");
  gate.arm(*w);
  ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
  const auto t = random_tensor("t", dtype::float32, {4096}, 12);
  ASSERT_TRUE(w->add_tensor("t_0", t.view(), 0.0).value());
  std::atomic<bool> returned{false};
  trialstat::status blocked_status;
  std::thread producer([&] {
    blocked_status = w->add_tensor("t_1", t.view(), 0.0).error_status();  // blocks: queue full
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(returned.load());
  std::thread closer([&] { w->close(true); });  // as from atexit
  ASSERT_TRUE(eventually([&] { return returned.load(); }));
  producer.join();
  EXPECT_EQ(blocked_status.code(), error_code::invalid_argument);
  gate.release();
  closer.join();
  EXPECT_TRUE(w->closed());
  EXPECT_TRUE(fs::exists(root / "trial/training_job_end.ts"));
  auto c = catalog::open(root / "trial");
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->find_tensor("t_0").has_value());
  fs::remove_all(root);
}

namespace {

/// Sets RLIMIT_FSIZE (with SIGXFSZ ignored, so writes fail with EFBIG) until `restore`.
class file_size_limit {
 public:
  explicit file_size_limit(rlim_t bytes) {
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit l = old_;
    l.rlim_cur = bytes;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &l), 0);
  }
  ~file_size_limit() { restore(); }
  void restore() {
    if (restored_) return;
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
    restored_ = true;
  }

 private:
  rlimit old_{};
  void (*old_handler_)(int) = SIG_DFL;
  bool restored_ = false;
};

}  // namespace

TEST(CaptureWriter, DiskFullIsReportedOncePerStepAndTheNextStepWorks) {
  const auto root = trialstat::testing::make_scratch_dir("capture_disk_full");
  auto w = start({.out_dir = root});
  ASSERT_NE(w, nullptr);
  const auto small = random_tensor("small", dtype::float32, {16 << 10}, 13);  // 64 KiB: buffered
  const auto large = random_tensor("large", dtype::float32, {1 << 20}, 14);   // 4 MiB: direct write
  {
    file_size_limit limit(16 << 10);
    // Step 0 fails when its buffered event file is flushed at end_step.
    ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
    ASSERT_TRUE(w->add_tensor("small", small.view(), 0.0).value());
    ASSERT_TRUE(w->add_tensor("small2", small.view(), 0.0).value());
    ASSERT_TRUE(w->end_step().ok());
    // Step 1 fails at its first large record; the records after it are skipped silently.
    ASSERT_TRUE(w->begin_step(1, mode::train, 1).ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(w->add_tensor("large_" + std::to_string(i), large.view(), 0.0).value());
    ASSERT_TRUE(w->end_step().ok());
    w->flush();
    limit.restore();
  }
  const auto errors = w->take_errors();
  ASSERT_EQ(errors.size(), 2u) << ::testing::PrintToString(errors);
  EXPECT_NE(errors[0].find("step 0"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("000000000000_worker_0.tfevents.tmp"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("step 1"), std::string::npos) << errors[1];
  EXPECT_NE(errors[1].find("tensor 'large_0'"), std::string::npos) << errors[1];
  EXPECT_NE(errors[1].find("000000000001_worker_0.tfevents.tmp"), std::string::npos) << errors[1];
  auto c = w->counters();
  EXPECT_EQ(c.errors_count, 2u);
  EXPECT_EQ(c.tensors_lost, 5u);
  EXPECT_EQ(c.tensors_written, 0u);
  // The limit is lifted: the next step is written normally.
  ASSERT_TRUE(w->begin_step(2, mode::train, 2).ok());
  ASSERT_TRUE(w->add_tensor("large_0", large.view(), 0.0).value());
  ASSERT_TRUE(w->end_step().ok());
  w->close(true);
  EXPECT_TRUE(w->take_errors().empty());
  c = w->counters();
  EXPECT_EQ(c.tensors_written, 1u);
  EXPECT_FALSE(any_tmp(root));
  auto cat = catalog::open(root);
  ASSERT_TRUE(cat.has_value()) << cat.error_status().to_string();
  EXPECT_EQ(cat->steps(mode::global), (std::vector<int64_t>{2}));
  EXPECT_EQ(read_tensor(*cat, root, "large_0", 2).content, large.bytes);
  fs::remove_all(root);
}

TEST(CaptureWriter, UnwritableOutDirIsReportedWithItsPath) {
  const auto root = trialstat::testing::make_scratch_dir("capture_unwritable");
  { std::ofstream(root / "plain_file") << "x"; }
  const fs::path out_dir = root / "plain_file" / "trial";  // a folder under a regular file
  auto w = start({.out_dir = out_dir});
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->set_collections(hook_collections({})).ok());
  const auto t = float_tensor("x", {1.f});
  for (int64_t step : {0, 1}) {
    ASSERT_TRUE(w->begin_step(step, mode::train, step).ok());
    ASSERT_TRUE(w->add_tensor("x", t.view(), 0.0).value());
    ASSERT_TRUE(w->add_tensor("y", t.view(), 0.0).value());
    ASSERT_TRUE(w->end_step().ok());
  }
  w->close(true);
  const auto errors = w->take_errors();
  ASSERT_EQ(errors.size(), 3u) << ::testing::PrintToString(errors);  // step 0, step 1, close
  for (const auto& e : errors) {
    EXPECT_NE(e.find(fmt::format("cannot create trial folder '{}'", out_dir.string())), std::string::npos) << e;
  }
  EXPECT_TRUE(mentions(errors, "step 1"));
  EXPECT_EQ(w->counters().tensors_lost, 4u);
  fs::remove_all(root);
}

namespace {

/// numpy.histogram(values, bins=edges) then smdebug's trimming, naively (FORMAT §10).
void expected_buckets(const std::vector<double>& values, std::vector<double>& limits,
                      std::vector<double>& counts) {
  const auto edges = trialstat::stats::log_histogram_edges();
  std::vector<double> all(edges.size() - 1, 0.0);
  for (const double v : values) {
    if (!(v >= edges.front() && v <= edges.back())) continue;
    std::size_t i = static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin());
    i = std::min(i, all.size()) - 1;
    all[i] += 1;
  }
  std::size_t first = all.size(), last = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] > 0) {
      first = std::min(first, i);
      last = i;
    }
  }
  limits.clear();
  counts.clear();
  if (first == all.size()) return;
  if (first == 0) counts.push_back(0.0);
  for (std::size_t i = (first == 0 ? 0 : first - 1); i <= last; ++i) counts.push_back(all[i]);
  for (std::size_t i = first; i <= last + 1; ++i) limits.push_back(edges[i]);
}

struct tb_event {
  smdebug::Event event;
  trialstat::io::footer_kind footer;
};

std::vector<tb_event> read_tb_file(const fs::path& path) {
  const auto bytes = trialstat::testing::read_bytes(path);
  trialstat::io::record_scanner scanner(bytes, path.string());
  std::vector<tb_event> out;
  for (;;) {
    auto frame = scanner.next();
    if (!frame) {
      EXPECT_EQ(frame.error_status().code(), error_code::end_of_stream) << frame.error_status().to_string();
      break;
    }
    tb_event e;
    e.footer = frame->footer;
    EXPECT_TRUE(e.event.ParseFromArray(frame->payload.data(), static_cast<int>(frame->payload.size())));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

TEST(CaptureWriter, TensorBoardFilesAtSmdebugPaths) {
  const auto root = trialstat::testing::make_scratch_dir("capture_tensorboard");
  const fs::path tb = root / "tb";
  auto w = start({.out_dir = root / "trial", .tensorboard_dir = tb});
  ASSERT_NE(w, nullptr);
  const std::vector<float> values = {-2.5f, -1e-13f, 0.f, 0.f, 3.25f, 1e5f, 7.f};
  const auto h = float_tensor("fc1.weight", values);
  const auto with_nan = float_tensor("nan", {1.f, std::numeric_limits<float>::quiet_NaN(), 2.f});
  const auto flags = random_tensor("flags", dtype::boolean, {4}, 15);
  // Step 0 (TRAIN): a scalar, two histograms; a bool histogram is skipped as smdebug does.
  ASSERT_TRUE(w->add_tensorboard_scalar("/CrossEntropyLoss output 0", mode::train, 0, 0.75, 10.0).ok());
  EXPECT_TRUE(w->add_tensorboard_histogram("weights/fc1.weight", mode::train, 0, h.view(), 11.0).value());
  EXPECT_TRUE(w->add_tensorboard_histogram("weights/nan", mode::train, 0, with_nan.view(), 12.0).value());
  EXPECT_FALSE(w->add_tensorboard_histogram("weights/flags", mode::train, 0, flags.view(), 12.5).value());
  // A TRAIN record of step 2 still goes to the open TRAIN file (named by the step at open).
  ASSERT_TRUE(w->add_tensorboard_scalar("late", mode::train, 2, 1.5, 13.0).ok());
  ASSERT_TRUE(w->close_tensorboard_files().ok());
  // Step 3 (EVAL): a new file.
  ASSERT_TRUE(w->add_tensorboard_scalar("eval_loss", mode::eval, 3, 2.0, 14.0).ok());
  w->close(false);
  EXPECT_TRUE(w->take_errors().empty());
  EXPECT_EQ(all_files(tb), (std::vector<std::string>{"EVAL/000000000003_4242_testhost.tfevents",
                                                      "TRAIN/000000000000_4242_testhost.tfevents"}));
  EXPECT_EQ(w->counters().tensors_written, 2u);

  const auto train = read_tb_file(capture_writer::tensorboard_file_path(tb, mode::train, 0, suffix));
  ASSERT_EQ(train.size(), 4u);  // no file_version record, like smdebug's FileWriter
  for (const auto& e : train) EXPECT_EQ(e.footer, trialstat::io::footer_kind::payload_crc);
  const auto& scalar = train[0].event;
  EXPECT_EQ(scalar.step(), 0);
  EXPECT_EQ(scalar.wall_time(), 10.0);
  ASSERT_EQ(scalar.summary().value_size(), 1);
  EXPECT_EQ(scalar.summary().value(0).tag(), "CrossEntropyLoss_output_0");
  EXPECT_EQ(scalar.summary().value(0).simple_value(), 0.75f);

  const auto& hist = train[1].event.summary().value(0);
  EXPECT_EQ(hist.tag(), "weights/fc1.weight");
  ASSERT_TRUE(hist.has_histo());
  std::vector<double> as_double(values.begin(), values.end());
  double sum = 0, sum_sq = 0;
  for (double v : as_double) {
    sum += v;
    sum_sq += v * v;
  }
  EXPECT_EQ(hist.histo().min(), -2.5);
  EXPECT_EQ(hist.histo().max(), 1e5);
  EXPECT_EQ(hist.histo().num(), 7.0);
  EXPECT_DOUBLE_EQ(hist.histo().sum(), sum);
  EXPECT_DOUBLE_EQ(hist.histo().sum_squares(), sum_sq);
  std::vector<double> limits, counts;
  expected_buckets(as_double, limits, counts);
  EXPECT_EQ(std::vector<double>(hist.histo().bucket_limit().begin(), hist.histo().bucket_limit().end()), limits);
  EXPECT_EQ(std::vector<double>(hist.histo().bucket().begin(), hist.histo().bucket().end()), counts);

  // NaN: numpy's min/max/sum are NaN, num counts every element, the NaN is in no bucket.
  const auto& nan_hist = train[2].event.summary().value(0).histo();
  EXPECT_TRUE(std::isnan(nan_hist.min()) && std::isnan(nan_hist.max()) && std::isnan(nan_hist.sum()));
  EXPECT_EQ(nan_hist.num(), 3.0);
  double binned = 0;
  for (double b : nan_hist.bucket()) binned += b;
  EXPECT_EQ(binned, 2.0);

  EXPECT_EQ(train[3].event.step(), 2);
  EXPECT_EQ(train[3].event.summary().value(0).tag(), "late");

  const auto eval = read_tb_file(capture_writer::tensorboard_file_path(tb, mode::eval, 3, suffix));
  ASSERT_EQ(eval.size(), 1u);
  EXPECT_EQ(eval[0].event.step(), 3);
  EXPECT_EQ(eval[0].event.summary().value(0).simple_value(), 2.0f);
  fs::remove_all(root);
}

TEST(CaptureWriter, CloseIsIdempotentAndLaterCommandsFail) {
  const auto root = trialstat::testing::make_scratch_dir("capture_close");
  auto w = start({.out_dir = root});
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->set_collections(hook_collections({"w.weight"})).ok());
  ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
  const auto t = float_tensor("w.weight", {1.f, 2.f});
  ASSERT_TRUE(w->add_tensor(t.name, t.view(), 0.0).value());
  // No end_step: close finishes the open step.
  w->close(true);
  w->close(true);
  w->flush();
  EXPECT_TRUE(w->closed());
  EXPECT_EQ(w->begin_step(1, mode::train, 1).code(), error_code::invalid_argument);
  EXPECT_EQ(w->write_collections().code(), error_code::invalid_argument);
  EXPECT_TRUE(w->take_errors().empty());
  EXPECT_EQ(all_files(root),
            (std::vector<std::string>{"collections/000000000/worker_0_collections.json",
                                      "events/000000000000/000000000000_worker_0.tfevents",
                                      "index/000000000/000000000000_worker_0.json",
                                      "training_job_end.ts"}));
  fs::remove_all(root);
}

TEST(CaptureWriter, DestructorWithoutCloseLeavesNoMarkerAndNoTmp) {
  const auto root = trialstat::testing::make_scratch_dir("capture_destructor");
  const auto t = random_tensor("x", dtype::float32, {1024}, 16);
  {
    auto w = start({.out_dir = root / "trial", .tensorboard_dir = root / "tb"});
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(w->set_collections(hook_collections({})).ok());
    ASSERT_TRUE(w->write_collections().ok());
    ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
    ASSERT_TRUE(w->add_tensor("x", t.view(), 0.0).value());
    ASSERT_TRUE(w->end_step().ok());
    w->flush();  // step 0 is final; what follows may or may not reach the thread before the end
    // An open step and an open TB file, then destroyed without close().
    ASSERT_TRUE(w->begin_step(1, mode::train, 1).ok());
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(w->add_tensor("x" + std::to_string(i), t.view(), 0.0).value());
    ASSERT_TRUE(w->add_tensorboard_scalar("loss", mode::train, 1, 1.0, 0.0).ok());
  }
  EXPECT_FALSE(fs::exists(root / "trial/training_job_end.ts"));
  EXPECT_FALSE(any_tmp(root));
  const auto files = all_files(root);
  EXPECT_TRUE(std::find(files.begin(), files.end(), "trial/index/000000000/000000000000_worker_0.json") !=
              files.end())
      << ::testing::PrintToString(files);
  EXPECT_TRUE(std::none_of(files.begin(), files.end(),
                           [](const std::string& f) { return f.find("000000000001") != std::string::npos; }));
  fs::remove_all(root);
}

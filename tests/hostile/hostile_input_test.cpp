// SPDX-License-Identifier: Apache-2.0
// Issue 12, "Found when tried": each hostile input a new user met, as a regression test. Trials are
// written by trialstat's own trial writer and then damaged the way the issue describes (index
// lengths of 2^64 − 1, a flipped CRC bit, a deleted events/ folder, a misspelt index key, FIFOs,
// oversized JSON, huge mode steps); every case must end in a result or a clear error naming the
// file — and records that could not be read must be reported, never silently skipped.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "host/pipeline/step_reader.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/rules/rule_config.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/trial/name_regex.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat {
namespace {

namespace fs = std::filesystem;

/// One float32 tensor per step: `big` ([n] values 1..n, n chosen so the event file passes 1 MiB
/// when `n_big` is large) and `loss` (a scalar), steps 0..num_steps−1, TRAIN mode.
fs::path write_trial(const std::string& label, int num_steps, int64_t n_big = 64,
                     std::vector<int64_t> mode_steps = {}) {
  const fs::path root = testing::make_scratch_dir(label);
  writer::writer_options options;
  options.collections = writer::pytorch_default_collections(1);
  auto w = writer::trial_writer::create(root, "worker_0", options);
  EXPECT_TRUE(w.has_value()) << w.error_status().to_string();
  for (int s = 0; s < num_steps; ++s) {
    const int64_t mode_step = mode_steps.empty() ? s : mode_steps[static_cast<std::size_t>(s)];
    EXPECT_TRUE(w->begin_step(s, mode::train, mode_step).ok());
    std::vector<float> big(static_cast<std::size_t>(n_big));
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i + 1);
    const std::vector<int64_t> shape{n_big};
    EXPECT_TRUE(w->add_tensor("big", {reinterpret_cast<const std::byte*>(big.data()), dtype::float32,
                                      shape, n_big, memory_kind::host}).ok());
    const float loss = 1.0f + static_cast<float>(s);  // increasing: LossNotDecreasing fires
    EXPECT_TRUE(w->add_tensor("loss_output", {reinterpret_cast<const std::byte*>(&loss), dtype::float32,
                                              {}, 1, memory_kind::host}).ok());
    EXPECT_TRUE(w->end_step().ok());
  }
  EXPECT_TRUE(w->close(true).ok());
  return root;
}

fs::path index_file(const fs::path& root, int step) {
  return root / "index/000000000" / fmt::format("{:012d}_worker_0.json", step);
}
fs::path event_file(const fs::path& root, int step) {
  return root / "events" / fmt::format("{:012d}", step) / fmt::format("{:012d}_worker_0.tfevents", step);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

/// Rewrite the `length` of the first record of `tensor` in an index file.
void set_index_length(const fs::path& index, const std::string& tensor, const std::string& length) {
  std::string text = slurp(index);
  const auto at = text.find("\"tensorname\": \"" + tensor + "\"");
  ASSERT_NE(at, std::string::npos) << text;
  const auto key = text.find("\"length\": ", at);
  ASSERT_NE(key, std::string::npos);
  const auto begin = key + 10;
  const auto end = text.find_first_of(",}", begin);
  text.replace(begin, end - begin, length);
  spit(index, text);
}

result<std::vector<pipeline::rule_result>> run_rules(const trial::catalog& trial,
                                                     std::vector<std::pair<std::string, rules::rule_parameters>> specs,
                                                     bool strict = false) {
  std::vector<pipeline::rule_invocation> invocations;
  for (auto& [name, params] : specs) {
    pipeline::rule_invocation inv;
    inv.configuration_name = name;
    auto made = rules::make_rule(name, params);
    if (made) {
      inv.rule = std::move(*made);
    } else {
      inv.error = made.error_status();
    }
    invocations.push_back(std::move(inv));
  }
  pipeline::pipeline_options options;
  options.strict = strict;
  return pipeline::evaluate_rules(trial, invocations, options);
}

bool any_warning_contains(const trial::catalog& c, const std::string& text) {
  for (const auto& w : c.warnings()) {
    if (w.problem.to_string().find(text) != std::string::npos) return true;
  }
  return false;
}

// ---- heap overflow: index lengths that wrap -------------------------------------------------------

TEST(HostileIndex, LengthOf2To64Minus1OnAFileOverOneMiBIsASkippedRecordNotAHeapOverflow) {
  // 300,000 float32 elements: each event file is ~1.2 MB (> 1 MiB: the ranges path).
  const fs::path root = write_trial("hostile_len_max", 3, 300'000);
  ASSERT_GT(fs::file_size(event_file(root, 1)), uint64_t{1} << 20);
  set_index_length(index_file(root, 1), "big", "18446744073709551615");
  set_index_length(index_file(root, 2), "big", "9223372036854775808");   // 2^63: was length_error
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value()) << trial.error_status().to_string();
  auto results = run_rules(*trial, {{"ExplodingTensor", {}}});
  ASSERT_TRUE(results.has_value()) << results.error_status().to_string();
  const pipeline::rule_result& r = (*results)[0];
  EXPECT_EQ(r.status, rules::rule_status::no_issues_found) << r.status_details;
  ASSERT_EQ(r.skipped.size(), 2u);
  for (const auto& k : r.skipped) {
    EXPECT_EQ(k.tensor, "big");
    EXPECT_EQ(k.offset_bytes, 0u);  // the first record of the file
    EXPECT_NE(k.file.find("_worker_0.tfevents"), std::string::npos) << k.file;
    EXPECT_FALSE(k.reason.ok());
  }
  EXPECT_EQ(r.skipped[0].step, 1);
  EXPECT_EQ(r.skipped[1].step, 2);
  // Strict: the same records make the rule Error.
  auto strict = run_rules(*trial, {{"ExplodingTensor", {}}}, /*strict=*/true);
  ASSERT_TRUE(strict.has_value());
  EXPECT_EQ((*strict)[0].status, rules::rule_status::error);
  EXPECT_NE((*strict)[0].status_details.find("strict"), std::string::npos);
}

TEST(HostileIndex, EventFileBytesLoadClampsWrappingRangesToTheFile) {
  const fs::path dir = testing::make_scratch_dir("hostile_load");
  const fs::path path = dir / "f.bin";
  std::string bytes(3 << 20, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  spit(path, bytes);
  auto reader = io::file_reader::open(path);
  ASSERT_TRUE(reader.has_value());
  pipeline::detail::event_file_bytes file;
  constexpr uint64_t huge = std::numeric_limits<uint64_t>::max();
  // Two lengths whose sum wraps, one past the end: ranges path (whole-file limit 0).
  const std::vector<io::byte_range> ranges{{0, huge}, {100, huge - 50}, {10u << 20, 5}};
  auto loaded = file.load(*reader, ranges, /*whole_file_limit_bytes=*/0);
  ASSERT_TRUE(loaded.has_value()) << loaded.error_status().to_string();
  EXPECT_EQ(*loaded, static_cast<int64_t>(2 * bytes.size() - 100));
  const auto first = file.record(0, huge);
  ASSERT_EQ(first.size(), bytes.size());
  EXPECT_EQ(std::memcmp(first.data(), bytes.data(), bytes.size()), 0);
  const auto second = file.record(100, huge - 50);
  ASSERT_EQ(second.size(), bytes.size() - 100);
  EXPECT_EQ(std::memcmp(second.data(), bytes.data() + 100, second.size()), 0);
  EXPECT_TRUE(file.record(10u << 20, 5).empty());
}

// ---- silent skips ---------------------------------------------------------------------------------

TEST(SkippedRecords, AFlippedLengthCrcBitIsReportedPerRule) {
  const fs::path root = write_trial("hostile_crc", 3);
  {  // TFRecord: u64 length, u32 masked CRC of the length (bytes 8..11): flip one bit.
    std::fstream f(event_file(root, 1), std::ios::binary | std::ios::in | std::ios::out);
    f.seekg(9);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(9);
    f.write(&c, 1);
  }
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value());
  auto results = run_rules(*trial, {{"ExplodingTensor", {}}, {"LossNotDecreasing", {{"tensor_regex", "loss"}}}});
  ASSERT_TRUE(results.has_value());
  const auto& exploding = (*results)[0];
  ASSERT_EQ(exploding.skipped.size(), 1u);
  EXPECT_EQ(exploding.skipped[0].step, 1);
  EXPECT_EQ(exploding.skipped[0].reason.code(), error_code::data_loss);
  // LossNotDecreasing reads only loss_output, whose record (after `big`) is intact.
  EXPECT_TRUE((*results)[1].skipped.empty());
}

TEST(SkippedRecords, DeletedEventsFolderIsReportedNotNoIssuesFound) {
  const fs::path root = write_trial("hostile_no_events", 4);
  fs::remove_all(root / "events");
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value());
  auto results = run_rules(*trial, {{"ExplodingTensor", {}}});
  ASSERT_TRUE(results.has_value());
  const auto& r = (*results)[0];
  EXPECT_EQ(r.skipped.size(), 8u);  // 2 tensors x 4 steps
  for (const auto& k : r.skipped) EXPECT_EQ(k.reason.code(), error_code::io_error) << k.reason.to_string();
}

TEST(SkippedRecords, MisspeltIndexKeyIsAWarningNamingTheFile) {
  const fs::path root = write_trial("hostile_key", 2);
  std::string text = slurp(index_file(root, 1));
  const auto at = text.find("\"tensor_payload\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 16, "\"tensor_Payload\"");
  spit(index_file(root, 1), text);
  trial::catalog_options options;
  options.scan_missing_index = false;
  auto trial = trial::catalog::open(root, options);
  ASSERT_TRUE(trial.has_value());
  bool named = false;
  for (const auto& w : trial->warnings()) {
    const std::string s = w.problem.to_string();
    if (s.find("tensor_Payload") != std::string::npos && s.find("000000000001_worker_0.json") != std::string::npos) {
      named = true;
    }
  }
  EXPECT_TRUE(named);
}

// ---- files that must not hang or be read whole ----------------------------------------------------

TEST(HostileFiles, FifosAreRefusedWithoutBlocking) {
  const fs::path dir = testing::make_scratch_dir("hostile_fifo");
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto reader = io::file_reader::open(fifo);  // blocked forever before the fix
  ASSERT_FALSE(reader.has_value());
  EXPECT_NE(reader.error_status().message().find("not a regular file"), std::string::npos);
  std::string text;
  EXPECT_FALSE(io::read_text_file(fifo, text).ok());
  auto config = rules::load_rule_config(fifo);
  ASSERT_FALSE(config.has_value());
  EXPECT_NE(config.error_status().message().find("not a regular file"), std::string::npos);

  // An event file that is a FIFO: its records are skipped (reported), the run finishes.
  const fs::path root = write_trial("hostile_fifo_event", 2);
  fs::remove(event_file(root, 1));
  ASSERT_EQ(::mkfifo(event_file(root, 1).c_str(), 0600), 0);
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value());
  auto results = run_rules(*trial, {{"ExplodingTensor", {}}});
  ASSERT_TRUE(results.has_value());
  EXPECT_EQ((*results)[0].skipped.size(), 2u);
}

TEST(HostileFiles, OversizedIndexAndCollectionsFilesAreRefusedNotReadWhole) {
  const fs::path root = write_trial("hostile_big_json", 2);
  // Sparse files over the cap: no disk used, and none may be read into memory.
  for (const fs::path& p : {index_file(root, 1), root / "collections/000000000/worker_0_collections.json"}) {
    ASSERT_TRUE(fs::exists(p)) << p;
    fs::resize_file(p, io::json_file_limit_bytes + 1);
  }
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value());
  EXPECT_TRUE(any_warning_contains(*trial, "000000000001_worker_0.json"));
  EXPECT_TRUE(any_warning_contains(*trial, "larger than the limit"));
  EXPECT_TRUE(any_warning_contains(*trial, "worker_0_collections.json"));
  std::vector<std::byte> buffer;
  auto read = io::read_file(index_file(root, 1), buffer, io::json_file_limit_bytes);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error_status().code(), error_code::out_of_memory);
  EXPECT_LT(buffer.capacity(), std::size_t{1} << 20);
}

TEST(HostileFiles, UnreadableTrialFolderIsAnErrorNotAnEmptyTrial) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permission bits do not apply";
  const fs::path root = write_trial("hostile_mode000", 2);
  fs::permissions(root / "collections/000000000", fs::perms::none);
  auto trial = trial::catalog::open(root);
  fs::permissions(root / "collections/000000000", fs::perms::owner_all);
  EXPECT_FALSE(trial.has_value());
  fs::permissions(root, fs::perms::none);
  auto again = trial::catalog::open(root);
  fs::permissions(root, fs::perms::owner_all);
  EXPECT_FALSE(again.has_value());
}

TEST(HostileFiles, ThousandsOfRulesDoNotHoldFileDescriptors) {
  const fs::path root = write_trial("hostile_fds", 3);
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value());
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = std::min<rlim_t>(old.rlim_cur, 256);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  // StalledTrainingRule reads one record per step for its wall time: 2,000 of them used to keep
  // 2,000 files open; those whose open failed skipped quietly.
  std::vector<std::pair<std::string, rules::rule_parameters>> specs(
      2000, {"StalledTrainingRule", {{"threshold", "0"}}});
  auto results = run_rules(*trial, specs);
  ::setrlimit(RLIMIT_NOFILE, &old);
  ASSERT_TRUE(results.has_value()) << results.error_status().to_string();
  for (const auto& r : *results) {
    ASSERT_NE(r.status, rules::rule_status::error) << r.status_details;
    ASSERT_EQ(r.status, (*results)[0].status);
    ASSERT_EQ(r.findings.size(), (*results)[0].findings.size());
  }
}

// ---- parameters, selections, regexes --------------------------------------------------------------

TEST(HostileParameters, NanThresholdIsAnErrorAndUnknownCollectionAWarning) {
  auto nan_rule = rules::make_rule("VanishingGradient", {{"threshold", "nan"}});
  ASSERT_FALSE(nan_rule.has_value());
  EXPECT_NE(nan_rule.error_status().message().find("threshold"), std::string::npos);
  EXPECT_TRUE(rules::make_rule("VanishingGradient", {{"threshold", "inf"}}).has_value());

  const fs::path root = write_trial("hostile_collection", 2);
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value());
  auto results = run_rules(*trial, {{"ExplodingTensor", {{"collection_names", "no_such_collection"}}}});
  ASSERT_TRUE(results.has_value());
  ASSERT_EQ((*results)[0].warnings.size(), 1u);
  EXPECT_NE((*results)[0].warnings[0].find("no_such_collection"), std::string::npos);
}

TEST(HostileRegex, AMatchPastPcre2sLimitIsAnErrorNamingTheRegexNotNoMatch) {
  auto rx = trial::name_regex::compile("(\\w+\\s?)+$");
  ASSERT_TRUE(rx.has_value());
  const std::string name = std::string(40, 'a').append("!");
  auto found = rx->find(name);
  ASSERT_FALSE(found.has_value()) << "matched: " << (found.has_value() && *found);
  EXPECT_NE(found.error_status().message().find("(\\w+\\s?)+$"), std::string::npos);
  // Decidable patterns are unaffected.
  auto fine = trial::name_regex::compile("^(?!gradient).*weight");
  ASSERT_TRUE(fine.has_value());
  EXPECT_TRUE(*fine->find("fc.weight"));
  EXPECT_FALSE(*fine->find("gradient/fc.weight"));
}

// ---- signed overflow from index values ------------------------------------------------------------

TEST(HostileSteps, LossNotDecreasingWithModeStepsNearInt64MaxDoesNotWrap) {
  constexpr int64_t top = std::numeric_limits<int64_t>::max();
  const fs::path root = write_trial("hostile_mode_step", 3, 4, {0, top - 5, top});
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value());
  auto results = run_rules(*trial, {{"LossNotDecreasing", {{"tensor_regex", "loss_output"}, {"num_steps", "10"}}}});
  ASSERT_TRUE(results.has_value());
  // Evaluated at mode step top − 5 (baseline 0); the next evaluation would be at top − 5 + 10,
  // past int64: never (it used to wrap negative and evaluate at `top` again).
  EXPECT_EQ((*results)[0].findings.size(), 1u);
}

// ---- files that shrink under a mapping (item 5) ---------------------------------------------------

TEST(ShrinkingFiles, AMappedFileTruncatedUnderTheMappingReadsZerosAndSaysSoInsteadOfSigbus) {
  const fs::path dir = testing::make_scratch_dir("hostile_sigbus_unit");
  const fs::path path = dir / "f.bin";
  spit(path, std::string(1 << 20, 'x'));
  auto reader = io::file_reader::open(path);
  ASSERT_TRUE(reader.has_value());
  auto mapped = reader->map_all();
  ASSERT_TRUE(mapped.has_value()) << mapped.error_status().to_string();
  EXPECT_FALSE(mapped->damaged());
  EXPECT_EQ(static_cast<char>(mapped->data()[1000]), 'x');
  fs::resize_file(path, 0);  // another process truncates the file
  const volatile std::byte* bytes = mapped->data();
  long sum = 0;
  for (std::size_t i = 0; i < mapped->size_bytes(); i += 4096) sum += static_cast<long>(bytes[i]);  // SIGBUS before
  EXPECT_EQ(sum, 0);
  EXPECT_TRUE(mapped->damaged());
  mapped->reset();
  auto again = io::file_reader::open(path);
  ASSERT_TRUE(again.has_value());
  auto fresh = again->map_all();  // the slot is free and clean again
  ASSERT_TRUE(fresh.has_value());
  EXPECT_FALSE(fresh->damaged());
}

TEST(ShrinkingFiles, AStepWhoseMappedEventFileIsTruncatedWhileReadFailsItsRecordsOnly) {
  // 300,000 float32 elements: ~1.2 MB event files, mapped by the CPU pipeline (>= 256 KiB).
  const fs::path root = write_trial("hostile_sigbus_pipeline", 3, 300'000);
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value());
  plan::read_plan plan;
  stats::statistics_request request;
  request.moments = true;
  for (const auto t : trial->sorted_tensor_ids()) plan.request(t, request);
  pipeline::pipeline_options options;
  ASSERT_TRUE(options.map_event_files);
  std::vector<std::pair<int64_t, bool>> seen;  // (step, all records ok)
  auto run = pipeline::run_statistics(*trial, plan, options, [&](const stats::step_statistics& step) {
    bool all_ok = true;
    for (const auto& r : step.records) all_ok = all_ok && r.raw_status.ok() && r.moments.has_value();
    seen.emplace_back(step.step, all_ok);
    if (step.step == 0) fs::resize_file(event_file(root, 1), 0);  // step 1 may be mapped already
  });
  ASSERT_TRUE(run.has_value()) << run.error_status().to_string();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_TRUE(seen[0].second);
  EXPECT_FALSE(seen[1].second);
  EXPECT_TRUE(seen[2].second);
}

}  // namespace
}  // namespace trialstat

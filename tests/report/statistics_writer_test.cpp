// SPDX-License-Identifier: Apache-2.0
// report::statistics_writer end to end on a small written trial: the JSON Lines schema of
// `trialstat stats` (statistics_writer.hpp), the update ratio against the previous step, and the
// CSV header, with values computed by hand.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/files.hpp"
#include "tests/report/writer_output.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/report/statistics_writer.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat {
namespace {

/// Collection weights at steps 0 and 1: "fc.weight" [1, -2, 0, NaN] then [1.5, -2, 0, NaN];
/// "fc2.weight" [3, 4] then [3, 4.5].
std::filesystem::path write_two_steps() {
  const auto root = testing::make_scratch_dir("report_writer");
  writer::writer_options options;
  writer::collection_spec weights;
  weights.name = "weights";
  weights.tensor_names = {"fc.weight", "fc2.weight"};
  options.collections = {weights};
  auto w = writer::trial_writer::create(root, "worker_0", options);
  EXPECT_TRUE(w.has_value()) << w.error_status().to_string();
  const std::vector<int64_t> shape = {2, 2};
  const float steps[2][4] = {{1.0f, -2.0f, 0.0f, NAN}, {1.5f, -2.0f, 0.0f, NAN}};
  const std::vector<int64_t> shape2 = {2};
  const float steps2[2][2] = {{3.0f, 4.0f}, {3.0f, 4.5f}};
  for (int s = 0; s < 2; ++s) {
    const tensor_view view{reinterpret_cast<const std::byte*>(steps[s]), dtype::float32, shape, 4,
                           memory_kind::host};
    const tensor_view view2{reinterpret_cast<const std::byte*>(steps2[s]), dtype::float32, shape2, 2,
                            memory_kind::host};
    EXPECT_TRUE(w->begin_step(s, mode::train, s).ok());
    EXPECT_TRUE(w->add_tensor("fc.weight", view).ok());
    EXPECT_TRUE(w->add_tensor("fc2.weight", view2).ok());
    EXPECT_TRUE(w->end_step().ok());
  }
  EXPECT_TRUE(w->close(true).ok());
  return root;
}

/// `trialstat stats` on `root` in `format`, with 4-bin histograms: the writer's whole output.
std::string stats_output(const std::filesystem::path& root, report::output_format format) {
  return testing::writer_output(root, format, {.histogram_bins = 4});
}

TEST(StatisticsWriter, JsonRowsCarryTheStatisticsAndTheUpdateRatio) {
  const auto root = write_two_steps();
  std::istringstream lines(stats_output(root, report::output_format::json));
  std::map<std::pair<std::string, int>, nlohmann::json> rows;  // (tensor, step) -> row
  for (std::string line; std::getline(lines, line);) {
    auto row = nlohmann::json::parse(line);
    rows[{row["tensor"].get<std::string>(), row["step"].get<int>()}] = row;
  }
  ASSERT_EQ(rows.size(), 4u);
  const nlohmann::json& first = rows[{"fc.weight", 0}];
  EXPECT_EQ(first["tensor"], "fc.weight");
  EXPECT_EQ(first["step"], 0);
  EXPECT_EQ(first["mode"], "TRAIN");
  EXPECT_EQ(first["worker"], "worker_0");
  EXPECT_EQ(first["dtype"], "float32");
  EXPECT_EQ(first["shape"], nlohmann::json::array({2, 2}));
  EXPECT_EQ(first["numel"], 4);
  EXPECT_EQ(first["finite_count"], 3);
  EXPECT_EQ(first["nan_count"], 1);
  EXPECT_EQ(first["zero_count"], 1);
  EXPECT_EQ(first["min"], -2.0);
  EXPECT_EQ(first["max"], 1.0);
  EXPECT_DOUBLE_EQ(first["mean"].get<double>(), -1.0 / 3.0);
  EXPECT_DOUBLE_EQ(first["l1"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(first["l2"].get<double>(), std::sqrt(5.0));
  EXPECT_EQ(first["hist"]["bins"], 4);
  EXPECT_EQ(first["hist"]["counts"], nlohmann::json::array({1, 0, 1, 1}));  // [-2,-1.25) .. [0.25,1]
  EXPECT_FALSE(first.contains("update_ratio"));  // no previous step
  // ‖W_1 − W_0‖₂ / (‖W_0‖₂ + 1e-9), IEEE: the NaN element makes the difference's norm NaN (as
  // numpy's norm of the difference does), written as "NaN".
  const nlohmann::json& second = rows[{"fc.weight", 1}];
  ASSERT_TRUE(second.contains("update_ratio"));
  EXPECT_EQ(second["update_ratio"]["prev_step"], 0);
  EXPECT_EQ(second["update_ratio"]["ratio"], "NaN");
  const nlohmann::json& finite = rows[{"fc2.weight", 1}];
  ASSERT_TRUE(finite.contains("update_ratio"));
  EXPECT_EQ(finite["update_ratio"]["prev_step"], 0);
  EXPECT_DOUBLE_EQ(finite["update_ratio"]["ratio"].get<double>(), 0.5 / (5.0 + report::update_ratio_epsilon));
  std::filesystem::remove_all(root);
}

/// Float32 tensors whose statistics repeat values and their negations, in one step:
/// a [-2.5, 0.75] (linf = -min, lo = min, hi = max), b [-0.75, 0.1] (min = -(a's max)),
/// c [-0.0, 0.0], d [0.5, 0.5, 0.5] (min = max = linf = mean).
std::filesystem::path write_repeating_values() {
  const auto root = testing::make_scratch_dir("report_writer_repeats");
  auto w = writer::trial_writer::create(root, "worker_0", {});
  EXPECT_TRUE(w.has_value()) << w.error_status().to_string();
  EXPECT_TRUE(w->begin_step(0, mode::train, 0).ok());
  const std::vector<std::pair<std::string, std::vector<float>>> tensors = {
      {"a", {-2.5f, 0.75f}}, {"b", {-0.75f, 0.1f}}, {"c", {-0.0f, 0.0f}}, {"d", {0.5f, 0.5f, 0.5f}}};
  for (const auto& [name, values] : tensors) {
    const std::vector<int64_t> shape = {static_cast<int64_t>(values.size())};
    const tensor_view view{reinterpret_cast<const std::byte*>(values.data()), dtype::float32, shape,
                           static_cast<int64_t>(values.size()), memory_kind::host};
    EXPECT_TRUE(w->add_tensor(name, view).ok());
  }
  EXPECT_TRUE(w->end_step().ok());
  EXPECT_TRUE(w->close(true).ok());
  return root;
}

TEST(StatisticsWriter, JsonNumbersAreTheirShortestTextWhenValuesRepeat) {
  // The writer reuses the text of recently formatted values (and of their negations): every
  // number must still be exactly fmt's "{}" text of its value.
  const auto root = write_repeating_values();
  const std::string out = stats_output(root, report::output_format::json);
  const std::regex number("\"(min|max|mean|variance|std|sum|l1|l2|linf|mean_abs|lo|hi)\":(-?[0-9][^,}\\]]*)");
  int checked = 0;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), number); it != std::sregex_iterator(); ++it) {
    const std::string text = (*it)[2].str();
    EXPECT_EQ(text, fmt::format("{}", std::stod(text))) << (*it)[1].str() << " in " << out;
    ++checked;
  }
  EXPECT_EQ(checked, 4 * 12);  // 10 moments + lo + hi per record
  EXPECT_NE(out.find("\"min\":-2.5,"), std::string::npos) << out;
  EXPECT_NE(out.find("\"linf\":2.5,"), std::string::npos) << out;
  EXPECT_NE(out.find("\"min\":-0.75,"), std::string::npos) << out;
  std::filesystem::remove_all(root);
}

TEST(StatisticsWriter, CsvHasOneHeaderAndOneRowPerRecord) {
  const auto root = write_two_steps();
  std::istringstream lines(stats_output(root, report::output_format::csv));
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].rfind("tensor,step,mode,mode_step,worker,", 0), 0u) << rows[0];
  EXPECT_EQ(rows[1].rfind("fc.weight,0,TRAIN,0,worker_0,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[2].rfind("fc2.weight,0,TRAIN,0,worker_0,", 0), 0u) << rows[2];
  EXPECT_EQ(rows[3].rfind("fc.weight,1,TRAIN,1,worker_0,", 0), 0u) << rows[3];
  std::filesystem::remove_all(root);
}

TEST(StatisticsWriter, UnknownFormatIsNamed) {
  const auto parsed = report::parse_output_format("yaml");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_NE(parsed.error_status().message().find("yaml"), std::string::npos)
      << parsed.error_status().message();
}

}  // namespace
}  // namespace trialstat

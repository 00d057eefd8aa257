// SPDX-License-Identifier: Apache-2.0
// Actions: stop-signal files (write / passed), commands through posix_spawn (argv without a
// shell, a string through /bin/sh -c, the finding's environment, errors, the timeout kill), and
// the `"Actions"` entry of a SageMaker rule config.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "tests/support/files.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/actions/actions.hpp"
#include "trialstat/rules/rule_config.hpp"

namespace fs = std::filesystem;
namespace act = trialstat::actions;
using namespace std::chrono_literals;
using trialstat::error_code;
using trialstat::testing::read_text_file;

namespace {

std::chrono::system_clock::time_point at_seconds(int64_t s) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(s));
}

act::fire_context sample_context(const fs::path& trial) {
  act::fire_context c;
  c.rule = "ExplodingTensor";
  c.configuration_name = "my exploding";
  c.trial = trial;
  c.finding.rule = "ExplodingTensor";
  c.finding.step = 42;
  c.finding.mode = trialstat::mode::eval;
  c.finding.mode_step = 7;
  c.finding.tensor = "gradient/fc'1\".weight";  // quotes must reach the command unharmed
  c.finding.worker = "worker_3";
  c.finding.value = 0.1;
  c.finding.message = "3 NaN; `rm -rf /` $(whoami)";  // never interpreted by a shell of ours
  return c;
}

}  // namespace

TEST(StopSignal, WriteAndPassed) {
  const fs::path dir = trialstat::testing::make_scratch_dir("actions_stop");
  const fs::path file = dir / "nested" / "stop_signal";
  ASSERT_TRUE(act::write_stop_signal_file(file, at_seconds(1700000123)).ok());
  EXPECT_EQ(read_text_file(file), "1700000123");
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
  // now > T + grace
  EXPECT_FALSE(act::stop_signal_passed(file, at_seconds(1700000123 + 60), 60s));
  EXPECT_TRUE(act::stop_signal_passed(file, at_seconds(1700000123 + 61), 60s));
  EXPECT_TRUE(act::stop_signal_passed(file, at_seconds(1700000124), 0s));
  EXPECT_FALSE(act::stop_signal_passed(dir / "absent", at_seconds(1800000000), 0s));
  // Whitespace around the number is fine; anything else counts as finished (RULES §1).
  std::ofstream(dir / "spaced") << " 1700000123\n";
  EXPECT_FALSE(act::stop_signal_passed(dir / "spaced", at_seconds(1700000123), 0s));
  std::ofstream(dir / "garbage") << "soon";
  EXPECT_TRUE(act::stop_signal_passed(dir / "garbage", at_seconds(0), 60s));
  std::ofstream(dir / "empty");
  EXPECT_TRUE(act::stop_signal_passed(dir / "empty", at_seconds(0), 60s));
}

TEST(Commands, FindingEnvironment) {
  const auto env = act::finding_environment(sample_context("/trials/t"));
  const std::vector<std::string> expected = {
      "TRIALSTAT_RULE=ExplodingTensor", "TRIALSTAT_RULE_CONFIGURATION=my exploding",
      "TRIALSTAT_STATUS=IssuesFound",   "TRIALSTAT_TRIAL=/trials/t",
      "TRIALSTAT_STEP=42",              "TRIALSTAT_MODE=EVAL",
      "TRIALSTAT_MODE_STEP=7",          "TRIALSTAT_TENSOR=gradient/fc'1\".weight",
      "TRIALSTAT_WORKER=worker_3",      "TRIALSTAT_VALUE=0.1",
      "TRIALSTAT_MESSAGE=3 NaN; `rm -rf /` $(whoami)"};
  EXPECT_EQ(env, expected);
  auto c = sample_context("/t");
  c.finding.value = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(act::finding_environment(c)[9], "TRIALSTAT_VALUE=nan");
  c.finding.value = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(act::finding_environment(c)[9], "TRIALSTAT_VALUE=-inf");
}

// argv runs without a shell: metacharacters in arguments and in the environment stay text.
TEST(Commands, ArgvAndShellWithEnvironment) {
  const fs::path dir = trialstat::testing::make_scratch_dir("actions_cmd");
  act::command_runner runner;
  const auto env = act::finding_environment(sample_context(dir));
  // printenv writes to stdout, which the runner sends to stderr: use a file via sh's argv.
  auto argv_pid = runner.start({"/bin/sh", "-c", "printf '%s|%s|%s' \"$1\" \"$TRIALSTAT_TENSOR\" \"$TRIALSTAT_MESSAGE\" > \"$2\"",
                                "sh", "$(touch pwned); *", (dir / "argv.txt").string()},
                               "", env, "r1");
  ASSERT_TRUE(argv_pid.has_value()) << argv_pid.error_status().to_string();
  auto shell_pid = runner.start({}, "echo \"$TRIALSTAT_STEP $TRIALSTAT_WORKER\" > '" + (dir / "sh.txt").string() + "'; exit 7",
                                env, "r2");
  ASSERT_TRUE(shell_pid.has_value());
  EXPECT_EQ(runner.running_count(), 2u);
  const auto exits = runner.wait_all(5s);
  ASSERT_EQ(exits.size(), 2u);
  for (const auto& e : exits) {
    ASSERT_TRUE(e.exit_code.has_value());
    EXPECT_EQ(*e.exit_code, e.rule == "r1" ? 0 : 7);
    EXPECT_FALSE(e.killed_at_timeout);
  }
  EXPECT_EQ(read_text_file(dir / "argv.txt"),
            "$(touch pwned); *|gradient/fc'1\".weight|3 NaN; `rm -rf /` $(whoami)");
  EXPECT_EQ(read_text_file(dir / "sh.txt"), "42 worker_3\n");
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  EXPECT_FALSE(fs::exists("pwned"));
}

TEST(Commands, ErrorsAndTimeout) {
  act::command_runner runner;
  auto missing = runner.start({"trialstat-no-such-program-xyz"}, "", {}, "r");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error_status().code(), error_code::io_error);
  EXPECT_NE(missing.error_status().message().find("trialstat-no-such-program-xyz"), std::string::npos);
  auto nothing = runner.start({}, "", {}, "r");
  ASSERT_FALSE(nothing.has_value());
  EXPECT_EQ(nothing.error_status().code(), error_code::invalid_argument);

  auto slow = runner.start({"sleep", "30"}, "", {}, "slow");
  ASSERT_TRUE(slow.has_value());
  EXPECT_TRUE(runner.reap().empty());
  const auto t0 = std::chrono::steady_clock::now();
  const auto exits = runner.wait_all(100ms);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_TRUE(exits[0].killed_at_timeout);
  EXPECT_EQ(exits[0].signal, SIGTERM);
  EXPECT_EQ(runner.running_count(), 0u);
}

TEST(Actions, FireRunsEachAction) {
  const fs::path trial = trialstat::testing::make_scratch_dir("actions_fire");
  act::command_runner runner;
  trialstat::rules::rule_actions what;
  what.stop_signal_file = "signals/stop";
  what.shell_command = "printf '%s' \"$TRIALSTAT_RULE_CONFIGURATION\" > \"$TRIALSTAT_TRIAL/cfg.txt\"";
  what.exit_status = 4;
  const auto reports = act::fire(what, sample_context(trial), at_seconds(1700000500), runner);
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0].action, "stop_signal_file");
  EXPECT_TRUE(reports[0].outcome.ok());
  EXPECT_EQ(read_text_file(trial / "signals/stop"), "1700000500");
  EXPECT_EQ(reports[1].action, "command");
  EXPECT_TRUE(reports[1].outcome.ok()) << reports[1].description;
  EXPECT_EQ(reports[2].action, "exit_status");
  EXPECT_EQ(reports[2].exit_status, 4);
  ASSERT_EQ(runner.wait_all(5s).size(), 1u);
  EXPECT_EQ(read_text_file(trial / "cfg.txt"), "my exploding");

  // A failing action is reported, never fatal.
  trialstat::rules::rule_actions broken;
  broken.command = {"trialstat-no-such-program-xyz"};
  const auto failed = act::fire(broken, sample_context(trial), at_seconds(0), runner);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_FALSE(failed[0].outcome.ok());
  EXPECT_TRUE(act::fire({}, sample_context(trial), at_seconds(0), runner).empty());
}

TEST(RuleConfigActions, Parsed) {
  auto parsed = trialstat::rules::parse_rule_config(R"([
    {"RuleConfigurationName": "a", "RuleParameters": {"rule_to_invoke": "ExplodingTensor"},
     "Actions": {"stop_signal_file": "stop", "command": ["notify.sh", "--flag"], "exit_status": 3}},
    {"RuleParameters": {"rule_to_invoke": "VanishingGradient"},
     "Actions": {"command": "notify.sh \"$TRIALSTAT_RULE\"", "exit_status": "0"}},
    {"RuleParameters": {"rule_to_invoke": "DeadRelu"}, "Actions": null},
    {"RuleParameters": {"rule_to_invoke": "AllZero", "collection_names": "weights"}}])");
  ASSERT_TRUE(parsed.has_value()) << parsed.error_status().to_string();
  ASSERT_EQ(parsed->size(), 4u);
  const auto& a = (*parsed)[0].actions;
  EXPECT_EQ(a.stop_signal_file, "stop");
  EXPECT_EQ(a.command, (std::vector<std::string>{"notify.sh", "--flag"}));
  EXPECT_TRUE(a.shell_command.empty());
  EXPECT_EQ(a.exit_status, 3);
  const auto& b = (*parsed)[1].actions;
  EXPECT_TRUE(b.command.empty());
  EXPECT_EQ(b.shell_command, "notify.sh \"$TRIALSTAT_RULE\"");
  EXPECT_EQ(b.exit_status, 0);
  EXPECT_TRUE((*parsed)[2].actions.empty());
  EXPECT_TRUE((*parsed)[3].actions.empty());
  EXPECT_EQ((*parsed)[3].parameters.at("collection_names"), "weights");
}

TEST(RuleConfigActions, BadActionsNameTheProblem) {
  const auto expect_error = [](const std::string& actions, const std::string& needle) {
    const std::string doc = R"([{"RuleParameters": {"rule_to_invoke": "ExplodingTensor"}, "Actions": )" + actions + "}]";
    auto parsed = trialstat::rules::parse_rule_config(doc, "cfg.json");
    ASSERT_FALSE(parsed.has_value()) << actions;
    EXPECT_EQ(parsed.error_status().code(), error_code::invalid_argument);
    EXPECT_NE(parsed.error_status().message().find(needle), std::string::npos)
        << parsed.error_status().message();
    EXPECT_NE(parsed.error_status().message().find("cfg.json: rule configuration entry 0"), std::string::npos);
  };
  expect_error(R"("stop")", "Actions must be an object");
  expect_error(R"({"stop_training": true})", "unknown key 'stop_training'");
  expect_error(R"({"stop_signal_file": ""})", "stop_signal_file");
  expect_error(R"({"stop_signal_file": 3})", "stop_signal_file");
  expect_error(R"({"command": []})", "command");
  expect_error(R"({"command": ["a", 1]})", "must hold strings");
  expect_error(R"({"command": [""]})", "program name is empty");
  expect_error(R"({"command": 5})", "command");
  expect_error(R"({"exit_status": 256})", "exit_status");
  expect_error(R"({"exit_status": -1})", "exit_status");
  expect_error(R"({"exit_status": "3x"})", "exit_status");
  expect_error(R"({"exit_status": 2.5})", "exit_status");
}

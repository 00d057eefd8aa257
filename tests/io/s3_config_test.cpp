// SPDX-License-Identifier: Apache-2.0
// S3 locations and the AWS configuration chain (environment, shared credentials and config
// files), as the AWS CLI and boto3 resolve them.
#include "host/io/s3/s3_config.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/shared_trials.hpp"

namespace trialstat::io::detail {
namespace {

/// Sets environment variables for the test and restores them after.
class environment {
 public:
  void set(const char* name, const std::string& value) {
    remember(name);
    ::setenv(name, value.c_str(), 1);
  }
  void unset(const char* name) {
    remember(name);
    ::unsetenv(name);
  }
  ~environment() {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }

 private:
  void remember(const char* name) {
    for (const auto& s : saved_) if (s.first == name) return;
    const char* v = std::getenv(name);
    saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

void clear_aws(environment& env) {
  for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                           "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
                           "AWS_ENDPOINT_URL_S3", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"}) {
    env.unset(name);
  }
}

TEST(S3Location, ParsesBucketAndPrefix) {
  auto a = parse_s3_location("  s3://my-bucket/jobs/run-1/debug-output/  ");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->bucket, "my-bucket");
  EXPECT_EQ(a->prefix, "jobs/run-1/debug-output");
  auto b = parse_s3_location("s3://bucket");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->prefix, "");
  EXPECT_FALSE(parse_s3_location("s3:///prefix").has_value());
  EXPECT_FALSE(parse_s3_location("/local/path").has_value());
}

TEST(S3Config, EnvironmentCredentialsEndpointAndRegion) {
  environment env;
  clear_aws(env);
  env.set("HOME", "/nonexistent-home");
  env.set("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE");
  env.set("AWS_SECRET_ACCESS_KEY", "secret");
  env.set("AWS_SESSION_TOKEN", "token");
  env.set("AWS_DEFAULT_REGION", "eu-west-1");
  env.set("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/");
  auto config = resolve_s3_config({});
  ASSERT_TRUE(config.has_value()) << config.error_status().to_string();
  EXPECT_EQ(config->access_key_id, "AKIDEXAMPLE");
  EXPECT_EQ(config->session_token, "token");
  EXPECT_EQ(config->region, "eu-west-1");
  EXPECT_EQ(config->endpoint, "http://127.0.0.1:9000");
  EXPECT_TRUE(config->path_style);
  EXPECT_NE(config->credentials_source.find("AWS_ACCESS_KEY_ID"), std::string::npos);
  // AWS_ENDPOINT_URL_S3 wins over AWS_ENDPOINT_URL; AWS_REGION over AWS_DEFAULT_REGION.
  env.set("AWS_ENDPOINT_URL_S3", "https://s3.example.test");
  env.set("AWS_REGION", "ap-south-1");
  config = resolve_s3_config({});
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->endpoint, "https://s3.example.test");
  EXPECT_EQ(config->region, "ap-south-1");
}

TEST(S3Config, DefaultEndpointIsVirtualHostedAws) {
  environment env;
  clear_aws(env);
  env.set("HOME", "/nonexistent-home");
  s3_options options;
  options.no_sign_request = true;
  auto config = resolve_s3_config(options);
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->endpoint, "https://s3.us-east-1.amazonaws.com");
  EXPECT_FALSE(config->path_style);
  EXPECT_FALSE(config->sign);
}

TEST(S3Config, ProfileFromSharedFiles) {
  environment env;
  clear_aws(env);
  const auto scratch = trialstat::testing::make_scratch_dir("s3_config");
  const auto credentials = scratch / "credentials";
  const auto config_file = scratch / "config";
  std::ofstream(credentials) << "[default]\naws_access_key_id = DEFAULTKEY\naws_secret_access_key = d\n\n"
                                "# a comment\n[dev]\naws_access_key_id=DEVKEY\naws_secret_access_key = devsecret\n";
  std::ofstream(config_file) << "[default]\nregion = us-west-2\n[profile dev]\nregion = eu-central-1\n"
                                "s3 =\n  addressing_style = path\nendpoint_url = http://localhost:4566\n";
  env.set("AWS_SHARED_CREDENTIALS_FILE", credentials.string());
  env.set("AWS_CONFIG_FILE", config_file.string());
  auto config = resolve_s3_config({});
  ASSERT_TRUE(config.has_value()) << config.error_status().to_string();
  EXPECT_EQ(config->access_key_id, "DEFAULTKEY");
  EXPECT_EQ(config->region, "us-west-2");
  env.set("AWS_PROFILE", "dev");
  config = resolve_s3_config({});
  ASSERT_TRUE(config.has_value()) << config.error_status().to_string();
  EXPECT_EQ(config->access_key_id, "DEVKEY");
  EXPECT_EQ(config->secret_access_key, "devsecret");
  EXPECT_EQ(config->region, "eu-central-1");
  EXPECT_EQ(config->endpoint, "http://localhost:4566");
  EXPECT_NE(config->credentials_source.find("profile 'dev'"), std::string::npos);
  EXPECT_EQ(config->credentials_source.find("devsecret"), std::string::npos) << "never the secret";
  env.set("AWS_PROFILE", "missing");
  config = resolve_s3_config({});
  ASSERT_FALSE(config.has_value());
  EXPECT_NE(config.error_status().message().find("'missing'"), std::string::npos);
}

TEST(S3Config, NoCredentialsIsAClearError) {
  environment env;
  clear_aws(env);
  env.set("HOME", "/nonexistent-home");
  auto config = resolve_s3_config({});
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error_status().code(), error_code::not_found);
  EXPECT_NE(config.error_status().message().find("--no-sign-request"), std::string::npos);
}

TEST(S3Config, EndpointMustBeHttp) {
  environment env;
  clear_aws(env);
  env.set("HOME", "/nonexistent-home");
  env.set("AWS_ENDPOINT_URL", "ftp://example");
  s3_options options;
  options.no_sign_request = true;
  EXPECT_FALSE(resolve_s3_config(options).has_value());
}

}  // namespace
}  // namespace trialstat::io::detail

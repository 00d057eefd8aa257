// SPDX-License-Identifier: Apache-2.0
#include "host/io/s3/s3_config.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "host/io/trim.hpp"

namespace trialstat::io::detail {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(trim(value));
}

using ini_section = std::map<std::string, std::string>;

/// The top-level `key = value` pairs of one section of an AWS INI file (the format the AWS CLI
/// reads: `[name]` headers, `#`/`;` comments; indented lines belong to a nested block such as
/// `s3 =` and are skipped). nullopt when the file or the section does not exist.
std::optional<ini_section> read_ini_section(const std::string& path, std::string_view section) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::optional<ini_section> found;
  bool inside = false;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && std::isspace(static_cast<unsigned char>(line.front())) && !trim(line).empty()) {
      continue;  // a nested block's line
    }
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#' || text.front() == ';') continue;
    if (text.front() == '[' && text.back() == ']') {
      inside = trim(text.substr(1, text.size() - 2)) == section;
      if (inside && !found) found.emplace();
      continue;
    }
    if (!inside) continue;
    const auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    (*found)[std::string(trim(text.substr(0, eq)))] = std::string(trim(text.substr(eq + 1)));
  }
  return found;
}

std::string home_file(const char* variable, const char* default_name) {
  std::string path = env(variable);
  if (!path.empty()) return path;
  const std::string home = env("HOME");
  return home.empty() ? std::string() : home + "/.aws/" + default_name;
}

std::string value_or(const std::optional<ini_section>& section, const char* key) {
  if (!section) return {};
  const auto it = section->find(key);
  return it == section->end() ? std::string() : it->second;
}

}  // namespace

result<s3_location> parse_s3_location(std::string_view text) {
  text = trim(text);
  if (text.substr(0, 5) != "s3://") {
    return status(error_code::invalid_argument, fmt::format("'{}': expected s3://bucket/prefix", text));
  }
  std::string_view rest = text.substr(5);
  const auto slash = rest.find('/');
  s3_location location;
  location.bucket = std::string(rest.substr(0, slash));
  if (location.bucket.empty()) {
    return status(error_code::invalid_argument,
                  fmt::format("'{}': expected s3://bucket/prefix (no bucket name)", text));
  }
  if (slash != std::string_view::npos) {
    std::string_view prefix = rest.substr(slash + 1);
    while (!prefix.empty() && prefix.front() == '/') prefix.remove_prefix(1);
    while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
    location.prefix = std::string(prefix);
  }
  return location;
}

result<s3_config> resolve_s3_config(const s3_options& options) {
  s3_config config;
  std::string profile = options.profile;
  if (profile.empty()) profile = env("AWS_PROFILE");
  if (profile.empty()) profile = env("AWS_DEFAULT_PROFILE");
  const bool profile_named = !profile.empty();
  if (profile.empty()) profile = "default";

  const std::string credentials_file = home_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
  const std::string config_file = home_file("AWS_CONFIG_FILE", "config");
  const auto credentials_section =
      credentials_file.empty() ? std::nullopt : read_ini_section(credentials_file, profile);
  const auto config_section =
      config_file.empty() ? std::nullopt
                          : read_ini_section(config_file, profile == "default" ? "default" : "profile " + profile);
  if (profile_named && !credentials_section && !config_section) {
    return status(error_code::invalid_argument,
                  fmt::format("AWS profile '{}' is in neither {} nor {}", profile,
                              credentials_file.empty() ? "~/.aws/credentials" : credentials_file,
                              config_file.empty() ? "~/.aws/config" : config_file));
  }

  // Region.
  config.region = options.region;
  if (config.region.empty()) config.region = env("AWS_REGION");
  if (config.region.empty()) config.region = env("AWS_DEFAULT_REGION");
  if (config.region.empty()) config.region = value_or(config_section, "region");
  if (config.region.empty()) config.region = "us-east-1";

  // Endpoint.
  std::string endpoint = options.endpoint_url;
  if (endpoint.empty()) endpoint = env("AWS_ENDPOINT_URL_S3");
  if (endpoint.empty()) endpoint = env("AWS_ENDPOINT_URL");
  if (endpoint.empty()) endpoint = value_or(config_section, "endpoint_url");
  if (endpoint.empty()) {
    config.endpoint = fmt::format("https://s3.{}.amazonaws.com", config.region);
    config.path_style = false;
  } else {
    if (endpoint.rfind("http://", 0) != 0 && endpoint.rfind("https://", 0) != 0) {
      return status(error_code::invalid_argument,
                    fmt::format("S3 endpoint '{}': expected an http:// or https:// URL", endpoint));
    }
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    config.endpoint = endpoint;
    config.path_style = true;
  }

  // Credentials.
  config.sign = !options.no_sign_request;
  if (!config.sign) return config;
  if (const std::string key = env("AWS_ACCESS_KEY_ID"); !key.empty()) {
    config.access_key_id = key;
    config.secret_access_key = env("AWS_SECRET_ACCESS_KEY");
    config.session_token = env("AWS_SESSION_TOKEN");
    config.credentials_source = "the environment (AWS_ACCESS_KEY_ID)";
  } else if (const std::string key = value_or(credentials_section, "aws_access_key_id"); !key.empty()) {
    config.access_key_id = key;
    config.secret_access_key = value_or(credentials_section, "aws_secret_access_key");
    config.session_token = value_or(credentials_section, "aws_session_token");
    config.credentials_source = fmt::format("profile '{}' in {}", profile, credentials_file);
  } else if (const std::string key = value_or(config_section, "aws_access_key_id"); !key.empty()) {
    config.access_key_id = key;
    config.secret_access_key = value_or(config_section, "aws_secret_access_key");
    config.session_token = value_or(config_section, "aws_session_token");
    config.credentials_source = fmt::format("profile '{}' in {}", profile, config_file);
  } else {
    return status(error_code::not_found,
                  "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
                  "AWS_PROFILE with ~/.aws/credentials; for a public bucket use --no-sign-request");
  }
  if (config.secret_access_key.empty()) {
    return status(error_code::invalid_argument,
                  fmt::format("AWS credentials from {} have an access key but no secret access key",
                              config.credentials_source));
  }
  return config;
}

}  // namespace trialstat::io::detail

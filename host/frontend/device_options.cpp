// SPDX-License-Identifier: Apache-2.0
#include "trialstat/frontend/device_options.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

namespace trialstat::frontend {

result<pipeline::resolved_backend> resolve_device(std::string_view device) {
  auto choice = pipeline::parse_device_choice(device);
  if (!choice) return choice.error_status();
  return pipeline::resolve_backend(*choice);
}

result<pipeline::pipeline_options> make_pipeline_options(const device_options& options) {
  auto resolved = resolve_device(options.device);
  if (!resolved) return resolved.error_status();
  if (options.pinned_mb < 1 || options.pinned_mb > max_pinned_mb) {
    return status(error_code::invalid_argument,
                  fmt::format("--pinned-mb must be in [1, {}]", max_pinned_mb));
  }
  std::string verify_text = options.verify_device;
  const char* from_environment = std::getenv("TRIALSTAT_VERIFY_DEVICE");
  if (verify_text.empty()) verify_text = from_environment != nullptr && *from_environment ? from_environment : "sampled";
  auto verify = pipeline::parse_device_verification(verify_text);
  if (!verify) {
    return options.verify_device.empty()
               ? status(error_code::invalid_argument, "TRIALSTAT_VERIFY_DEVICE: " + verify.error_status().message())
               : verify.error_status();
  }
  pipeline::pipeline_options out;
  out.verify_device = *verify;
  out.backend = resolved->backend;
  out.pinned_pool_bytes = static_cast<std::size_t>(options.pinned_mb) << 20;
  return out;
}

result<pipeline::pipeline_options> make_pipeline_options(std::string_view device) {
  device_options options;
  options.device = std::string(device);
  return make_pipeline_options(options);
}

}  // namespace trialstat::frontend

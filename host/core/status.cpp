// SPDX-License-Identifier: Apache-2.0
#include "trialstat/status.hpp"

namespace trialstat {

std::string_view to_string(error_code code) noexcept {
  switch (code) {
    case error_code::ok: return "ok";
    case error_code::end_of_stream: return "end_of_stream";
    case error_code::truncated_record: return "truncated_record";
    case error_code::data_loss: return "data_loss";
    case error_code::invalid_argument: return "invalid_argument";
    case error_code::unsupported_dtype: return "unsupported_dtype";
    case error_code::out_of_memory: return "out_of_memory";
    case error_code::cuda_error: return "cuda_error";
    case error_code::cuda_fatal: return "cuda_fatal";
    case error_code::io_error: return "io_error";
    case error_code::not_found: return "not_found";
  }
  return "unknown";
}

std::string status::to_string() const {
  if (ok()) return "ok";
  std::string out(trialstat::to_string(code_));
  out += ": ";
  out += message_;
  return out;
}

}  // namespace trialstat

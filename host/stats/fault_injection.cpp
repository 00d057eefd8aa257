// SPDX-License-Identifier: Apache-2.0
// TRIALSTAT_FAULT_INJECT: an executor wrapper that perturbs results or fails launches
// (fault_injection.hpp).
#include "trialstat/stats/fault_injection.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <string>
#include <utility>

namespace trialstat::stats {
namespace {

class fault_injecting_executor final : public statistics_executor {
 public:
  fault_injecting_executor(std::unique_ptr<statistics_executor> inner, fault_injection fault)
      : inner_(std::move(inner)), fault_(fault) {}

  status compute(const tensor_batch& batch) override {
    ++batches_;
    const bool affected = batches_ >= fault_.first_batch;
    if (affected && fault_.kind == fault_kind::launch) {
      return status(error_code::cuda_error,
                    fmt::format("batch {}: kernel launch failed (injected by TRIALSTAT_FAULT_INJECT=cuda-launch@{})",
                                batches_, fault_.first_batch));
    }
    TRIALSTAT_RETURN_IF_ERROR(inner_->compute(batch));
    if (affected && fault_.kind == fault_kind::result) {
      for (statistics_record* record : batch.records) {
        if (record->moments) {
          ++record->moments->nan_count;
          break;
        }
      }
    }
    return status::success();
  }
  [[nodiscard]] stats::backend backend() const noexcept override { return inner_->backend(); }
  [[nodiscard]] memory::pinned_pool* staging_pool() noexcept override { return inner_->staging_pool(); }

 private:
  std::unique_ptr<statistics_executor> inner_;
  fault_injection fault_;
  int64_t batches_ = 0;
};

}  // namespace

result<fault_injection> parse_fault_injection(std::string_view text) {
  fault_injection out;
  if (text.empty()) return out;
  const auto at = text.find('@');
  const std::string_view kind = text.substr(0, at);
  if (kind == "cuda-result") {
    out.kind = fault_kind::result;
  } else if (kind == "cuda-launch") {
    out.kind = fault_kind::launch;
  }
  bool batch_ok = true;
  if (at != std::string_view::npos) {
    const std::string_view number = text.substr(at + 1);
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), out.first_batch);
    batch_ok = error == std::errc() && end == number.data() + number.size() && out.first_batch >= 1;
  }
  if (out.kind == fault_kind::none || !batch_ok) {
    return status(error_code::invalid_argument,
                  fmt::format("fault injection '{}': expected cuda-result or cuda-launch, optionally followed by "
                              "@<batch> (a 1-based batch number), e.g. cuda-result@3",
                              text));
  }
  return out;
}

result<fault_injection> fault_injection_from_environment() {
  const char* value = std::getenv("TRIALSTAT_FAULT_INJECT");
  auto parsed = parse_fault_injection(value == nullptr ? std::string_view() : std::string_view(value));
  if (!parsed) {
    return status(parsed.error_status().code(), "TRIALSTAT_FAULT_INJECT: " + parsed.error_status().message());
  }
  return parsed;
}

std::unique_ptr<statistics_executor> inject_faults(std::unique_ptr<statistics_executor> executor,
                                                   const fault_injection& fault) {
  if (!fault.active() || executor == nullptr) return executor;
  return std::make_unique<fault_injecting_executor>(std::move(executor), fault);
}

}  // namespace trialstat::stats

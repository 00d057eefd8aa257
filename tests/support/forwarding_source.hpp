// SPDX-License-Identifier: Apache-2.0
// A trial source that forwards everything to another source, for tests that need a source with
// one behaviour changed (a listing that fails, the base class's default listing share).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "trialstat/io/trial_source.hpp"

namespace trialstat::testing_support {

class forwarding_source : public io::trial_source {
 public:
  explicit forwarding_source(std::shared_ptr<const io::trial_source> inner) : inner_(std::move(inner)) {}

  const std::string& location() const noexcept override { return inner_->location(); }
  std::string display_name(std::string_view key) const override { return inner_->display_name(key); }
  bool is_remote() const noexcept override { return inner_->is_remote(); }
  const std::filesystem::path* local_root() const noexcept override { return inner_->local_root(); }
  status check_root() const override { return inner_->check_root(); }
  status list(std::string_view sub, std::string_view start_after, std::vector<io::object_info>& out) const override {
    return inner_->list(sub, start_after, out);
  }
  result<uint64_t> read_object(std::string_view key, std::vector<std::byte>& out, uint64_t max_bytes) const override {
    return inner_->read_object(key, out, max_bytes);
  }
  void read_objects(std::span<const std::string> keys, const io::object_callback& on_object,
                    uint64_t max_bytes) const override {
    inner_->read_objects(keys, on_object, max_bytes);
  }
  result<std::optional<uint64_t>> object_size(std::string_view key) const override { return inner_->object_size(key); }
  result<std::optional<io::object_identity>> identify(std::string_view key) const override { return inner_->identify(key); }
  result<std::unique_ptr<io::object_reader>> open(std::string_view key) const override { return inner_->open(key); }
  std::unique_ptr<io::read_ahead_handle> start_read_ahead(io::read_schedule schedule) const override {
    return inner_->start_read_ahead(std::move(schedule));
  }
  // list_share: the base class's default (share 0 lists everything), unless a test overrides it.

 protected:
  const io::trial_source& inner() const { return *inner_; }

 private:
  std::shared_ptr<const io::trial_source> inner_;
};

}  // namespace trialstat::testing_support

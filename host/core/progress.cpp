// SPDX-License-Identifier: Apache-2.0
// The terminal progress line (progress.hpp).
#include "trialstat/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>

namespace trialstat {
namespace {

using clock_type = std::chrono::steady_clock;

std::string duration_text(double seconds) {
  if (!(seconds >= 0) || seconds > 359999) return "--:--";
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

class terminal_progress final : public progress_reporter {
 public:
  terminal_progress(std::string label, std::FILE* out) : label_(std::move(label)), out_(out) {}

  void begin(int64_t total_steps, int64_t total_bytes) override {
    total_steps_ = total_steps;
    total_bytes_ = total_bytes;
    steps_ = bytes_ = served_ = 0;
    start_ = last_draw_ = clock_type::now();
    active_ = true;
    draw(true);
  }

  void advance(int64_t steps, int64_t bytes) override {
    if (!active_) return;
    steps_ += steps;
    bytes_ += bytes;
    const auto now = clock_type::now();
    if (now - last_draw_ >= std::chrono::milliseconds(200)) {
      last_draw_ = now;
      draw(false);
    }
  }

  void served(int64_t records) override {
    if (active_) served_ += records;
  }

  void end() override {
    if (!active_) return;
    draw(false);
    std::fputc('\n', out_);
    std::fflush(out_);
    active_ = false;
  }

 private:
  void draw(bool first) {
    const double elapsed = std::chrono::duration<double>(clock_type::now() - start_).count();
    const double mb = 1e6;
    std::string line = fmt::format("{}: {}/{} steps", label_, steps_, total_steps_);
    if (served_ > 0) line += fmt::format(", {} records from the store", served_);
    if (total_bytes_ > 0) line += fmt::format(", {:.0f}/{:.0f} MB", bytes_ / mb, total_bytes_ / mb);
    if (!first && elapsed > 0) {
      // No rate when nothing is read (a run the statistics store serves entirely).
      if (total_bytes_ > 0 || bytes_ > 0) line += fmt::format(", {:.1f} MB/s", bytes_ / mb / elapsed);
      // ETA from bytes when known (steps can differ in size), else from steps.
      double fraction = 0;
      if (total_bytes_ > 0) {
        fraction = static_cast<double>(bytes_) / static_cast<double>(total_bytes_);
      } else if (total_steps_ > 0) {
        fraction = static_cast<double>(steps_) / static_cast<double>(total_steps_);
      }
      if (fraction > 0) line += fmt::format(", ETA {}", duration_text(elapsed * (1 - fraction) / fraction));
      line += fmt::format(", {} elapsed", duration_text(elapsed));
    }
    // \r + clear to the end of the line (the new text may be shorter).
    fmt::print(out_, "\r{}\x1b[K", line);
    std::fflush(out_);
  }

  std::string label_;
  std::FILE* out_;
  int64_t total_steps_ = 0, total_bytes_ = 0, steps_ = 0, bytes_ = 0, served_ = 0;
  clock_type::time_point start_, last_draw_;
  bool active_ = false;
};

}  // namespace

std::unique_ptr<progress_reporter> make_terminal_progress(progress_mode mode, std::string label,
                                                          std::FILE* out) {
  if (mode == progress_mode::off) return nullptr;
  if (mode == progress_mode::automatic && (out == nullptr || ::isatty(::fileno(out)) == 0)) {
    return nullptr;
  }
  return std::make_unique<terminal_progress>(std::move(label), out);
}

}  // namespace trialstat

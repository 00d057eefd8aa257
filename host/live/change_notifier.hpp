// SPDX-License-Identifier: Apache-2.0
// Wakes the watcher early when a trial's index, collections or marker files appear (Linux
// inotify), so a step's verdict does not wait for the next poll. Falls back to sleeping the
// poll interval where inotify is unavailable. Internal to host/live.
#pragma once

#include <chrono>
#include <filesystem>
#include <set>
#include <string>

namespace trialstat::live::detail {

class change_notifier {
 public:
  /// Watch `root` (once it exists), `root/index`, its step folders, `root/collections` and
  /// its folders. `enabled` false: never use inotify.
  change_notifier(std::filesystem::path root, bool enabled);
  ~change_notifier();
  change_notifier(const change_notifier&) = delete;
  change_notifier& operator=(const change_notifier&) = delete;

  /// Whether inotify is in use.
  [[nodiscard]] bool active() const noexcept { return fd_ >= 0; }

  /// Block until a relevant file appeared since the last call (returns at once if one did
  /// meanwhile) or `timeout` passed. Returns true when woken by a change.
  bool wait(std::chrono::milliseconds timeout);

 private:
  /// Returns true when a watch was added (files may have appeared there before it).
  bool add_watches();
  bool add_watch(const std::filesystem::path& dir);
  /// Read every queued event; true when one is relevant (not a *.tmp file).
  bool drain();

  std::filesystem::path root_;
  int fd_ = -1;
  std::set<std::string> watched_;
};

}  // namespace trialstat::live::detail

// SPDX-License-Identifier: Apache-2.0
#include "host/live/change_notifier.hpp"

#include <thread>

#if defined(__linux__)
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace trialstat::live::detail {
namespace fs = std::filesystem;

change_notifier::change_notifier(fs::path root, bool enabled) : root_(std::move(root)) {
#if defined(__linux__)
  if (enabled) fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
#else
  (void)enabled;
#endif
}

change_notifier::~change_notifier() {
#if defined(__linux__)
  if (fd_ >= 0) ::close(fd_);
#endif
}

bool change_notifier::add_watch(const fs::path& dir) {
#if defined(__linux__)
  const std::string key = dir.string();
  if (watched_.contains(key)) return false;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  // Files renamed into place (tmp + rename) and files written in place; new folders.
  const uint32_t mask = IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_ONLYDIR;
  if (::inotify_add_watch(fd_, key.c_str(), mask) < 0) return false;
  watched_.insert(key);
  return true;
#else
  (void)dir;
  return false;
#endif
}

bool change_notifier::add_watches() {
  // Cheap: the root, index/ and collections/ with their (few) sub-folders — one per 1000 steps
  // under index/. Event folders are not watched (one per step); a record cut short at an event
  // file's tail is retried on the poll interval instead.
  bool added = add_watch(root_);
  for (const char* top : {"index", "collections"}) {
    const fs::path dir = root_ / top;
    added = add_watch(dir) || added;
    std::error_code ec;
    if (!watched_.contains(dir.string())) continue;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_directory(ec)) added = add_watch(it->path()) || added;
    }
  }
  return added;
}

bool change_notifier::drain() {
#if defined(__linux__)
  bool relevant = false;
  alignas(inotify_event) char buffer[16384];
  for (;;) {
    const ssize_t got = ::read(fd_, buffer, sizeof buffer);
    if (got <= 0) break;  // EAGAIN: drained
    for (ssize_t offset = 0; offset < got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + offset);
      offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if ((event->mask & IN_Q_OVERFLOW) != 0) {
        relevant = true;
        continue;
      }
      const std::string_view name = event->len > 0 ? std::string_view(event->name) : std::string_view();
      if (name.size() >= 4 && name.substr(name.size() - 4) == ".tmp") continue;
      relevant = true;
    }
  }
  return relevant;
#else
  return false;
#endif
}

bool change_notifier::wait(std::chrono::milliseconds timeout) {
#if defined(__linux__)
  if (fd_ >= 0) {
    // A folder watched only now may have received files since the caller's last listing.
    if (add_watches()) return true;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (drain()) return true;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno != EINTR) {
        std::this_thread::sleep_for(left);
        return false;
      }
      if (add_watches()) return true;  // a new step folder: its files may predate the watch
    }
  }
#endif
  std::this_thread::sleep_for(timeout);
  return false;
}

}  // namespace trialstat::live::detail

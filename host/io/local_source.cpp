// SPDX-License-Identifier: Apache-2.0
#include "host/io/local_source.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "trialstat/io/file_reader.hpp"

namespace trialstat::io::detail {

namespace fs = std::filesystem;

std::string local_source::display_name(std::string_view key) const { return (root_ / key).string(); }

status local_source::check_root() const {
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) {
    return status(error_code::not_found,
                  fmt::format("trial folder {} does not exist or is not a directory", location_));
  }
  return status::success();
}

namespace {

/// What a directory entry is for a listing: DT_REG, DT_DIR, or 0 to skip it. readdir's entry
/// types spare a stat per file; a link is what it points to (one that points nowhere, or to a
/// folder — not followed, as std::filesystem's recursive iteration — is skipped).
unsigned char entry_type(DIR* folder, const dirent& entry) {
  const unsigned char type = entry.d_type;
  if (type != DT_UNKNOWN && type != DT_LNK) return type == DT_REG || type == DT_DIR ? type : 0;
  struct stat info {};
  if (::fstatat(::dirfd(folder), entry.d_name, &info, type == DT_LNK ? 0 : AT_SYMLINK_NOFOLLOW) != 0) return 0;
  if (S_ISREG(info.st_mode)) return DT_REG;
  if (S_ISDIR(info.st_mode) && type == DT_UNKNOWN) return DT_DIR;
  return 0;
}

int list_folder(int fd, std::string& prefix, std::string_view start_after, std::vector<object_info>& out);

/// Whether every key under the folder whose keys start with `folder_prefix` ('/'-terminated)
/// sorts at or before `start_after`: the prefix sorts before it and is not a prefix of it. A
/// refresh (a live trial's next poll) then skips the step buckets it listed before instead of
/// reading them again.
bool before_start(std::string_view folder_prefix, std::string_view start_after) {
  return !start_after.empty() && folder_prefix < start_after && !start_after.starts_with(folder_prefix);
}

/// Appends what the entry `name` (of `type`) of the folder open as `parent_fd` holds: the file's
/// key, or every file under the folder (recursively). @return 0 or an errno.
int list_entry(int parent_fd, std::string_view name, unsigned char type, std::string& prefix,
               std::string_view start_after, std::vector<object_info>& out) {
  const std::size_t length = prefix.size();
  prefix.append(name);
  int failure = 0;
  if (type == DT_DIR) {
    prefix.push_back('/');
    if (!before_start(prefix, start_after)) {
      int sub = -1;
      do {
        sub = ::openat(parent_fd, std::string(name).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      } while (sub < 0 && errno == EINTR);
      failure = sub < 0 ? errno : list_folder(sub, prefix, start_after, out);
    }
  } else if (start_after.empty() || std::string_view(prefix) > start_after) {
    out.push_back({prefix, 0});  // no stat per file: sizes come from object_size
  }
  prefix.resize(length);
  return failure;
}

/// The entries directly under a folder (`.` and `..` and what is neither a file nor a folder
/// left out), sorted as their keys sort: a folder `a` as `a/`, so that a file `a.json` comes
/// first, as every key under `a/` follows it. Walking the entries in this order, recursing into
/// folders, yields the folder's keys sorted with no sort of the whole listing. The names live in
/// one arena: no allocation per entry.
struct folder_entries {
  struct entry {
    uint64_t head = 0;    // 8 bytes of the sort key after the folder's common prefix, big-endian
    uint32_t offset = 0;  // of the sort key in `keys`
    uint32_t length = 0;
    unsigned char type = 0;  // DT_REG or DT_DIR
  };
  std::string keys;  // each entry's sort key: its name, a folder's with '/' appended
  std::vector<entry> entries;

  [[nodiscard]] std::string_view sort_key(const entry& e) const { return {keys.data() + e.offset, e.length}; }
  [[nodiscard]] std::string_view name(const entry& e) const {
    return sort_key(e).substr(0, e.length - (e.type == DT_DIR ? 1 : 0));
  }

  /// Read and sort the entries of `folder`. @return 0 or an errno.
  int read(DIR* folder) {
    int failure = 0;
    for (;;) {
      errno = 0;
      const dirent* listed = ::readdir(folder);
      if (listed == nullptr) {
        failure = errno;
        break;
      }
      const std::string_view name(listed->d_name);
      if (name == "." || name == "..") continue;
      const unsigned char type = entry_type(folder, *listed);
      if (type == 0) continue;
      if (keys.size() > UINT32_MAX - 1024) {
        failure = EOVERFLOW;  // 4 GiB of names in one folder
        break;
      }
      const auto offset = static_cast<uint32_t>(keys.size());
      keys.append(name);
      if (type == DT_DIR) keys.push_back('/');
      entries.push_back({.head = 0, .offset = offset, .length = static_cast<uint32_t>(keys.size()) - offset, .type = type});
    }
    sort();
    return failure;
  }

  /// Sort by key. Names in a folder of a trial share a long prefix (`000000000123_worker_7.json`):
  /// entries compare first by the 8 bytes that follow the common prefix, as one integer, and by
  /// the whole key only when those are equal (same order as comparing the keys).
  void sort() {
    if (entries.size() < 2) return;
    std::size_t common = entries[0].length;
    const std::string_view first = sort_key(entries[0]);
    for (const entry& e : entries) {
      const std::string_view key = sort_key(e);
      std::size_t i = 0;
      const std::size_t limit = std::min(common, key.size());
      while (i < limit && key[i] == first[i]) ++i;
      common = i;
    }
    for (entry& e : entries) {
      const std::string_view rest = sort_key(e).substr(common);
      uint64_t head = 0;
      for (std::size_t i = 0; i < 8; ++i) {
        head = (head << 8) | (i < rest.size() ? static_cast<unsigned char>(rest[i]) : 0u);
      }
      e.head = head;
    }
    std::sort(entries.begin(), entries.end(), [this](const entry& a, const entry& b) {
      if (a.head != b.head) return a.head < b.head;
      return sort_key(a) < sort_key(b);
    });
  }
};

/// Appends the regular files under the folder open as `fd` (taken and closed) to `out`, keyed
/// `prefix` + their path below it, sorted; recurses into sub-folders.
/// @return 0, or the errno of the first folder that could not be read.
int list_folder(int fd, std::string& prefix, std::string_view start_after, std::vector<object_info>& out) {
  DIR* folder = ::fdopendir(fd);
  if (folder == nullptr) {
    const int err = errno;
    ::close(fd);
    return err;
  }
  folder_entries listed;
  int failure = listed.read(folder);
  for (std::size_t i = 0; i < listed.entries.size() && failure == 0; ++i) {
    const auto& entry = listed.entries[i];
    failure = list_entry(::dirfd(folder), listed.name(entry), entry.type, prefix, start_after, out);
  }
  ::closedir(folder);
  return failure;
}

}  // namespace

status local_source::list(std::string_view sub, std::string_view start_after,
                          std::vector<object_info>& out) const {
  return list_share(sub, start_after, 0, 1, out, {});
}

status local_source::list_share(std::string_view sub, std::string_view start_after, int share, int shares,
                                std::vector<object_info>& out, const folder_filter& skip_folder) const {
  out.clear();
  const fs::path dir = root_ / sub;
  if (shares < 1 || share < 0 || share >= shares) {
    return status(error_code::invalid_argument,
                  fmt::format("listing share {} of {} of {}: no such share", share, shares, dir.string()));
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    // Absent is an empty listing; a folder that cannot be looked at is an error, not empty.
    if (!ec || ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
      return status::success();
    }
    return status(error_code::io_error, fmt::format("cannot access {}: {}", dir.string(), ec.message()));
  }
  const auto failed = [&](int err) {
    return status(error_code::io_error,
                  fmt::format("cannot list {}: {}", dir.string(), std::generic_category().message(err)));
  };
  int fd = -1;
  do {
    fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return failed(errno);
  DIR* folder = ::fdopendir(fd);
  if (folder == nullptr) {
    const int err = errno;
    ::close(fd);
    return failed(err);
  }
  // This share's contiguous run of the sorted entries directly under `sub`: every key under
  // one entry lies between the keys of its neighbours, so the runs' listings, concatenated,
  // are the sorted listing of the whole folder.
  folder_entries listed;
  int failure = listed.read(folder);
  const std::size_t n = listed.entries.size();
  const std::size_t first = n * static_cast<std::size_t>(share) / static_cast<std::size_t>(shares);
  const std::size_t last = n * (static_cast<std::size_t>(share) + 1) / static_cast<std::size_t>(shares);
  std::string prefix(sub);
  if (!prefix.empty() && prefix.back() != '/') prefix.push_back('/');
  for (std::size_t i = first; i < last && failure == 0; ++i) {
    const auto& entry = listed.entries[i];
    if (entry.type == DT_DIR && skip_folder && skip_folder(listed.name(entry))) continue;
    failure = list_entry(::dirfd(folder), listed.name(entry), entry.type, prefix, start_after, out);
  }
  ::closedir(folder);
  if (failure != 0) return failed(failure);
  return status::success();
}

result<uint64_t> local_source::read_object(std::string_view key, std::vector<std::byte>& out,
                                           uint64_t max_bytes) const {
  return read_file(root_ / key, out, max_bytes);
}

void local_source::read_objects(std::span<const std::string> keys, const object_callback& on_object,
                                uint64_t max_bytes) const {
  std::vector<std::byte> buffer;
  std::string folder;  // key prefix of the folder open as folder_fd (up to its last '/')
  int folder_fd = -1;
  const auto close_folder = [&] {
    if (folder_fd >= 0) ::close(folder_fd);
    folder_fd = -1;
  };
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string& key = keys[i];
    const auto slash = key.rfind('/');
    const std::string_view prefix = slash == std::string::npos ? std::string_view() : std::string_view(key).substr(0, slash + 1);
    if (folder_fd < 0 || prefix != folder) {
      close_folder();
      folder.assign(prefix);
      const fs::path dir = prefix.empty() ? root_ : root_ / prefix;
      do {
        folder_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      } while (folder_fd < 0 && errno == EINTR);
    }
    result<uint64_t> size = folder_fd >= 0
        ? read_file_at(folder_fd, key.c_str() + prefix.size(), root_, key, buffer, max_bytes)
        : read_object(key, buffer, max_bytes);  // the folder cannot be opened: its error message
    if (!size) {
      on_object(i, size.error_status());
    } else {
      on_object(i, std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(*size)));
    }
  }
  close_folder();
}

result<std::optional<uint64_t>> local_source::object_size(std::string_view key) const {
  std::error_code ec;
  const auto size = fs::file_size(root_ / key, ec);
  if (ec == std::errc::no_such_file_or_directory) return std::optional<uint64_t>();
  if (ec) {
    return status(error_code::io_error,
                  fmt::format("{}: cannot stat: {}", display_name(key), ec.message()));
  }
  return std::optional<uint64_t>(static_cast<uint64_t>(size));
}

result<std::optional<object_identity>> local_source::identify(std::string_view key) const {
  struct stat st {};
  const fs::path path = root_ / key;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<object_identity>();
    return status(error_code::io_error, fmt::format("{}: cannot stat: {}", display_name(key), std::strerror(errno)));
  }
  const int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return std::optional<object_identity>(object_identity{static_cast<uint64_t>(st.st_size), std::to_string(mtime_ns)});
}

result<std::unique_ptr<object_reader>> local_source::open(std::string_view key) const {
  auto file = file_reader::open(root_ / key);
  if (!file) return file.error_status();
  return std::unique_ptr<object_reader>(std::make_unique<file_reader>(std::move(*file)));
}

}  // namespace trialstat::io::detail

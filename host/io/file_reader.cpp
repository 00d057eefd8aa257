// SPDX-License-Identifier: Apache-2.0
// Local files read with pread: no shared cursor, so one open file serves many reader threads.
#include "trialstat/io/file_reader.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <utility>

#include <fmt/format.h>

namespace trialstat::io {
namespace {

std::string errno_text(int err) { return std::string(std::strerror(err)); }

/// Size of an open regular file; io_error for anything else (a folder, a device, fstat failing).
result<uint64_t> regular_file_size(int fd, const std::filesystem::path& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int err = errno;
    return status(error_code::io_error,
                  fmt::format("{}: cannot stat: {}", path.string(), errno_text(err)));
  }
  if (!S_ISREG(info.st_mode)) {
    return status(error_code::io_error, fmt::format("{}: not a regular file", path.string()));
  }
  return static_cast<uint64_t>(info.st_size);
}

/// pread until `size` bytes are in or the file ends. Returns the bytes read, or -errno.
int64_t pread_fully(int fd, uint64_t offset_bytes, std::byte* out, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    // Linux transfers at most 0x7ffff000 bytes per call; ask for no more than 1 GiB at a time.
    const std::size_t chunk = std::min<std::size_t>(size - done, std::size_t{1} << 30);
    const ssize_t got = ::pread(fd, out + done, chunk, static_cast<off_t>(offset_bytes + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return -static_cast<int64_t>(errno);
    }
    if (got == 0) break;  // end of file
    done += static_cast<std::size_t>(got);
  }
  return static_cast<int64_t>(done);
}

/// out_of_memory naming the file when `size_bytes` exceeds the caller's cap for whole reads.
status check_size_limit(const std::filesystem::path& path, uint64_t size_bytes, uint64_t max_bytes) {
  if (size_bytes <= max_bytes) return status::success();
  return status(error_code::out_of_memory,
                fmt::format("{}: file of {} bytes is larger than the limit of {} bytes for this "
                            "kind of file; not read",
                            path.string(), size_bytes, max_bytes));
}

// ---- SIGBUS guard of mappings ----------------------------------------------------------------
// A file truncated while mapped: reads of its lost pages raise SIGBUS. The handler looks the
// address up in a fixed table of live mappings (lock-free: atomics only, async-signal-safe),
// maps a zero page over the lost one, flags the mapping and returns, so the read is retried and
// sees zeros; the owner checks `damaged()` afterwards. Faults elsewhere go to the previous handler.

struct guard_slot {
  std::atomic<uintptr_t> begin{0};  // 0: free
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> damaged{false};
};
guard_slot guard_table[mapped_guard_slots];
struct sigaction previous_sigbus {};
uintptr_t guard_page_bytes = 4096;

extern "C" void on_sigbus(int signal_number, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (guard_slot& slot : guard_table) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= slot.end.load(std::memory_order_acquire)) continue;
    void* page = reinterpret_cast<void*>(address & ~(guard_page_bytes - 1));
    if (::mmap(page, guard_page_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
        MAP_FAILED) {
      slot.damaged.store(true, std::memory_order_release);
      return;  // the faulting read is retried and sees zeros
    }
    break;
  }
  if ((previous_sigbus.sa_flags & SA_SIGINFO) != 0 && previous_sigbus.sa_sigaction != nullptr) {
    previous_sigbus.sa_sigaction(signal_number, info, context);
    return;
  }
  if (previous_sigbus.sa_handler != SIG_DFL && previous_sigbus.sa_handler != SIG_IGN &&
      previous_sigbus.sa_handler != nullptr) {
    previous_sigbus.sa_handler(signal_number);
    return;
  }
  ::signal(SIGBUS, SIG_DFL);  // not ours: returning re-runs the access, which now kills as before
}

void install_sigbus_guard() {
  static std::once_flag once;
  std::call_once(once, [] {
    guard_page_bytes = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = &on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &previous_sigbus);
  });
}

/// A free guard slot for [begin, end), or −1 when all are taken.
int acquire_guard(uintptr_t begin, uintptr_t end) {
  install_sigbus_guard();
  for (std::size_t i = 0; i < mapped_guard_slots; ++i) {
    uintptr_t expected = 0;
    guard_slot& slot = guard_table[i];
    // Reserve (begin = 1 matches no address while end is 0), fill, then publish.
    if (!slot.begin.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
    slot.damaged.store(false, std::memory_order_relaxed);
    slot.end.store(end, std::memory_order_release);
    slot.begin.store(begin, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

void release_guard(int index) {
  if (index < 0) return;
  guard_slot& slot = guard_table[index];
  slot.end.store(0, std::memory_order_release);
  slot.begin.store(0, std::memory_order_release);
}

/// How `read_whole_file` sizes its buffer.
enum class buffer_sizing {
  exact,      ///< resized to the file size + record_padding_bytes
  grow_only,  ///< a reused buffer: grown (with a quarter of headroom) when too small, never shrunk
};

/// The whole content of an open file from byte 0 into `out`, followed by record_padding_bytes
/// zero bytes. Errors: as `read_file`.
result<uint64_t> read_whole_file(const file_reader& file, std::vector<std::byte>& out, uint64_t max_bytes,
                                 buffer_sizing sizing = buffer_sizing::exact) {
  const std::filesystem::path& path = file.path();
  const uint64_t size_bytes = file.size_bytes();
  TRIALSTAT_RETURN_IF_ERROR(check_size_limit(path, size_bytes, max_bytes));
  if (size_bytes > std::numeric_limits<std::size_t>::max() - record_padding_bytes) {
    return status(error_code::io_error,
                  fmt::format("{}: file of {} bytes does not fit in memory", path.string(),
                              size_bytes));
  }
  const auto size = static_cast<std::size_t>(size_bytes);
  const std::size_t wanted = size + record_padding_bytes;
  try {
    if (sizing == buffer_sizing::exact) {
      out.resize(wanted);
    } else if (out.size() <= wanted) {
      // The next file of a listing may be a little bigger.
      out.resize(wanted + std::min(wanted / 4, std::numeric_limits<std::size_t>::max() - wanted));
    }
  } catch (const std::exception&) {  // bad_alloc, length_error
    return status(error_code::out_of_memory,
                  fmt::format("{}: cannot allocate {} bytes to read the file", path.string(), wanted));
  }
  std::fill_n(out.begin() + static_cast<std::ptrdiff_t>(size), record_padding_bytes, std::byte{0});
  const status read = file.read_at(0, std::span<std::byte>(out.data(), size));
  if (!read.ok()) {
    // The file shrank between fstat and pread: report it as an OS-level failure.
    return status(error_code::io_error, read.message());
  }
  return size_bytes;
}

/// openat read-only and non-blocking (opening a FIFO must not wait for a writer; regular files
/// ignore O_NONBLOCK for reads), retried on EINTR. @return the descriptor, or -1 with errno set.
int open_nonblocking(int dir_fd, const char* name) {
  int fd = -1;
  do {
    fd = ::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

}  // namespace

result<file_reader> file_reader::open(const std::filesystem::path& path) {
  return open_at(AT_FDCWD, path.c_str(), path);
}

result<file_reader> file_reader::open_at(int dir_fd, const char* name, std::filesystem::path path) {
  // fstat below refuses anything that is not a regular file.
  const int fd = open_nonblocking(dir_fd, name);
  if (fd < 0) {
    const int err = errno;
    return status(error_code::io_error,
                  fmt::format("{}: cannot open: {}", path.string(), errno_text(err)));
  }
  auto size = regular_file_size(fd, path);
  if (!size) {
    ::close(fd);
    return size.error_status();
  }
  return file_reader(fd, *size, std::move(path));
}

file_reader::file_reader(file_reader&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      size_bytes_(std::exchange(other.size_bytes_, 0)),
      path_(std::move(other.path_)) {}

file_reader& file_reader::operator=(file_reader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
    path_ = std::move(other.path_);
  }
  return *this;
}

file_reader::~file_reader() {
  if (fd_ >= 0) ::close(fd_);
}

status file_reader::refresh_size() {
  if (fd_ < 0) {
    return status(error_code::io_error, fmt::format("{}: file is not open", path_.string()));
  }
  auto size = regular_file_size(fd_, path_);
  if (!size) return size.error_status();
  size_bytes_ = *size;
  return status::success();
}

status file_reader::read_at(uint64_t offset_bytes, std::span<std::byte> out) const {
  if (fd_ < 0) {
    return status(error_code::io_error, fmt::format("{}: file is not open", path_.string()));
  }
  if (out.empty()) return status::success();
  const uint64_t max_offset = static_cast<uint64_t>(std::numeric_limits<off_t>::max());
  if (offset_bytes > max_offset || out.size() > max_offset - offset_bytes) {
    return status(error_code::truncated_record,
                  fmt::format("{}: read of {} bytes at byte {}: range lies beyond any file end",
                              path_.string(), out.size(), offset_bytes));
  }
  const int64_t got = pread_fully(fd_, offset_bytes, out.data(), out.size());
  if (got < 0) {
    return status(error_code::io_error,
                  fmt::format("{}: read of {} bytes at byte {} failed: {}", path_.string(),
                              out.size(), offset_bytes, errno_text(static_cast<int>(-got))));
  }
  if (static_cast<uint64_t>(got) < out.size()) {
    return status(error_code::truncated_record,
                  fmt::format("{}: read of {} bytes at byte {}: file ends at byte {} (only {} "
                              "bytes available)",
                              path_.string(), out.size(), offset_bytes,
                              offset_bytes + static_cast<uint64_t>(got), got));
  }
  return status::success();
}

mapped_bytes::mapped_bytes(mapped_bytes&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      mapped_total_(std::exchange(other.mapped_total_, 0)),
      size_bytes_(std::exchange(other.size_bytes_, 0)),
      guard_(std::exchange(other.guard_, -1)) {}

mapped_bytes& mapped_bytes::operator=(mapped_bytes&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    mapped_total_ = std::exchange(other.mapped_total_, 0);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
    guard_ = std::exchange(other.guard_, -1);
  }
  return *this;
}

mapped_bytes::~mapped_bytes() { reset(); }

void mapped_bytes::reset() noexcept {
  if (data_ != nullptr) {
    release_guard(std::exchange(guard_, -1));  // before the pages go: no stale match
    ::munmap(const_cast<std::byte*>(data_), mapped_total_);
    data_ = nullptr;
    mapped_total_ = 0;
    size_bytes_ = 0;
  }
}

bool mapped_bytes::damaged() const noexcept {
  return guard_ >= 0 && guard_table[guard_].damaged.load(std::memory_order_acquire);
}

result<mapped_bytes> file_reader::map_all() const {
  if (fd_ < 0) {
    return status(error_code::io_error, fmt::format("{}: file is not open", path_.string()));
  }
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (size_bytes_ > std::numeric_limits<std::size_t>::max() - record_padding_bytes - page) {
    return status(error_code::io_error, fmt::format("{}: file of {} bytes does not fit in the "
                                                    "address space", path_.string(), size_bytes_));
  }
  const auto size = static_cast<std::size_t>(size_bytes_);
  // Reserve file + padding as zero pages, then lay the file over the start: the tail of the
  // file's last page reads as zeros (POSIX) and the pages after it are the anonymous zeros.
  const std::size_t total = (size + record_padding_bytes + page - 1) / page * page;
  void* region = ::mmap(nullptr, total, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) {
    const int err = errno;
    return status(error_code::io_error, fmt::format("{}: cannot reserve {} bytes to map the file: {}",
                                                    path_.string(), total, errno_text(err)));
  }
  const auto begin = reinterpret_cast<uintptr_t>(region);
  const int guard = acquire_guard(begin, begin + total);  // before MAP_POPULATE touches pages
  if (guard < 0) {
    ::munmap(region, total);
    return status(error_code::io_error,
                  fmt::format("{}: {} guarded mappings are in use; read the file instead",
                              path_.string(), mapped_guard_slots));
  }
  if (size > 0) {
    void* file = ::mmap(region, size, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd_, 0);
    if (file == MAP_FAILED) {
      const int err = errno;
      release_guard(guard);
      ::munmap(region, total);
      return status(error_code::io_error, fmt::format("{}: cannot map {} bytes: {}", path_.string(),
                                                      size, errno_text(err)));
    }
  }
  return mapped_bytes(static_cast<const std::byte*>(region), total, size, guard);
}

result<uint64_t> read_file(const std::filesystem::path& path, std::vector<std::byte>& out,
                           uint64_t max_bytes) {
  auto file = file_reader::open(path);
  if (!file) return file.error_status();
  return read_whole_file(*file, out, max_bytes);
}

result<uint64_t> read_file_at(int dir_fd, const char* name, const std::filesystem::path& root,
                              std::string_view key, std::vector<std::byte>& out, uint64_t max_bytes) {
  // Most files fit the buffer the files before them grew (index files of one trial are alike).
  constexpr std::size_t first_buffer_bytes = std::size_t{16} << 10;
  const int fd = open_nonblocking(dir_fd, name);
  if (fd < 0) {
    const int err = errno;
    return status(error_code::io_error, fmt::format("{}: cannot open: {}", (root / key).string(), errno_text(err)));
  }
  if (out.size() < first_buffer_bytes) {
    try {
      out.resize(first_buffer_bytes);
    } catch (const std::exception&) {  // bad_alloc
      ::close(fd);
      return status(error_code::out_of_memory, fmt::format("{}: cannot allocate {} bytes to read the file",
                                                           (root / key).string(), first_buffer_bytes));
    }
  }
  const std::size_t room = out.size() - record_padding_bytes;
  const int64_t got = pread_fully(fd, 0, out.data(), room);
  if (got > 0 && static_cast<std::size_t>(got) < room && static_cast<uint64_t>(got) <= max_bytes) {
    ::close(fd);
    const auto size = static_cast<std::size_t>(got);
    std::fill_n(out.begin() + static_cast<std::ptrdiff_t>(size), record_padding_bytes, std::byte{0});
    return static_cast<uint64_t>(size);
  }
  // Filled the buffer (a bigger file, or a device), nothing (an empty file, a FIFO), an error or
  // over the limit: the size and the type from fstat, as read_file does.
  std::filesystem::path path = root / key;
  const auto size = regular_file_size(fd, path);
  if (!size) {
    ::close(fd);
    return size.error_status();
  }
  return read_whole_file(file_reader(fd, *size, std::move(path)), out, max_bytes, buffer_sizing::grow_only);
}

status read_text_file(const std::filesystem::path& path, std::string& out, uint64_t max_bytes) {
  auto file = file_reader::open(path);
  if (!file) return file.error_status();
  const uint64_t size_bytes = file->size_bytes();
  TRIALSTAT_RETURN_IF_ERROR(check_size_limit(path, size_bytes, max_bytes));
  try {
    out.resize(static_cast<std::size_t>(size_bytes));
  } catch (const std::exception&) {
    return status(error_code::out_of_memory,
                  fmt::format("{}: cannot allocate {} bytes to read the file", path.string(), size_bytes));
  }
  const status read = file->read_at(0, std::as_writable_bytes(std::span<char>(out.data(), out.size())));
  if (!read.ok()) return status(error_code::io_error, read.message());
  return status::success();
}

}  // namespace trialstat::io

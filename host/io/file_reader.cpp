// SPDX-License-Identifier: Apache-2.0
// Local files read with pread: no shared cursor, so one open file serves many reader threads.
#include "trialstat/io/file_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
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

}  // namespace

result<file_reader> file_reader::open(const std::filesystem::path& path) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
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
  return file_reader(fd, *size, path);
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
      size_bytes_(std::exchange(other.size_bytes_, 0)) {}

mapped_bytes& mapped_bytes::operator=(mapped_bytes&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    mapped_total_ = std::exchange(other.mapped_total_, 0);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
  }
  return *this;
}

mapped_bytes::~mapped_bytes() { reset(); }

void mapped_bytes::reset() noexcept {
  if (data_ != nullptr) {
    ::munmap(const_cast<std::byte*>(data_), mapped_total_);
    data_ = nullptr;
    mapped_total_ = 0;
    size_bytes_ = 0;
  }
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
  if (size > 0) {
    void* file = ::mmap(region, size, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd_, 0);
    if (file == MAP_FAILED) {
      const int err = errno;
      ::munmap(region, total);
      return status(error_code::io_error, fmt::format("{}: cannot map {} bytes: {}", path_.string(),
                                                      size, errno_text(err)));
    }
  }
  return mapped_bytes(static_cast<const std::byte*>(region), total, size);
}

result<uint64_t> read_file(const std::filesystem::path& path, std::vector<std::byte>& out) {
  auto file = file_reader::open(path);
  if (!file) return file.error_status();
  const uint64_t size_bytes = file->size_bytes();
  if (size_bytes > std::numeric_limits<std::size_t>::max() - record_padding_bytes) {
    return status(error_code::io_error,
                  fmt::format("{}: file of {} bytes does not fit in memory", path.string(),
                              size_bytes));
  }
  const auto size = static_cast<std::size_t>(size_bytes);
  try {
    out.resize(size + record_padding_bytes);
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  fmt::format("{}: cannot allocate {} bytes to read the file", path.string(),
                              size + record_padding_bytes));
  }
  std::fill(out.begin() + static_cast<std::ptrdiff_t>(size), out.end(), std::byte{0});
  const status read = file->read_at(0, std::span<std::byte>(out.data(), size));
  if (!read.ok()) {
    // The file shrank between fstat and pread: report it as an OS-level failure.
    return status(error_code::io_error, read.message());
  }
  return size_bytes;
}

}  // namespace trialstat::io

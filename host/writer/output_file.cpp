// SPDX-License-Identifier: Apache-2.0
#include "host/writer/output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

namespace trialstat::writer::detail {
namespace {

status os_error(std::string_view what, const std::filesystem::path& path, int err) {
  return {error_code::io_error, fmt::format("{} '{}': {}", what, path.string(), std::strerror(err))};
}

}  // namespace

output_file::output_file(output_file&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      final_path_(std::move(other.final_path_)),
      buffer_(std::move(other.buffer_)),
      buffered_(std::exchange(other.buffered_, 0)),
      size_bytes_(std::exchange(other.size_bytes_, 0)) {}

output_file& output_file::operator=(output_file&& other) noexcept {
  if (this != &other) {
    discard();
    fd_ = std::exchange(other.fd_, -1);
    final_path_ = std::move(other.final_path_);
    buffer_ = std::move(other.buffer_);
    buffered_ = std::exchange(other.buffered_, 0);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
  }
  return *this;
}

output_file::~output_file() { discard(); }

std::filesystem::path output_file::tmp_path() const {
  std::filesystem::path p = final_path_;
  p += ".tmp";
  return p;
}

result<output_file> output_file::create(std::filesystem::path final_path,
                                        std::size_t buffer_bytes) {
  std::error_code ec;
  std::filesystem::create_directories(final_path.parent_path(), ec);
  if (ec) {
    return status(error_code::io_error, fmt::format("cannot create folder '{}': {}",
                                                   final_path.parent_path().string(), ec.message()));
  }
  output_file f;
  f.final_path_ = std::move(final_path);
  const auto tmp = f.tmp_path();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return os_error("cannot create", tmp, errno);
  f.fd_ = fd;
  f.buffer_.resize(buffer_bytes);
  return f;
}

status output_file::write_all(const std::byte* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      return {error_code::io_error, fmt::format("write failed in '{}' near byte offset {}: {}",
                                                tmp_path().string(), size_bytes_, std::strerror(err))};
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return status::success();
}

status output_file::flush_buffer() {
  if (buffered_ == 0) return status::success();
  const std::size_t n = std::exchange(buffered_, 0);
  return write_all(buffer_.data(), n);
}

status output_file::append(std::span<const std::byte> bytes) {
  if (fd_ < 0) return {error_code::invalid_argument, "output file is not open"};
  if (bytes.empty()) return status::success();
  if (bytes.size() >= buffer_.size()) {
    TRIALSTAT_RETURN_IF_ERROR(flush_buffer());
    TRIALSTAT_RETURN_IF_ERROR(write_all(bytes.data(), bytes.size()));
  } else {
    if (buffered_ + bytes.size() > buffer_.size()) TRIALSTAT_RETURN_IF_ERROR(flush_buffer());
    std::memcpy(buffer_.data() + buffered_, bytes.data(), bytes.size());
    buffered_ += bytes.size();
  }
  size_bytes_ += bytes.size();
  return status::success();
}

status output_file::commit() {
  if (fd_ < 0) return {error_code::invalid_argument, "output file is not open"};
  status s = flush_buffer();
  const auto tmp = tmp_path();
  if (::close(std::exchange(fd_, -1)) != 0 && s.ok()) s = os_error("cannot close", tmp, errno);
  if (s.ok() && std::rename(tmp.c_str(), final_path_.c_str()) != 0) {
    s = os_error(fmt::format("cannot rename '{}' to", tmp.string()), final_path_, errno);
  }
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

void output_file::discard() noexcept {
  if (fd_ < 0) return;
  ::close(std::exchange(fd_, -1));
  ::unlink(tmp_path().c_str());
  buffered_ = 0;
}

status write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  auto f = output_file::create(path, 4096);
  if (!f) return f.error_status();
  TRIALSTAT_RETURN_IF_ERROR(f->append(contents));
  return f->commit();
}

}  // namespace trialstat::writer::detail

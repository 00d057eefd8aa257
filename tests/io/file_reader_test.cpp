// SPDX-License-Identifier: Apache-2.0
// file_reader (pread), read_file (whole file + zeroed padding) and read_file_at (many small files
// through one reused buffer): sizes, exact reads, reads past the end, growing files, missing
// paths, files bigger than the buffer, FIFOs and size limits; every failure names the path.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/shared_trials.hpp"
#include "trialstat/io/file_reader.hpp"

namespace trialstat::io {
namespace {

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((i * 131 + seed) & 0xff);
  return out;
}

void write_file(const std::filesystem::path& path, const std::vector<std::byte>& bytes,
                bool append = false) {
  std::ofstream out(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

TEST(file_reader, reads_exact_ranges) {
  const auto dir = trialstat::testing::make_scratch_dir("file_reader");
  const auto path = dir / "data.bin";
  const auto bytes = pattern(1000, 7);
  write_file(path, bytes);

  auto file = file_reader::open(path);
  ASSERT_TRUE(file) << file.error_status().to_string();
  EXPECT_EQ(file->size_bytes(), 1000u);
  EXPECT_EQ(file->path(), path);

  std::vector<std::byte> out(100, std::byte{0xFF});
  ASSERT_TRUE(file->read_at(250, out).ok());
  EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes.begin() + 250));

  std::vector<std::byte> tail(10, std::byte{0xFF});
  ASSERT_TRUE(file->read_at(990, tail).ok());
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), bytes.begin() + 990));

  EXPECT_TRUE(file->read_at(1000, std::span<std::byte>()).ok());  // empty read at the end
  std::filesystem::remove_all(dir);
}

TEST(file_reader, read_past_end_is_truncated_record_naming_path_offset_and_lengths) {
  const auto dir = trialstat::testing::make_scratch_dir("file_reader");
  const auto path = dir / "short.bin";
  write_file(path, pattern(100, 1));
  auto file = file_reader::open(path);
  ASSERT_TRUE(file);
  std::vector<std::byte> out(30);
  const status s = file->read_at(90, out);
  EXPECT_EQ(s.code(), error_code::truncated_record);
  EXPECT_NE(s.message().find(path.string()), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("30 bytes at byte 90"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("only 10 bytes"), std::string::npos) << s.message();

  const status far = file->read_at(uint64_t{1} << 62, out);
  EXPECT_EQ(far.code(), error_code::truncated_record);
  const status wrap = file->read_at(~uint64_t{0} - 5, out);
  EXPECT_EQ(wrap.code(), error_code::truncated_record) << wrap.to_string();
  std::filesystem::remove_all(dir);
}

TEST(file_reader, refresh_size_sees_a_growing_file) {
  const auto dir = trialstat::testing::make_scratch_dir("file_reader");
  const auto path = dir / "growing.bin";
  const auto first = pattern(40, 3);
  const auto second = pattern(24, 9);
  write_file(path, first);
  auto file = file_reader::open(path);
  ASSERT_TRUE(file);
  EXPECT_EQ(file->size_bytes(), 40u);
  write_file(path, second, /*append=*/true);
  EXPECT_EQ(file->size_bytes(), 40u);
  ASSERT_TRUE(file->refresh_size().ok());
  EXPECT_EQ(file->size_bytes(), 64u);
  std::vector<std::byte> out(24);
  ASSERT_TRUE(file->read_at(40, out).ok());
  EXPECT_EQ(out, second);
  std::filesystem::remove_all(dir);
}

TEST(file_reader, missing_file_and_folder_are_io_errors) {
  const auto dir = trialstat::testing::make_scratch_dir("file_reader");
  auto missing = file_reader::open(dir / "nope.tfevents");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error_status().code(), error_code::io_error);
  EXPECT_NE(missing.error_status().message().find("nope.tfevents"), std::string::npos);

  auto folder = file_reader::open(dir);
  ASSERT_FALSE(folder);
  EXPECT_EQ(folder.error_status().code(), error_code::io_error);

  std::vector<std::byte> buffer;
  auto whole = read_file(dir / "nope.tfevents", buffer);
  ASSERT_FALSE(whole);
  EXPECT_EQ(whole.error_status().code(), error_code::io_error);
  std::filesystem::remove_all(dir);
}

TEST(file_reader, move_keeps_the_file_open) {
  const auto dir = trialstat::testing::make_scratch_dir("file_reader");
  const auto path = dir / "m.bin";
  const auto bytes = pattern(16, 5);
  write_file(path, bytes);
  auto opened = file_reader::open(path);
  ASSERT_TRUE(opened);
  file_reader moved(std::move(*opened));
  std::vector<std::byte> out(16);
  ASSERT_TRUE(moved.read_at(0, out).ok());
  EXPECT_EQ(out, bytes);
  auto other = file_reader::open(path);
  ASSERT_TRUE(other);
  *other = std::move(moved);
  ASSERT_TRUE(other->read_at(0, out).ok());
  EXPECT_EQ(out, bytes);
  std::filesystem::remove_all(dir);
}

TEST(file_reader, map_all_is_the_file_then_zero_padding_at_every_page_boundary) {
  const auto dir = trialstat::testing::make_scratch_dir("file_reader_map");
  // Sizes around page boundaries: the padding must be readable zeros in every case.
  for (const std::size_t size : {std::size_t{1}, std::size_t{1000}, std::size_t{4096 - 10},
                                 std::size_t{4096}, std::size_t{3 * 4096}, std::size_t{3 * 4096 + 1}}) {
    SCOPED_TRACE(size);
    const auto path = dir / ("data" + std::to_string(size) + ".bin");
    const auto bytes = pattern(size, 3);
    write_file(path, bytes);
    auto file = file_reader::open(path);
    ASSERT_TRUE(file) << file.error_status().to_string();
    auto mapped = file->map_all();
    ASSERT_TRUE(mapped) << mapped.error_status().to_string();
    ASSERT_TRUE(static_cast<bool>(*mapped));
    EXPECT_EQ(mapped->size_bytes(), size);
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), mapped->data()));
    for (std::size_t i = 0; i < record_padding_bytes; ++i) {
      ASSERT_EQ(mapped->data()[size + i], std::byte{0}) << "padding byte " << i;
    }
    // Moves hand the mapping over; reset unmaps.
    mapped_bytes moved = std::move(*mapped);
    EXPECT_FALSE(static_cast<bool>(*mapped));
    EXPECT_EQ(moved.data()[size - 1], bytes[size - 1]);
    moved.reset();
    EXPECT_FALSE(static_cast<bool>(moved));
  }
}

TEST(file_reader, map_all_of_an_empty_file_is_padding_only) {
  const auto dir = trialstat::testing::make_scratch_dir("file_reader_map_empty");
  const auto path = dir / "empty.bin";
  write_file(path, {});
  auto file = file_reader::open(path);
  ASSERT_TRUE(file);
  auto mapped = file->map_all();
  ASSERT_TRUE(mapped) << mapped.error_status().to_string();
  EXPECT_EQ(mapped->size_bytes(), 0u);
  EXPECT_EQ(mapped->data()[0], std::byte{0});
}

TEST(read_file, whole_file_with_zeroed_padding) {
  const auto dir = trialstat::testing::make_scratch_dir("read_file");
  const auto path = dir / "whole.bin";
  const auto bytes = pattern(777, 11);
  write_file(path, bytes);
  // Poison: a reused buffer, larger than needed and full of 0xFF.
  std::vector<std::byte> buffer(5000, std::byte{0xFF});
  auto size = read_file(path, buffer);
  ASSERT_TRUE(size) << size.error_status().to_string();
  EXPECT_EQ(*size, 777u);
  ASSERT_EQ(buffer.size(), 777u + record_padding_bytes);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), buffer.begin()));
  for (std::size_t i = 777; i < buffer.size(); ++i) {
    ASSERT_EQ(buffer[i], std::byte{0}) << "padding byte " << i;
  }
  std::filesystem::remove_all(dir);
}

TEST(read_file, empty_file) {
  const auto dir = trialstat::testing::make_scratch_dir("read_file");
  const auto path = dir / "empty.bin";
  write_file(path, {});
  std::vector<std::byte> buffer(3, std::byte{0xFF});
  auto size = read_file(path, buffer);
  ASSERT_TRUE(size);
  EXPECT_EQ(*size, 0u);
  ASSERT_EQ(buffer.size(), record_padding_bytes);
  for (auto b : buffer) EXPECT_EQ(b, std::byte{0});
  std::filesystem::remove_all(dir);
}

/// The folder open for read_file_at, closed at the end of the test.
struct open_folder {
  explicit open_folder(const std::filesystem::path& dir) : fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY)) {}
  ~open_folder() { if (fd >= 0) ::close(fd); }
  open_folder(const open_folder&) = delete;
  open_folder& operator=(const open_folder&) = delete;
  int fd;
};

bool padding_is_zero(const std::vector<std::byte>& buffer, std::size_t size) {
  if (buffer.size() < size + record_padding_bytes) return false;
  return std::all_of(buffer.begin() + static_cast<std::ptrdiff_t>(size),
                     buffer.begin() + static_cast<std::ptrdiff_t>(size + record_padding_bytes),
                     [](std::byte b) { return b == std::byte{0}; });
}

TEST(read_file_at, files_smaller_and_bigger_than_the_reused_buffer) {
  const auto dir = trialstat::testing::make_scratch_dir("read_file_at");
  // Sizes around the first buffer (16 KiB less the padding: a file that fills it cannot be told
  // from a longer one by the read alone) and past it; each read poisons the buffer first.
  const std::size_t room = (std::size_t{16} << 10) - record_padding_bytes;
  const std::vector<std::size_t> sizes = {900, 1, room - 1, room, room + 1, 50000, 40000, 700, 50010};
  for (std::size_t i = 0; i < sizes.size(); ++i) write_file(dir / std::to_string(i), pattern(sizes[i], static_cast<unsigned>(i)));
  open_folder folder(dir);
  ASSERT_GE(folder.fd, 0);
  std::vector<std::byte> buffer;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::fill(buffer.begin(), buffer.end(), std::byte{0xFF});
    const std::string name = std::to_string(i);
    auto size = read_file_at(folder.fd, name.c_str(), dir, name, buffer);
    ASSERT_TRUE(size) << size.error_status().to_string();
    ASSERT_EQ(*size, sizes[i]) << name;
    const auto expected = pattern(sizes[i], static_cast<unsigned>(i));
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), buffer.begin())) << name;
    EXPECT_TRUE(padding_is_zero(buffer, sizes[i])) << name;
  }
  std::filesystem::remove_all(dir);
}

TEST(read_file_at, empty_missing_fifo_folder_and_over_the_limit) {
  const auto dir = trialstat::testing::make_scratch_dir("read_file_at");
  write_file(dir / "empty", {});
  write_file(dir / "big", pattern(3000, 3));
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::filesystem::create_directory(dir / "folder");
  open_folder folder(dir);
  ASSERT_GE(folder.fd, 0);
  std::vector<std::byte> buffer(100, std::byte{0xFF});

  auto empty = read_file_at(folder.fd, "empty", dir, "empty", buffer);
  ASSERT_TRUE(empty) << empty.error_status().to_string();
  EXPECT_EQ(*empty, 0u);
  EXPECT_TRUE(padding_is_zero(buffer, 0));

  auto missing = read_file_at(folder.fd, "missing", dir, "missing", buffer);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error_status().code(), error_code::io_error);
  EXPECT_NE(missing.error_status().message().find((dir / "missing").string()), std::string::npos);

  // A FIFO with no writer: neither a hang nor an empty file.
  auto fifo = read_file_at(folder.fd, "fifo", dir, "fifo", buffer);
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error_status().message().find("not a regular file"), std::string::npos);
  EXPECT_NE(fifo.error_status().message().find((dir / "fifo").string()), std::string::npos);

  auto sub = read_file_at(folder.fd, "folder", dir, "folder", buffer);
  ASSERT_FALSE(sub);
  EXPECT_NE(sub.error_status().message().find((dir / "folder").string()), std::string::npos);

  // Smaller than the buffer but over the caller's limit.
  auto over = read_file_at(folder.fd, "big", dir, "big", buffer, 2999);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error_status().code(), error_code::out_of_memory);
  EXPECT_NE(over.error_status().message().find("3000 bytes"), std::string::npos);
  auto within = read_file_at(folder.fd, "big", dir, "big", buffer, 3000);
  ASSERT_TRUE(within) << within.error_status().to_string();
  EXPECT_EQ(*within, 3000u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trialstat::io

// SPDX-License-Identifier: Apache-2.0
// file_reader (pread) and read_file (whole file + zeroed padding): sizes, exact reads, reads
// past the end, growing files, missing paths; every failure names the path.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace trialstat::io

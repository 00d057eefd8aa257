// SPDX-License-Identifier: Apache-2.0
// The reader's event-file buffers come from the executor's staging pool when they fit one
// buffer (kept across loads), else from an owned vector; the bytes are the same either way.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "host/pipeline/step_reader.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/memory/pinned_pool.hpp"

namespace trialstat::pipeline::detail {
namespace {

std::filesystem::path write_file(const std::filesystem::path& dir, const char* name, std::size_t bytes,
                                 uint8_t seed) {
  std::vector<char> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<char>((i * 131 + seed) & 0xff);
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(bytes));
  return path;
}

void expect_bytes(std::span<const std::byte> got, std::size_t bytes, uint8_t seed, uint64_t start = 0) {
  ASSERT_GE(got.size(), bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    ASSERT_EQ(static_cast<uint8_t>(got[i]), static_cast<uint8_t>(((start + i) * 131 + seed) & 0xff)) << i;
  }
}

TEST(step_reader_pool, SmallFilesGoIntoPoolBuffers) {
  const auto dir = testing::make_scratch_dir("reader_pool");
  auto pool = memory::pinned_pool::create({2, 8192, memory::pool_memory::host});
  ASSERT_TRUE(pool);
  const auto small = write_file(dir, "small", 5000, 7);
  const auto big = write_file(dir, "big", 20000, 9);
  auto small_reader = io::file_reader::open(small);
  auto big_reader = io::file_reader::open(big);
  ASSERT_TRUE(small_reader && big_reader);

  event_file_bytes file;
  const std::vector<io::byte_range> whole_small{{0, 5000}};
  auto loaded = file.load(*small_reader, whole_small, std::size_t{1} << 30, pool->get());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(*loaded, 5000);
  EXPECT_TRUE((*pool)->owns(file.buffer().data(), file.buffer().size()));
  EXPECT_EQ(file.buffer().size(), 5000 + io::record_padding_bytes);
  expect_bytes(file.record(0, 5000), 5000, 7);
  EXPECT_EQ((*pool)->free_count(), 1u);

  // The same lease is kept for the next file that fits.
  const std::byte* first = file.buffer().data();
  ASSERT_TRUE(file.load(*small_reader, whole_small, std::size_t{1} << 30, pool->get()));
  EXPECT_EQ(file.buffer().data(), first);
  EXPECT_EQ((*pool)->counters().acquired, 1);

  // Too big for a buffer: an owned vector, and the lease goes back to the pool.
  const std::vector<io::byte_range> whole_big{{0, 20000}};
  ASSERT_TRUE(file.load(*big_reader, whole_big, std::size_t{1} << 30, pool->get()));
  EXPECT_FALSE((*pool)->owns(file.buffer().data(), 1));
  EXPECT_EQ((*pool)->free_count(), 2u);
  expect_bytes(file.record(0, 20000), 20000, 9);

  // Byte ranges of a file too big to read whole (limit 10000) fit a buffer again.
  const std::vector<io::byte_range> ranges{{100, 300}, {15000, 1000}};
  ASSERT_TRUE(file.load(*big_reader, ranges, 10000, pool->get()));
  EXPECT_TRUE((*pool)->owns(file.buffer().data(), file.buffer().size()));
  expect_bytes(file.record(100, 300), 300, 9, 100);
  expect_bytes(file.record(15000, 1000), 1000, 9, 15000);
  std::filesystem::remove_all(dir);
}

TEST(step_reader_pool, ExhaustedPoolFallsBackToVectors) {
  const auto dir = testing::make_scratch_dir("reader_pool_full");
  auto pool = memory::pinned_pool::create({1, 8192, memory::pool_memory::host});
  ASSERT_TRUE(pool);
  const auto path = write_file(dir, "f", 3000, 3);
  auto reader = io::file_reader::open(path);
  ASSERT_TRUE(reader);
  const std::vector<io::byte_range> whole{{0, 3000}};
  event_file_bytes a, b;
  ASSERT_TRUE(a.load(*reader, whole, std::size_t{1} << 30, pool->get()));
  ASSERT_TRUE(b.load(*reader, whole, std::size_t{1} << 30, pool->get()));
  EXPECT_TRUE((*pool)->owns(a.buffer().data(), 1));
  EXPECT_FALSE((*pool)->owns(b.buffer().data(), 1));  // never waits: the reader must not block
  expect_bytes(a.record(0, 3000), 3000, 3);
  expect_bytes(b.record(0, 3000), 3000, 3);
  std::filesystem::remove_all(dir);
}

TEST(step_reader_map, WholeFilesAtOrAboveTheMinimumAreMappedOthersRead) {
  const auto dir = testing::make_scratch_dir("reader_map");
  const auto path = write_file(dir, "f", 10000, 5);
  auto reader = io::file_reader::open(path);
  ASSERT_TRUE(reader);
  const std::vector<io::byte_range> whole{{0, 10000}};
  event_file_bytes mapped, read, ranged;
  ASSERT_TRUE(mapped.load(*reader, whole, std::size_t{1} << 30, nullptr, true, 4096));
  ASSERT_TRUE(read.load(*reader, whole, std::size_t{1} << 30, nullptr, true, 20000));
  expect_bytes(mapped.record(0, 10000), 10000, 5);
  expect_bytes(read.record(0, 10000), 10000, 5);
  EXPECT_EQ(mapped.buffer().size(), 10000 + io::record_padding_bytes);
  for (std::size_t i = 10000; i < mapped.buffer().size(); ++i) {
    ASSERT_EQ(mapped.buffer()[i], std::byte{0}) << "padding byte " << i;
  }
  // Not a copy: the mapping's pages differ from the reused vector's, and a record past the end
  // is still cut at the file size.
  EXPECT_NE(mapped.buffer().data(), read.buffer().data());
  EXPECT_EQ(mapped.record(9000, 5000).size(), 1000u);
  // Byte ranges (a file too big to read whole) are always read, never mapped.
  const std::vector<io::byte_range> ranges{{100, 300}, {8000, 1000}};
  ASSERT_TRUE(ranged.load(*reader, ranges, 5000, nullptr, true, 0));
  expect_bytes(ranged.record(100, 300), 300, 5, 100);
  expect_bytes(ranged.record(8000, 1000), 1000, 5, 8000);
  // A later load replaces the mapping.
  ASSERT_TRUE(mapped.load(*reader, ranges, 5000, nullptr, true, 0));
  expect_bytes(mapped.record(8000, 1000), 1000, 5, 8000);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trialstat::pipeline::detail

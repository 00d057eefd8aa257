// SPDX-License-Identifier: Apache-2.0
// The S3 receive-buffer pool: capacity classes, reuse of returned buffers, and the cap on what
// it keeps idle.
#include "host/io/s3/part_buffer_pool.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace trialstat::io::detail {
namespace {

TEST(PartBufferPool, CapacityClassesArePowersOfTwoFrom64KiB) {
  EXPECT_EQ(part_buffer_pool::capacity_for(0), uint64_t{64} << 10);
  EXPECT_EQ(part_buffer_pool::capacity_for(1), uint64_t{64} << 10);
  EXPECT_EQ(part_buffer_pool::capacity_for(uint64_t{64} << 10), uint64_t{64} << 10);
  EXPECT_EQ(part_buffer_pool::capacity_for((uint64_t{64} << 10) + 1), uint64_t{128} << 10);
  EXPECT_EQ(part_buffer_pool::capacity_for(9'275'418), uint64_t{16} << 20);
  EXPECT_EQ(part_buffer_pool::capacity_for(uint64_t{1} << 62), uint64_t{1} << 62);
  EXPECT_EQ(part_buffer_pool::capacity_for((uint64_t{1} << 62) + 1), (uint64_t{1} << 62) + 1);  // no overflow
}

TEST(PartBufferPool, ReturnedBuffersAreReusedForTheirClass) {
  part_buffer_pool pool(uint64_t{1} << 20);
  part_buffer a = pool.take(100'000);
  ASSERT_NE(a.data, nullptr);
  EXPECT_EQ(a.capacity_bytes, uint64_t{128} << 10);
  a.data[a.capacity_bytes - 1] = std::byte{0x5A};  // the whole capacity is usable
  const std::byte* address = a.data.get();
  pool.give(std::move(a));
  part_buffer b = pool.take(70'000);  // same class: the same buffer again
  EXPECT_EQ(b.data.get(), address);
  part_buffer c = pool.take(70'000);  // the pool is empty now: a new one
  EXPECT_NE(c.data.get(), address);
  part_buffer d = pool.take(10);  // another class
  EXPECT_EQ(d.capacity_bytes, uint64_t{64} << 10);
}

TEST(PartBufferPool, KeepsAtMostItsCapIdle) {
  part_buffer_pool pool(uint64_t{192} << 10);  // room for one 128 KiB and one 64 KiB buffer
  part_buffer big1 = pool.take(uint64_t{128} << 10), big2 = pool.take(uint64_t{128} << 10);
  part_buffer small = pool.take(1);
  const std::byte* kept_big = big1.data.get();
  const std::byte* kept_small = small.data.get();
  pool.give(std::move(big1));
  pool.give(std::move(big2));  // over the cap: freed
  pool.give(std::move(small));
  pool.give(part_buffer{});  // empty: ignored
  EXPECT_EQ(pool.take(uint64_t{128} << 10).data.get(), kept_big);
  EXPECT_EQ(pool.take(1).data.get(), kept_small);
}

}  // namespace
}  // namespace trialstat::io::detail

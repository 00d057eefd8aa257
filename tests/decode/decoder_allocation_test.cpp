// SPDX-License-Identifier: Apache-2.0
// Steady-state decoding does not allocate (event_decoder.hpp): after a warm-up, decoding the
// same kinds of records again — tensor_content, typed-field repacking, strings — performs no
// heap allocation. Counted by replacing the global operator new in this test executable.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "tests/decode/wire_writer.hpp"
#include "trialstat/decode/event_decoder.hpp"

// GCC flags free() on memory from a replaced operator new; the pairing here is consistent.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return ::operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace trialstat::decode {
namespace {

using trialstat::testing::wire_writer;

std::string event(const wire_writer& tensor, std::string_view tag) {
  wire_writer step_plugin, mode_plugin, metadata, value, summary, ev;
  step_plugin.bytes(1, "mode_step").bytes(2, "17");
  mode_plugin.bytes(1, "mode").bytes(2, "1");
  metadata.message(1, step_plugin).message(1, mode_plugin);
  value.bytes(1, tag).message(8, tensor).message(9, metadata);
  summary.message(1, value);
  ev.f64(1, 1.0).varint(2, 17).message(5, summary);
  return ev.str();
}

wire_writer dims(std::initializer_list<int64_t> sizes) {
  wire_writer shape;
  for (int64_t d : sizes) shape.message(2, wire_writer().varint(1, static_cast<uint64_t>(d)));
  return shape;
}

TEST(decoder_allocation, steady_state_decoding_does_not_allocate) {
  std::vector<std::string> payloads;
  payloads.push_back(event(wire_writer().varint(1, 1).message(2, dims({4, 8}))
                               .bytes(4, std::string(128, '\x3f')),
                           "content"));
  std::vector<uint64_t> values(300);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = i * 7;
  payloads.push_back(
      event(wire_writer().varint(1, 9).message(2, dims({3, 100})).packed_varints(10, values),
            "typed"));
  wire_writer strings;
  strings.varint(1, 7).message(2, dims({20}));
  for (int i = 0; i < 20; ++i) strings.bytes(8, "label " + std::to_string(i));
  payloads.push_back(event(strings, "strings"));
  wire_writer deep;
  deep.varint(1, 2).message(2, dims({1, 1, 1, 1, 1, 1, 1, 1, 1, 2})).packed_fixed(6, {1, 2}, 8);
  payloads.push_back(event(deep, "deep"));

  event_decoder decoder;
  event_record r;
  const long cold = g_allocations.load();
  for (const auto& p : payloads) {  // warm-up: buffers reach their working size
    ASSERT_TRUE(decoder.decode(trialstat::testing::as_bytes(p), r).ok());
  }
  // The counter works: the first decodes did grow the record's vectors and the scratch.
  EXPECT_GT(g_allocations.load() - cold, 0);
  const long before = g_allocations.load();
  bool all_ok = true;
  for (int round = 0; round < 100; ++round) {
    for (const auto& p : payloads) {
      all_ok = all_ok && decoder.decode(trialstat::testing::as_bytes(p), r).ok();
    }
  }
  const long after = g_allocations.load();
  EXPECT_TRUE(all_ok);
  EXPECT_EQ(after - before, 0) << "allocations during 400 steady-state decodes";
  // The last decode (deep) is intact.
  EXPECT_EQ(r.tag, "deep");
  EXPECT_EQ(r.num_elements, 2);
  EXPECT_EQ(r.content.size(), 16u);
}

}  // namespace
}  // namespace trialstat::decode

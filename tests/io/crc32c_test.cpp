// SPDX-License-Identifier: Apache-2.0
// CRC-32C on both backends: the check value, RFC 3720 appendix B.4 vectors, masking (FORMAT §2
// worked example) and agreement on random data of every length and alignment.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include "trialstat/io/crc32c.hpp"

namespace trialstat::io {
namespace {

using crc_function = uint32_t (*)(uint32_t, const std::byte*, std::size_t) noexcept;

struct backend {
  const char* name;
  crc_function extend;
};

class crc32c_backend_test : public ::testing::TestWithParam<backend> {
 protected:
  void SetUp() override {
    if (std::string_view(GetParam().name) == "sse42" && !crc32c_hardware_available()) {
      GTEST_SKIP() << "CPU has no SSE4.2";
    }
  }
  uint32_t crc(const std::vector<uint8_t>& bytes) const {
    return GetParam().extend(0, reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  }
};

TEST_P(crc32c_backend_test, check_value) {
  const std::string_view digits = "123456789";
  EXPECT_EQ(crc(std::vector<uint8_t>(digits.begin(), digits.end())), 0xE3069283u);
}

TEST_P(crc32c_backend_test, rfc3720_vectors) {
  EXPECT_EQ(crc(std::vector<uint8_t>(32, 0x00)), 0x8A9136AAu);
  EXPECT_EQ(crc(std::vector<uint8_t>(32, 0xFF)), 0x62A8AB43u);
  std::vector<uint8_t> ascending(32), descending(32);
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<uint8_t>(i);
    descending[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(crc(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc(descending), 0x113FDB5Cu);
  // iSCSI SCSI Read (10) command PDU, RFC 3720 B.4.
  const std::vector<uint8_t> pdu = {
      0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14,
      0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(crc(pdu), 0xD9963A56u);
}

TEST_P(crc32c_backend_test, extend_equals_whole) {
  std::mt19937 rng(12345);
  std::vector<uint8_t> bytes(1000);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  const auto* p = reinterpret_cast<const std::byte*>(bytes.data());
  const uint32_t whole = GetParam().extend(0, p, bytes.size());
  for (std::size_t split : {0u, 1u, 7u, 8u, 9u, 500u, 999u, 1000u}) {
    const uint32_t first = GetParam().extend(0, p, split);
    EXPECT_EQ(GetParam().extend(first, p + split, bytes.size() - split), whole) << "split " << split;
  }
}

INSTANTIATE_TEST_SUITE_P(backends, crc32c_backend_test,
                         ::testing::Values(backend{"portable", &crc32c_extend_portable},
                                           backend{"sse42", &crc32c_extend_sse42}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(crc32c, backends_agree_on_random_data_all_lengths_and_alignments) {
  if (!crc32c_hardware_available()) GTEST_SKIP() << "CPU has no SSE4.2";
  const unsigned seed = 20261122;
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(4096 + 16);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  for (std::size_t offset = 0; offset < 16; ++offset) {
    for (std::size_t length : {0u, 1u, 3u, 8u, 15u, 64u, 1000u, 4096u}) {
      const auto* p = reinterpret_cast<const std::byte*>(bytes.data() + offset);
      ASSERT_EQ(crc32c_extend_portable(0, p, length), crc32c_extend_sse42(0, p, length))
          << "seed " << seed << " offset " << offset << " length " << length;
    }
  }
}

TEST(crc32c, masking_matches_format_worked_example) {
  // FORMAT §11: crc 0xC91AF765 of the length bytes 53 00.. masks to 0x914E7D0D.
  const uint8_t length_bytes[8] = {0x53, 0, 0, 0, 0, 0, 0, 0};
  const uint32_t raw = crc32c({reinterpret_cast<const std::byte*>(length_bytes), 8});
  EXPECT_EQ(raw, 0xC91AF765u);
  EXPECT_EQ(mask_crc32c(raw), 0x914E7D0Du);
  EXPECT_EQ(unmask_crc32c(0x914E7D0Du), raw);
  // The smdebug footer: masked crc32c of the 10 ASCII bytes "0x12345678" = 0x062DC0B3.
  const std::string_view magic = "0x12345678";
  EXPECT_EQ(mask_crc32c(crc32c({reinterpret_cast<const std::byte*>(magic.data()), magic.size()})),
            0x062DC0B3u);
}

}  // namespace
}  // namespace trialstat::io

#include "ccbench/hmac_sha256.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ccbench {
namespace {

std::string hex_hmac(const std::vector<std::uint8_t>& key, const std::string& data) {
  return to_hex(hmac_sha256(key, data));
}

std::vector<std::uint8_t> repeated(std::uint8_t byte, std::size_t n) {
  std::vector<std::uint8_t> bytes(n, byte);
  return bytes;
}

// The glue to libcrypto: RFC 4231's vectors through hmac_sha256() and to_hex().
TEST(HmacSha256, Rfc4231) {
  EXPECT_EQ(hex_hmac(repeated(0x0b, 20), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hex_hmac({'J', 'e', 'f', 'e'}, "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hex_hmac(repeated(0xaa, 20), std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::vector<std::uint8_t> key4;
  for (std::uint8_t b = 1; b <= 25; ++b) {
    key4.push_back(b);
  }
  EXPECT_EQ(hex_hmac(key4, std::string(50, '\xcd')),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  EXPECT_EQ(hex_hmac(repeated(0x0c, 20), "Test With Truncation").substr(0, 32), "a3b6167473100ee06e0c796c2955552b");
  EXPECT_EQ(hex_hmac(repeated(0xaa, 131), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hex_hmac(repeated(0xaa, 131),
                     "This is a test using a larger than block-size key and a larger than block-size data. The key "
                     "needs to be hashed before being used by the HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256, WipeZeroesTheBytes) {
  std::vector<std::uint8_t> key = repeated(0xaa, 16);
  wipe(key);
  EXPECT_EQ(key, repeated(0, 16));
}

TEST(HmacSha256, ConstantTimeCompare) {
  EXPECT_TRUE(equal_in_constant_time("abc", "abc"));
  EXPECT_FALSE(equal_in_constant_time("abc", "abd"));
  EXPECT_FALSE(equal_in_constant_time("abc", "ab"));
  EXPECT_TRUE(equal_in_constant_time("", ""));
}

}  // namespace
}  // namespace ccbench

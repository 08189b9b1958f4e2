#include "ccbench/hmac_sha256.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ccbench {
namespace {

std::string hex_sha256(const std::string& text) { return to_hex(sha256(text)); }

std::string hex_hmac(const std::vector<std::uint8_t>& key, const std::string& data) {
  return to_hex(hmac_sha256(key, data));
}

std::vector<std::uint8_t> repeated(std::uint8_t byte, std::size_t n) {
  std::vector<std::uint8_t> bytes(n, byte);
  return bytes;
}

// FIPS 180-4's examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf") and the empty message.
TEST(Sha256, FipsExamples) {
  EXPECT_EQ(hex_sha256("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_sha256(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_sha256(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesHashAsTheWhole) {
  const std::string text(200, 'x');
  for (const std::size_t cut : {0UL, 1UL, 55UL, 56UL, 63UL, 64UL, 65UL, 199UL}) {
    Sha256 h;
    h.update(std::string_view(text).substr(0, cut));
    h.update(std::string_view(text).substr(cut));
    EXPECT_EQ(to_hex(h.finish()), hex_sha256(text)) << "cut at " << cut;
  }
}

// RFC 4231 section 4, test cases 1-7 (case 5 is compared on its 128-bit truncation, as the RFC gives it).
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

TEST(HmacSha256, ConstantTimeCompare) {
  EXPECT_TRUE(equal_in_constant_time("abc", "abc"));
  EXPECT_FALSE(equal_in_constant_time("abc", "abd"));
  EXPECT_FALSE(equal_in_constant_time("abc", "ab"));
  EXPECT_TRUE(equal_in_constant_time("", ""));
}

}  // namespace
}  // namespace ccbench

#include "ccbench/roll_message.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ccbench {
namespace {

RollKey key_of(std::uint8_t first) {
  RollKey k{};
  for (std::size_t i = 0; i < k.size(); ++i) {
    k[i] = static_cast<std::uint8_t>(first + i);
  }
  return k;
}

TEST(RollMessage, ASealedMessageOpensWithItsKey) {
  const RollKey key = key_of(1);
  const std::string datagram = seal(key, {RollVerb::Note, 3, 42, "{\"line one\":\n\"two\"}"});
  EXPECT_EQ(datagram.substr(0, datagram.find(' ', 12)), "CCBRC2 NOTE 3");
  const auto m = unseal(key, datagram);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->verb, RollVerb::Note);
  EXPECT_EQ(m->sender, 3);
  EXPECT_EQ(m->seq, 42U);
  EXPECT_EQ(m->body, "{\"line one\":\n\"two\"}");
  const auto ping = unseal(key, seal(key, {RollVerb::Ping, 0, 1, {}}));
  ASSERT_TRUE(ping.has_value());
  EXPECT_EQ(ping->body, "");
}

TEST(RollMessage, EveryTamperedByteIsRefused) {
  const RollKey key = key_of(1);
  const std::string datagram = seal(key, {RollVerb::Here, 1, 7, "7 -1.000 all_reduce 4 B"});
  for (std::size_t i = 0; i < datagram.size(); ++i) {
    std::string forged = datagram;
    forged[i] = static_cast<char>(forged[i] ^ 0x01);
    EXPECT_FALSE(unseal(key, forged).has_value()) << "byte " << i << " changed: " << forged;
  }
  EXPECT_FALSE(unseal(key, datagram + "x").has_value());
  EXPECT_FALSE(unseal(key, datagram.substr(0, datagram.size() - 1)).has_value());
}

TEST(RollMessage, AnotherKeyIsRefused) {
  const std::string datagram = seal(key_of(1), {RollVerb::Ping, 1, 7, {}});
  EXPECT_FALSE(unseal(key_of(2), datagram).has_value());
  EXPECT_FALSE(unseal(RollKey{}, datagram).has_value());
}

TEST(RollMessage, NoMacOrAMalformedHeadIsRefused) {
  const RollKey key = key_of(1);
  const std::string mac(64, '0');
  for (const std::string& junk : std::vector<std::string>{
           "", "hello", "CCBRC1 PING 4242", "CCBRC1 NOTE 4243\n{}", "CCBRC2 PING 1 17", "CCBRC2 PING 1 17\n",
           "CCBRC2 PING 1 18 " + mac + "\n", "CCBRC2 PING 1 18  " + mac + "\n", "CCBRC2 PING -1 18 " + mac + "\n",
           "CCBRC2 SHOUT 1 18 " + mac + "\n", "CCBRC2 PING 1 x " + mac + "\n", "CCBRC2 PING 1 18 " + mac + "0\n"}) {
    EXPECT_FALSE(unseal(key, junk).has_value()) << junk;
  }
}

TEST(RollMessage, AReplayedSeqIsRefused) {
  ReplayGuard guard;
  EXPECT_TRUE(guard.fresh(1, 5));
  EXPECT_FALSE(guard.fresh(1, 5));  // the same datagram again
  EXPECT_FALSE(guard.fresh(1, 4));  // an older one
  EXPECT_TRUE(guard.fresh(2, 5));   // each sender counts on its own
  EXPECT_TRUE(guard.fresh(1, 6));
  EXPECT_FALSE(guard.fresh(1, 6));
}

TEST(RollMessage, KeysAreRandom) {
  const RollKey a = random_roll_key();
  const RollKey b = random_roll_key();
  EXPECT_NE(a, b);
  EXPECT_NE(a, RollKey{});
}

}  // namespace
}  // namespace ccbench

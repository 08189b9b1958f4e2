#include "ccbench/roll_call.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <poll.h>

#include <atomic>
#include <csignal>
#include <future>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ccbench/errors.hpp"
#include "ccbench/roll_message.hpp"
#include "ccbench/tcp_pair.hpp"

namespace ccbench {
namespace {

/// A bound UDP port that never answers: a rank that is stopped.
class SilentPort {
 public:
  SilentPort() : m_fd(::socket(AF_INET, SOCK_DGRAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);  // NOLINT
    socklen_t len = sizeof a;
    ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len);  // NOLINT
    m_port = ntohs(a.sin_port);
  }
  SilentPort(const SilentPort&) = delete;
  SilentPort& operator=(const SilentPort&) = delete;
  SilentPort(SilentPort&&) = delete;
  SilentPort& operator=(SilentPort&&) = delete;
  ~SilentPort() { ::close(m_fd); }
  [[nodiscard]] int port() const { return m_port; }

 private:
  int m_fd;
  int m_port = 0;
};

std::uint32_t loopback() { return htonl(INADDR_LOOPBACK); }

/// A rank listening on loopback with `key`.
std::unique_ptr<RollCall> listening(int rank, const std::string& host, const RollKey& key) {
  auto r = std::make_unique<RollCall>(rank, host);
  r->listen(key, {loopback()});
  return r;
}

int port_of(const std::string& card) {
  std::istringstream in(card);
  int rank = 0;
  std::string host;
  int port = 0;
  in >> rank >> host >> port;
  return port;
}

// Ranks of one job in this process; the host names decide who is reached over loopback.
struct Job {
  RollKey key = random_roll_key();
  std::vector<std::unique_ptr<RollCall>> ranks;
  std::vector<std::string> cards;
};

Job make_job(const std::vector<std::string>& hosts) {
  Job job;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    job.ranks.push_back(listening(static_cast<int>(r), hosts[r], job.key));
    job.cards.push_back(job.ranks.back()->card());
  }
  for (auto& r : job.ranks) {
    r->set_peers(job.cards);
  }
  return job;
}

TEST(RollCall, EveryLiveRankAnswersWithWhatItIsDoing) {
  Job job = make_job({"h", "h", "h"});
  job.ranks[1]->set_activity("all_reduce 4194304 B out-of-place in group world");
  const auto out = job.ranks[0]->call(5.0, 0.0);
  EXPECT_TRUE(out.silent.empty());
  ASSERT_EQ(out.answered.size(), 3U);
  EXPECT_EQ(out.answered[1].rank, 1);
  EXPECT_EQ(out.answered[1].activity, "all_reduce 4194304 B out-of-place in group world");
  EXPECT_EQ(out.answered[2].activity, "setting up");
}

TEST(RollCall, ARankThatDoesNotAnswerIsNamedSilent) {
  const SilentPort stopped;
  const RollKey key = random_roll_key();
  auto a = listening(0, "node0", key);
  auto b = listening(1, "node0", key);
  const std::vector<std::string> cards{a->card(), b->card(),
                                       "2 node0 " + std::to_string(stopped.port()) + " 127.0.0.1"};
  a->set_peers(cards);
  b->set_peers(cards);
  const auto out = a->call(0.6, 0.0);
  EXPECT_EQ(out.silent, std::vector<int>{2});
  EXPECT_EQ(out.answered.size(), 2U);
  EXPECT_EQ(a->describe(out.silent), "rank 2 (node0)");
}

TEST(RollCall, ARankResumedFromAStopCountsAsSilent) {
  Job job = make_job({"h", "h"});
  EXPECT_LT(RollCall::resumed_s_ago(), 0.0);  // never stopped
  ASSERT_EQ(::raise(SIGCONT), 0);             // what Open MPI sends a stopped rank before killing it
  EXPECT_GE(RollCall::resumed_s_ago(), 0.0);
  const auto recent = job.ranks[0]->call(5.0, 60.0);
  EXPECT_EQ(recent.silent, (std::vector<int>{0, 1}));
  EXPECT_EQ(recent.resumed, (std::vector<int>{0, 1}));
  EXPECT_GE(recent.answered.at(1).resumed_s_ago, 0.0);
  const auto long_ago = job.ranks[0]->call(5.0, 0.0);
  EXPECT_TRUE(long_ago.silent.empty());
}

TEST(RollCall, ANoticeIsHandledBeforeNotifyReturns) {
  Job job = make_job({"h", "h"});
  std::atomic<int> handled{0};
  std::string seen;
  job.ranks[0]->on_notice([&](const std::string& payload) {
    seen = payload;
    ++handled;
  });
  EXPECT_TRUE(job.ranks[1]->notify(0, "{\"line one\":\n\"two\"}", 5.0));
  EXPECT_GE(handled.load(), 1);
  EXPECT_EQ(seen, "{\"line one\":\n\"two\"}");
}

TEST(RollCall, ANoticeToASilentRankIsNotDelivered) {
  const SilentPort stopped;
  auto a = listening(0, "h", random_roll_key());
  a->set_peers({a->card(), "1 h " + std::to_string(stopped.port()) + " 127.0.0.1"});
  EXPECT_FALSE(a->notify(1, "anything", 0.3));
  EXPECT_FALSE(a->notify(7, "no such rank", 0.3));
}

TEST(RollCall, DescribeGroupsConsecutiveRanksOfAHost) {
  auto a = std::make_unique<RollCall>(0, "x");
  a->set_peers({"0 node0 1 10.0.0.1", "1 node0 1 10.0.0.1", "2 node1 1 10.0.0.2", "3 node1 1 10.0.0.2"});
  EXPECT_EQ(a->describe({3}), "rank 3 (node1)");
  EXPECT_EQ(a->describe({2, 3}), "ranks 2, 3 (node1)");
  EXPECT_EQ(a->describe({1, 3}), "ranks 1 (node0), 3 (node1)");
  EXPECT_EQ(a->host_of(2), "node1");
  EXPECT_EQ(a->host_of(9), "");
}

TEST(RollCall, MalformedCardsAreRefused) {
  auto a = std::make_unique<RollCall>(0, "x");
  EXPECT_THROW(a->set_peers({"0 node0"}), BackendError);
  EXPECT_THROW(a->set_peers({"1 node0 5 10.0.0.1"}), BackendError);  // card of rank 1 in slot 0
  EXPECT_THROW(a->set_peers({"0 node0 70000 10.0.0.1"}), BackendError);
  EXPECT_THROW(a->set_peers({"0 node0 5 10.0.0.300"}), BackendError);
}

/// Sends `text` to `port` on loopback and returns the answer that comes within `ms`.
std::optional<std::string> ask(int port, const std::string& text, int ms = 500) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = loopback();
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  ::sendto(fd, text.data(), text.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);  // NOLINT
  pollfd p{fd, POLLIN, 0};
  std::optional<std::string> answer;
  if (::poll(&p, 1, ms) == 1) {
    std::string buffer(65536, '\0');
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n >= 0) {
      answer = buffer.substr(0, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return answer;
}

TEST(RollCall, ForeignDatagramsAreIgnoredAndCounted) {
  Job job = make_job({"h", "h"});
  const std::string mac(64, '0');
  const std::vector<std::string> junk{"",
                                      "hello",
                                      "CCBRC1",
                                      "CCBRC1 PING 4242",
                                      "CCBRC1 NOTE 4243\n{}",
                                      "CCBRC2 PING 0 1",
                                      "CCBRC2 PING 0 2 " + mac + "\n",
                                      seal(RollKey{}, {RollVerb::Ping, 0, 3, {}})};
  for (const auto& j : junk) {
    EXPECT_FALSE(ask(port_of(job.cards[1]), j, 200).has_value()) << j;
  }
  EXPECT_EQ(job.ranks[1]->ignored().rejected, junk.size());
  const auto out = job.ranks[0]->call(5.0, 0.0);  // rank 1 still answers
  EXPECT_TRUE(out.silent.empty());
}

TEST(RollCall, APingWithTheKeyIsAnsweredOnceAndItsReplayNever) {
  Job job = make_job({"h", "h"});
  job.ranks[0]->set_activity("all_reduce 8 B");
  const std::string ping = seal(job.key, {RollVerb::Ping, 1, 1000, {}});
  const auto first = ask(port_of(job.cards[0]), ping);
  ASSERT_TRUE(first.has_value());
  const auto here = unseal(job.key, *first);
  ASSERT_TRUE(here.has_value());
  EXPECT_EQ(here->verb, RollVerb::Here);
  EXPECT_EQ(here->sender, 0);
  EXPECT_TRUE(here->body.starts_with("1000 ")) << here->body;  // the SEQ it answers, then when last resumed
  EXPECT_TRUE(here->body.ends_with(" all_reduce 8 B")) << here->body;
  EXPECT_FALSE(ask(port_of(job.cards[0]), ping).has_value());  // the same datagram again
  EXPECT_FALSE(ask(port_of(job.cards[0]), seal(job.key, {RollVerb::Ping, 1, 999, {}})).has_value());  // older
  EXPECT_EQ(job.ranks[0]->ignored().replayed, 2U);
  EXPECT_EQ(job.ranks[0]->ignored().rejected, 0U);
}

TEST(RollCall, ANoticeIsHandledOnlyWithTheKeyAndOnlyOnce) {
  Job job = make_job({"h", "h"});
  std::atomic<int> handled{0};
  job.ranks[0]->on_notice([&](const std::string& /*payload*/) { ++handled; });
  RollKey wrong = job.key;
  wrong[0] ^= 1U;
  EXPECT_FALSE(ask(port_of(job.cards[0]), seal(wrong, {RollVerb::Note, 1, 5, "{}"})).has_value());
  EXPECT_EQ(handled.load(), 0);
  const std::string note = seal(job.key, {RollVerb::Note, 1, 6, "{}"});
  const auto done = ask(port_of(job.cards[0]), note);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(unseal(job.key, *done)->verb, RollVerb::Done);
  EXPECT_FALSE(ask(port_of(job.cards[0]), note).has_value());
  EXPECT_EQ(handled.load(), 1);
  EXPECT_EQ(job.ranks[0]->ignored().rejected, 1U);
  EXPECT_EQ(job.ranks[0]->ignored().replayed, 1U);
}

TEST(RollCall, AnswersUnderAnotherKeyAreNotTaken) {
  Job job = make_job({"h", "h"});
  auto stranger = listening(1, "h", random_roll_key());  // rank 1's card, another job's key
  job.ranks[0]->set_peers({job.cards[0], stranger->card()});
  const auto out = job.ranks[0]->call(0.6, 0.0);
  EXPECT_EQ(out.silent, std::vector<int>{1});
  EXPECT_GE(stranger->ignored().rejected, 1U);  // it refused our PINGs: they are not under its key
}

// The standalone RDMA pair: the key goes over the pair's TCP connection, as MPI carries it in a job.
TEST(RollCall, JoinOverATcpPairSharesTheKeyAndBindsLoopbackOnOneHost) {
  TcpListener listener(0);
  auto server = std::async(std::launch::async, [&] { return listener.accept(30, "roll"); });
  auto client = TcpPair::connect("127.0.0.1", listener.port(), 30, "roll");
  auto server_pair = server.get();
  RollCall a(0, "h");
  RollCall b(1, "h");
  auto joined = std::async(std::launch::async, [&] { a.join(*server_pair); });
  b.join(*client);
  joined.get();
  EXPECT_EQ(a.card(), "0 h " + std::to_string(port_of(a.card())) + " 127.0.0.1");
  b.set_activity("ib_write_bw 64 B");
  const auto out = a.call(5.0, 0.0);
  EXPECT_TRUE(out.silent.empty());
  ASSERT_EQ(out.answered.size(), 2U);
  EXPECT_EQ(out.answered[1].activity, "ib_write_bw 64 B");
  EXPECT_TRUE(b.notify(0, "{}", 5.0));
}

TEST(RollCall, BindsLoopbackForItsHostAndInterfacesForOthers) {
  const std::vector<std::uint32_t> eth{htonl(0x0a000001)};
  using V = std::vector<std::uint32_t>;
  EXPECT_EQ(RollCall::addresses_to_bind(0, {"a", "a"}, eth), V{loopback()});
  EXPECT_EQ(RollCall::addresses_to_bind(0, {"a"}, eth), V{loopback()});
  EXPECT_EQ(RollCall::addresses_to_bind(0, {"a", "b"}, eth), eth);
  EXPECT_EQ(RollCall::addresses_to_bind(0, {"a", "a", "b"}, eth), (V{loopback(), eth[0]}));
  EXPECT_EQ(RollCall::addresses_to_bind(2, {"a", "a", "b"}, eth), eth);
  EXPECT_EQ(RollCall::addresses_to_bind(0, {"a", "b"}, {}), V{loopback()});
}

}  // namespace
}  // namespace ccbench

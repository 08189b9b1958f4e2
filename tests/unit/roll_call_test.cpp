#include "ccbench/roll_call.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "ccbench/errors.hpp"

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

// Three ranks of one job in this process; the host names decide who is reached over loopback.
struct Job {
  std::vector<std::unique_ptr<RollCall>> ranks;
  std::vector<std::string> cards;
};

Job make_job(const std::vector<std::string>& hosts) {
  Job job;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    job.ranks.push_back(std::make_unique<RollCall>(static_cast<int>(r), hosts[r]));
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
  auto a = std::make_unique<RollCall>(0, "node0");
  auto b = std::make_unique<RollCall>(1, "node0");
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
  auto a = std::make_unique<RollCall>(0, "h");
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

TEST(RollCall, ForeignDatagramsAreIgnored) {
  Job job = make_job({"h", "h"});
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const std::string card = job.cards[1];
  to.sin_port = htons(static_cast<std::uint16_t>(std::stoi(card.substr(card.find(' ', 2) + 1))));
  for (const std::string junk : {"", "hello", "CCBRC1", "CCBRC1 PING", "CCBRC1 NOTE x", "CCBRC2 PING 1"}) {
    ::sendto(fd, junk.data(), junk.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);  // NOLINT
  }
  ::close(fd);
  const auto out = job.ranks[0]->call(5.0, 0.0);  // rank 1 still answers
  EXPECT_TRUE(out.silent.empty());
}

}  // namespace
}  // namespace ccbench

#include "ccbench/tcp_pair.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "ccbench/errors.hpp"

namespace ccbench {
namespace {

constexpr std::string_view kId = "ib_write_bw_bench 0.1.0";
constexpr double kPatient_s = 30;  // where an answer is expected: never reached on a good run
constexpr double kShort_s = 0.3;   // where a timeout is the expected outcome

std::string le32(std::uint32_t v) {
  std::string s;
  for (unsigned i = 0; i < 4; ++i) {
    s.push_back(static_cast<char>((v >> (8U * i)) & 0xffU));
  }
  return s;
}

std::string frame(TcpFrame type, std::string_view payload) {
  return std::string(kTcpPairMagic) + le32(static_cast<std::uint32_t>(type)) +
         le32(static_cast<std::uint32_t>(payload.size())) + std::string(payload);
}

std::string hello(std::uint32_t version, std::string_view id, std::string_view settings = "") {
  return frame(TcpFrame::Hello, le32(version) + le32(static_cast<std::uint32_t>(id.size())) + std::string(id) +
                                    le32(static_cast<std::uint32_t>(settings.size())) + std::string(settings));
}

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  return a;
}

std::uint16_t local_port(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  return ntohs(a.sin_port);
}

/// A TCP port bound on 127.0.0.1 but not listening: connecting to it is refused, and nobody else
/// gets it until release().
class ReservedPort {
 public:
  ReservedPort() : m_fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    const sockaddr_in a = loopback(0);
    EXPECT_EQ(::bind(m_fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
    m_port = local_port(m_fd.get());
  }
  [[nodiscard]] std::uint16_t port() const { return m_port; }
  void release() { m_fd.reset(); }

 private:
  SocketFd m_fd;
  std::uint16_t m_port = 0;
};

/// Both ends of a loopback TCP connection, made without a TcpPair: one end plays a fake peer.
struct RawLink {
  SocketFd client;
  SocketFd server;
};

RawLink raw_link() {
  SocketFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a = loopback(0);
  EXPECT_EQ(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::listen(listener.get(), 1), 0);
  a.sin_port = htons(local_port(listener.get()));
  RawLink link{SocketFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)), SocketFd()};
  EXPECT_EQ(::connect(link.client.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  link.server.reset(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  EXPECT_GE(link.server.get(), 0);
  return link;
}

void send_raw(const SocketFd& fd, std::string_view bytes) {
  ASSERT_EQ(::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

/// Constructs a TcpPair over `fd` and returns the message of the `E` it throws ("" when none).
template <typename E>
std::string error_of(SocketFd fd, TcpRole role, double timeout_s = kPatient_s, std::string_view id = kId) {
  try {
    TcpPair pair(std::move(fd), role, timeout_s, id, "");
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

struct Pair {
  std::unique_ptr<TcpPair> server;
  std::unique_ptr<TcpPair> client;
};

Pair connected(std::string_view server_settings = "", std::string_view client_settings = "") {
  TcpListener listener(0);
  auto server = std::async(std::launch::async, [&] { return listener.accept(kPatient_s, kId, server_settings); });
  auto client = TcpPair::connect("127.0.0.1", listener.port(), kPatient_s, kId, client_settings);
  return {server.get(), std::move(client)};
}

std::size_t count_entries(const char* dir) {
  const std::filesystem::directory_iterator it(dir);
  return static_cast<std::size_t>(std::distance(begin(it), end(it)));
}

/// Every test ends with the descriptors and threads it started with.
class TcpPairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_fds = count_entries("/proc/self/fd");
    m_threads = count_entries("/proc/self/task");
  }
  void TearDown() override {
    EXPECT_EQ(count_entries("/proc/self/fd"), m_fds) << "a socket was left open";
    // A joined thread can linger in /proc for a moment.
    for (int i = 0; i < 100 && count_entries("/proc/self/task") != m_threads; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(count_entries("/proc/self/task"), m_threads) << "a thread was left running";
  }

 private:
  std::size_t m_fds = 0;
  std::size_t m_threads = 0;
};

TEST_F(TcpPairTest, AGoodSessionRunsEveryGroupOperation) {
  Pair pair = connected("iters=100", "iters=100 bidir");
  auto& server = pair.server;
  auto& client = pair.client;
  EXPECT_EQ(server->rank(), 0);
  EXPECT_EQ(client->rank(), 1);
  EXPECT_EQ(server->size(), 2);
  EXPECT_EQ(server->peer_settings(), "iters=100 bidir");
  EXPECT_EQ(client->peer_settings(), "iters=100");
  EXPECT_EQ(client->peer_program_id(), kId);
  EXPECT_EQ(server->port(), client->port());
  EXPECT_EQ(client->peer_description(), fmt::format("127.0.0.1:{}", client->port()));
  EXPECT_TRUE(server->peer_description().starts_with("127.0.0.1:")) << server->peer_description();

  struct Seen {
    std::vector<double> max;
    std::vector<std::uint64_t> sum;
    std::vector<std::byte> bytes;
    std::vector<std::string> gathered;
    std::string peer;
    std::string big;
  };
  const auto script = [](TcpPair& p) {
    Seen s;
    const bool zero = p.rank() == 0;
    p.barrier();
    s.max = zero ? std::vector<double>{1.5, -2.0} : std::vector<double>{0.5, 3.0};
    p.max_all(s.max);
    s.sum = zero ? std::vector<std::uint64_t>{1, 1ULL << 40U} : std::vector<std::uint64_t>{2, 5};
    p.sum_all(s.sum);
    s.bytes = zero ? std::vector<std::byte>(3) : std::vector<std::byte>{std::byte{7}, std::byte{8}, std::byte{9}};
    p.broadcast(s.bytes, 1);
    s.gathered = p.all_gather(zero ? "zero" : "one");
    s.peer = p.exchange(zero ? "qpn=17" : "qpn=42");
    // Far more than the socket buffers hold, both ways: no deadlock, short reads joined up.
    s.big = p.exchange(std::string(8U << 20U, zero ? 'a' : 'b'));
    p.barrier();
    return s;
  };
  auto on_server = std::async(std::launch::async, [&] { return script(*server); });
  const Seen c = script(*client);
  const Seen s = on_server.get();
  for (const Seen& seen : {s, c}) {
    EXPECT_EQ(seen.max, (std::vector<double>{1.5, 3.0}));
    EXPECT_EQ(seen.sum, (std::vector<std::uint64_t>{3, (1ULL << 40U) + 5}));
    EXPECT_EQ(seen.bytes, (std::vector<std::byte>{std::byte{7}, std::byte{8}, std::byte{9}}));
    EXPECT_EQ(seen.gathered, (std::vector<std::string>{"zero", "one"}));
  }
  EXPECT_EQ(s.peer, "qpn=42");
  EXPECT_EQ(c.peer, "qpn=17");
  EXPECT_EQ(s.big, std::string(8U << 20U, 'b'));
  EXPECT_EQ(c.big, std::string(8U << 20U, 'a'));
}

TEST_F(TcpPairTest, ClientStartedBeforeServerRetriesUntilItListens) {
  ReservedPort reserved;
  const std::uint16_t port = reserved.port();
  auto client = std::async(std::launch::async, [&] { return TcpPair::connect("127.0.0.1", port, kPatient_s, kId); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // refused a few times meanwhile
  reserved.release();
  const auto server = TcpPair::listen(port, kPatient_s, kId);
  const auto connected_client = client.get();
  EXPECT_EQ(server->port(), port);
  EXPECT_EQ(connected_client->port(), port);
}

TEST_F(TcpPairTest, ServerTimesOutWhenNobodyConnects) {
  TcpListener listener(0);
  try {
    (void)listener.accept(kShort_s, kId);
    FAIL() << "no TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_EQ(std::string(e.what()), fmt::format("no peer connected to port {} within 0.3 s", listener.port()));
  }
}

TEST_F(TcpPairTest, ClientTimesOutWithoutAServer) {
  const ReservedPort reserved;
  try {
    (void)TcpPair::connect("127.0.0.1", reserved.port(), kShort_s, kId);
    FAIL() << "no TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("no server at 127.0.0.1:{} after 0.3 s (last attempt: Connection refused)", reserved.port()));
  }
}

TEST_F(TcpPairTest, UnknownHostIsAUsageError) {
  try {
    (void)TcpPair::connect("no-such-host.invalid", 18515, kShort_s, kId);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with("cannot resolve no-such-host.invalid: ")) << e.what();
  }
}

TEST_F(TcpPairTest, APortInUseIsAUsageError) {
  const TcpListener first(0);
  try {
    const TcpListener second(first.port());
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with(fmt::format("cannot listen on port {}: ", first.port()))) << e.what();
  }
}

TEST_F(TcpPairTest, IPv6LoopbackWorksWhereTheHostHasIt) {
  const SocketFd probe(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  if (probe.get() < 0 || ::bind(probe.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    GTEST_SKIP() << "no IPv6 loopback here";
  }
  TcpListener listener(0);
  auto server = std::async(std::launch::async, [&] { return listener.accept(kPatient_s, kId); });
  const auto client = TcpPair::connect("::1", listener.port(), kPatient_s, kId);
  EXPECT_EQ(client->peer_description(), fmt::format("[::1]:{}", listener.port()));
  EXPECT_TRUE(server.get()->peer_description().starts_with("[::1]:"));
}

// ---- fake peers: one end of a raw connection writes what a broken or foreign peer would ----

TEST_F(TcpPairTest, AServerThatIsNoCcbenchPeerIsAUsageError) {
  RawLink link = raw_link();
  send_raw(link.server, "HTTP/1.1 400 Bad Request\r\n\r\n");
  const std::string message = error_of<UsageError>(std::move(link.client), TcpRole::Client);
  EXPECT_TRUE(message.ends_with(R"( is not a ccbench peer (it sent "HTTP/1.1 400 Bad"))")) << message;
  EXPECT_TRUE(message.starts_with("127.0.0.1:")) << message;
}

TEST_F(TcpPairTest, AClientThatIsNoCcbenchPeerIsAUsageError) {
  RawLink link = raw_link();
  send_raw(link.client, "SSH-2.0\r\n");
  ::shutdown(link.client.get(), SHUT_WR);  // a short line, then nothing: still not a ccbench peer
  const std::string message = error_of<UsageError>(std::move(link.server), TcpRole::Server);
  EXPECT_TRUE(message.ends_with(R"( is not a ccbench peer (it sent "SSH-2.0\x0d\x0a"))")) << message;
}

TEST_F(TcpPairTest, AnotherProtocolVersionIsAUsageError) {
  RawLink link = raw_link();
  send_raw(link.server, hello(2, kId));
  const std::string message = error_of<UsageError>(std::move(link.client), TcpRole::Client);
  EXPECT_EQ(message, fmt::format("peer 127.0.0.1:{} speaks protocol version 2, this is version 1",
                                 local_port(link.server.get())));
}

TEST_F(TcpPairTest, ATruncatedFrameIsABackendError) {
  RawLink link = raw_link();
  send_raw(link.client, hello(1, kId).substr(0, 20));
  ::shutdown(link.client.get(), SHUT_WR);
  const std::string message = error_of<BackendError>(std::move(link.server), TcpRole::Server);
  EXPECT_TRUE(message.ends_with(" closed the connection during handshake")) << message;
}

TEST_F(TcpPairTest, AnOversizedFrameIsABackendError) {
  RawLink link = raw_link();
  send_raw(link.server, std::string(kTcpPairMagic) + le32(1) + le32(kTcpPairMaxFrameBytes + 1));
  const std::string message = error_of<BackendError>(std::move(link.client), TcpRole::Client);
  EXPECT_TRUE(
      message.ends_with(" announced a 67108865-byte hello frame during handshake, over the 67108864-byte limit"))
      << message;
}

TEST_F(TcpPairTest, ASilentPeerTimesOut) {
  RawLink link = raw_link();
  const std::string message = error_of<TimeoutError>(std::move(link.client), TcpRole::Client, kShort_s);
  EXPECT_EQ(message, fmt::format("no answer from peer 127.0.0.1:{} within 0.3 s during handshake",
                                 local_port(link.server.get())));
}

TEST_F(TcpPairTest, AnotherProgramIsAUsageErrorOnBothSides) {
  TcpListener listener(0);
  auto server = std::async(std::launch::async, [&] {
    try {
      (void)listener.accept(kPatient_s, "ib_write_lat_bench 0.1.0");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  });
  std::string client_message;
  try {
    (void)TcpPair::connect("127.0.0.1", listener.port(), kPatient_s, kId);
  } catch (const UsageError& e) {
    client_message = e.what();
  }
  EXPECT_TRUE(client_message.ends_with(R"( runs "ib_write_lat_bench 0.1.0", this is "ib_write_bw_bench 0.1.0": )"
                                       "start the same program and version on both"))
      << client_message;
  const std::string server_message = server.get();
  EXPECT_TRUE(server_message.find(R"(runs "ib_write_bw_bench 0.1.0", this is "ib_write_lat_bench 0.1.0")") !=
              std::string::npos)
      << server_message;
}

// ---- after the handshake ----

TEST_F(TcpPairTest, APeerThatNeverComesToTheBarrierTimesOut) {
  Pair pair = connected();  // the server stays connected, and idle
  auto& client = pair.client;
  client->set_timeout_s(kShort_s);
  try {
    client->barrier();
    FAIL() << "no TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("no answer from peer {} within 0.3 s during barrier", client->peer_description()));
  }
}

TEST_F(TcpPairTest, APeerThatClosesIsABackendError) {
  Pair pair = connected();
  auto& server = pair.server;
  auto& client = pair.client;
  server.reset();
  try {
    (void)client->exchange("qpn=1");
    FAIL() << "no BackendError";
  } catch (const BackendError& e) {
    EXPECT_TRUE(std::string(e.what()).find(" closed the connection during exchange") != std::string::npos) << e.what();
  }
}

TEST_F(TcpPairTest, SidesOutOfStepAreABackendError) {
  Pair pair = connected();
  auto& server = pair.server;
  auto& client = pair.client;
  client->set_timeout_s(kShort_s);
  auto on_client = std::async(std::launch::async, [&] {
    std::vector<std::uint64_t> v{1};
    client->sum_all(v);  // the server never answers it
  });
  try {
    server->barrier();
    FAIL() << "no BackendError";
  } catch (const BackendError& e) {
    EXPECT_TRUE(std::string(e.what()).ends_with(" sent a sum_all frame during barrier: the two sides are out of step"))
        << e.what();
  }
  EXPECT_THROW(on_client.get(), TimeoutError);
}

TEST_F(TcpPairTest, AFailureSentIsThrownOnThePeer) {
  Pair pair = connected("iters=100", "iters=200");
  auto& server = pair.server;
  auto& client = pair.client;
  ASSERT_NE(client->peer_settings(), "iters=200");
  client->send_failure(kExitUsage, "the server runs with iters=100, this side with iters=200");
  try {
    server->barrier();
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), fmt::format("peer {} gave up: the server runs with iters=100, this side with "
                                                 "iters=200",
                                                 server->peer_description()));
  }
}

TEST_F(TcpPairTest, BadArgumentsAreUsageErrors) {
  Pair pair = connected();
  auto& server = pair.server;
  std::vector<std::byte> bytes(1);
  EXPECT_THROW(server->broadcast(bytes, 2), UsageError);
  EXPECT_THROW(server->set_timeout_s(0), UsageError);
  EXPECT_THROW((void)TcpListener(0).accept(-1, kId), UsageError);
}

}  // namespace
}  // namespace ccbench

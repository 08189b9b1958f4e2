#include "ccbench/tcp_pair.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "ccbench/errors.hpp"

namespace ccbench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kHandshake = "handshake";
constexpr double kLongestWait_s = 1e9;      // "forever" (infinity) without overflowing the clock
constexpr double kFailureNoticeWait_s = 1;  // send_failure() gives up after this
constexpr std::size_t kMaxFailureMessage = 4096;
constexpr auto kRetryPeriod = std::chrono::milliseconds(100);

[[noreturn]] void throw_errno(std::string_view what) {
  throw BackendError(fmt::format("tcp pair: {}: {}", what, std::strerror(errno)));
}

double checked_timeout(double timeout_s) {
  if (!(timeout_s > 0)) {
    throw UsageError(fmt::format("a timeout of {} s is not positive", timeout_s));
  }
  return timeout_s;
}

class Deadline {
 public:
  explicit Deadline(double seconds)
      : m_seconds(seconds),
        m_at(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(std::min(seconds, kLongestWait_s)))) {}
  [[nodiscard]] double seconds() const { return m_seconds; }
  [[nodiscard]] bool passed() const { return Clock::now() >= m_at; }
  /// Rounded up, so that a poll() for this long does not wake just before the deadline.
  [[nodiscard]] int remaining_ms() const {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(m_at - Clock::now()).count();
    return static_cast<int>(std::clamp<std::int64_t>(left, 0, INT_MAX));
  }

 private:
  double m_seconds;
  Clock::time_point m_at;
};

/// Waits until `fd` is ready for `events`; false when the deadline passes first.
bool wait_ready(int fd, short events, const Deadline& deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, deadline.remaining_ms());
    if (rc > 0) {
      return true;
    }
    if (rc == 0 && deadline.passed()) {
      return false;
    }
    if (rc < 0 && errno != EINTR) {
      throw_errno("poll");
    }
  }
}

template <typename T>
void put_le(std::string& out, T v) {
  for (unsigned i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<char>((v >> (8U * i)) & 0xffU));
  }
}

template <typename T>
T get_le(std::string_view in, std::size_t at) {
  T v = 0;
  for (unsigned i = 0; i < sizeof(T); ++i) {
    v |= static_cast<T>(static_cast<unsigned char>(in[at + i])) << (8U * i);
  }
  return v;
}

std::string frame_name(std::uint32_t type) {
  constexpr std::array<std::string_view, 9> kNames{"",          "hello",      "barrier",  "max_all", "sum_all",
                                                   "broadcast", "all_gather", "exchange", "failure"};
  return type > 0 && type < kNames.size() ? std::string(kNames[type]) : fmt::format("unknown (type {})", type);
}

/// Bytes as text for a one-line message: printable ASCII as is, the rest (and \) as \xNN.
std::string printable(std::string_view bytes) {
  std::string text;
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      text.push_back(c);
    } else {
      text += fmt::format("\\x{:02x}", u);
    }
  }
  return text;
}

std::string host_port(std::string_view host, std::uint16_t port) {
  return host.find(':') == std::string_view::npos ? fmt::format("{}:{}", host, port)
                                                  : fmt::format("[{}]:{}", host, port);
}

std::uint16_t port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  }
  if (a.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  }
  return 0;
}

/// "192.0.2.1:18515", "[2001:db8::1]:18515"; an IPv4 peer of an IPv6 socket as IPv4.
std::string describe_endpoint(const sockaddr_storage& a, socklen_t len) {
  if (a.ss_family != AF_INET && a.ss_family != AF_INET6) {
    return "a local socket";
  }
  std::array<char, NI_MAXHOST> host{};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, host.data(), host.size(), nullptr, 0, NI_NUMERICHOST) !=
      0) {
    return fmt::format("an unprintable address, port {}", port_of(a));
  }
  std::string_view text(host.data());
  constexpr std::string_view kMappedV4 = "::ffff:";
  if (text.starts_with(kMappedV4) && text.find('.') != std::string_view::npos) {
    text.remove_prefix(kMappedV4.size());
  }
  return host_port(text, port_of(a));
}

std::optional<sockaddr_storage> address_of(int fd, bool peer, socklen_t& len) {
  sockaddr_storage a{};
  len = sizeof a;
  auto* as_sockaddr = reinterpret_cast<sockaddr*>(&a);
  if ((peer ? ::getpeername(fd, as_sockaddr, &len) : ::getsockname(fd, as_sockaddr, &len)) != 0) {
    return std::nullopt;
  }
  return a;
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throw_errno("fcntl");
  }
}

/// The connected side of a pair, for the send and receive loops and their messages.
struct Channel {
  int fd;
  std::string_view peer;
};

[[noreturn]] void throw_broken(const Channel& c, int error, std::string_view during) {
  if (error == EPIPE || error == ECONNRESET) {
    throw BackendError(
        fmt::format("peer {} closed the connection during {} ({})", c.peer, during, std::strerror(error)));
  }
  throw BackendError(fmt::format("connection to peer {} failed during {}: {}", c.peer, during, std::strerror(error)));
}

void send_all(const Channel& c, std::string_view bytes, const Deadline& deadline, std::string_view during) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(c.fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_ready(c.fd, POLLOUT, deadline)) {
        throw TimeoutError(
            fmt::format("peer {} took no data within {:g} s during {}", c.peer, deadline.seconds(), during));
      }
    } else if (errno != EINTR) {
      throw_broken(c, errno, during);
    }
  }
}

/// Fills `into` unless the peer closes the connection first; returns the bytes received.
std::size_t receive_upto(const Channel& c, std::span<char> into, const Deadline& deadline, std::string_view during) {
  std::size_t got = 0;
  while (got < into.size()) {
    const ssize_t n = ::recv(c.fd, into.data() + got, into.size() - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n == 0) {
      break;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_ready(c.fd, POLLIN, deadline)) {
        throw TimeoutError(
            fmt::format("no answer from peer {} within {:g} s during {}", c.peer, deadline.seconds(), during));
      }
    } else if (errno != EINTR) {
      throw_broken(c, errno, during);
    }
  }
  return got;
}

void receive_exact(const Channel& c, std::span<char> into, const Deadline& deadline, std::string_view during) {
  if (receive_upto(c, into, deadline, during) < into.size()) {
    throw BackendError(fmt::format("peer {} closed the connection during {}", c.peer, during));
  }
}

[[noreturn]] void throw_not_a_peer(const Channel& c, std::string_view sent) {
  throw UsageError(fmt::format("{} is not a ccbench peer (it sent \"{}\")", c.peer, printable(sent)));
}

[[noreturn]] void throw_peer_failure(const Channel& c, std::string_view payload) {
  if (payload.size() < 4) {
    throw BackendError(fmt::format("peer {} gave up", c.peer));
  }
  const auto code = get_le<std::uint32_t>(payload, 0);
  const std::string text = fmt::format("peer {} gave up: {}", c.peer, printable(payload.substr(4)));
  if (code == static_cast<std::uint32_t>(kExitUsage)) {
    throw UsageError(text);
  }
  if (code == static_cast<std::uint32_t>(kExitTimeout)) {
    throw TimeoutError(text);
  }
  throw BackendError(text);
}

void check_size(const Channel& c, std::string_view payload, std::size_t expected, std::string_view during) {
  if (payload.size() != expected) {
    throw BackendError(fmt::format("peer {} sent {} bytes during {}, this side has {}: the two sides are out of step",
                                   c.peer, payload.size(), during, expected));
  }
}

std::string encode_hello(std::string_view program_id, std::string_view settings) {
  std::string hello;
  put_le<std::uint32_t>(hello, kTcpPairProtocolVersion);
  for (const std::string_view s : {program_id, settings}) {
    put_le<std::uint32_t>(hello, static_cast<std::uint32_t>(s.size()));
    hello.append(s);
  }
  return hello;
}

/// The next length-prefixed string of `payload` from `at`, or nullopt when it runs past the end.
std::optional<std::string> take_string(std::string_view payload, std::size_t& at) {
  if (payload.size() - at < 4) {
    return std::nullopt;
  }
  const auto length = get_le<std::uint32_t>(payload, at);
  at += 4;
  if (payload.size() - at < length) {
    return std::nullopt;
  }
  std::string s(payload.substr(at, length));
  at += length;
  return s;
}

using AddressList = std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)>;

AddressList resolve(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    throw UsageError(
        fmt::format("cannot resolve {}: {}", host, rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc)));
  }
  return {found, &::freeaddrinfo};
}

/// A socket connected to itself: the kernel picked the server's port as the client's own while
/// nobody listened there (TCP simultaneous open).
bool connected_to_itself(int fd) {
  socklen_t local_len = 0;
  socklen_t peer_len = 0;
  const auto local = address_of(fd, false, local_len);
  const auto peer = address_of(fd, true, peer_len);
  return local && peer && local_len == peer_len && std::memcmp(&*local, &*peer, local_len) == 0;
}

/// One attempt on one address; an invalid SocketFd and `error` set when it fails.
SocketFd try_connect(const addrinfo& ai, const Deadline& deadline, int& error) {
  SocketFd fd(::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai.ai_protocol));
  if (fd.get() < 0) {
    error = errno;
    return {};
  }
  if (::connect(fd.get(), ai.ai_addr, ai.ai_addrlen) != 0) {
    if (errno != EINPROGRESS && errno != EINTR) {
      error = errno;
      return {};
    }
    if (!wait_ready(fd.get(), POLLOUT, deadline)) {
      error = ETIMEDOUT;
      return {};
    }
    int so_error = 0;
    socklen_t len = sizeof so_error;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len) != 0) {
      so_error = errno;
    }
    if (so_error != 0) {
      error = so_error;
      return {};
    }
  }
  if (connected_to_itself(fd.get())) {
    error = ECONNREFUSED;
    return {};
  }
  return fd;
}

/// A socket listening on `port` of every address of `family`; an invalid one and `error` set
/// when that fails.
SocketFd listening_socket(int family, std::uint16_t port, int& error) {
  SocketFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) {
    error = errno;
    return {};
  }
  const int one = 1;
  const int zero = 0;
  sockaddr_storage a{};
  socklen_t len = 0;
  if (family == AF_INET6) {
    auto& a6 = reinterpret_cast<sockaddr_in6&>(a);
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_any;
    a6.sin6_port = htons(port);
    len = sizeof a6;
    (void)::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 too
  } else {
    auto& a4 = reinterpret_cast<sockaddr_in&>(a);
    a4.sin_family = AF_INET;
    a4.sin_addr.s_addr = htonl(INADDR_ANY);
    a4.sin_port = htons(port);
    len = sizeof a4;
  }
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), len) != 0 || ::listen(fd.get(), 4) != 0) {
    error = errno;
    return {};
  }
  return fd;
}

}  // namespace

// ---- SocketFd ----

SocketFd::SocketFd(SocketFd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}

SocketFd& SocketFd::operator=(SocketFd&& other) noexcept {
  if (this != &other) {
    reset(std::exchange(other.m_fd, -1));
  }
  return *this;
}

SocketFd::~SocketFd() { reset(); }

void SocketFd::reset(int fd) noexcept {
  if (m_fd >= 0) {
    (void)::close(m_fd);
  }
  m_fd = fd;
}

// ---- TcpPair ----

std::unique_ptr<TcpPair> TcpPair::listen(std::uint16_t port, double timeout_s, std::string_view program_id,
                                         std::string_view settings) {
  TcpListener listener(port);
  return listener.accept(timeout_s, program_id, settings);
}

std::unique_ptr<TcpPair> TcpPair::connect(const std::string& host, std::uint16_t port, double timeout_s,
                                          std::string_view program_id, std::string_view settings) {
  checked_timeout(timeout_s);
  const AddressList addresses = resolve(host, port);
  const Deadline deadline(timeout_s);
  int last_error = ECONNREFUSED;
  for (;;) {
    for (const addrinfo* ai = addresses.get(); ai != nullptr; ai = ai->ai_next) {
      SocketFd fd = try_connect(*ai, deadline, last_error);
      if (fd.get() >= 0) {
        return std::make_unique<TcpPair>(std::move(fd), TcpRole::Client, timeout_s, program_id, settings);
      }
    }
    const int left_ms = deadline.remaining_ms();
    if (left_ms == 0) {
      throw TimeoutError(fmt::format("no server at {} after {:g} s (last attempt: {})", host_port(host, port),
                                     timeout_s, std::strerror(last_error)));
    }
    std::this_thread::sleep_for(std::min(kRetryPeriod, std::chrono::milliseconds(left_ms)));
  }
}

TcpPair::TcpPair(SocketFd fd, TcpRole role, double timeout_s, std::string_view program_id, std::string_view settings)
    : m_fd(std::move(fd)), m_role(role), m_timeout_s(checked_timeout(timeout_s)) {
  const int s = m_fd.get();
  set_nonblocking(s);
  const int one = 1;
  (void)::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // small frames go at once
  socklen_t len = 0;
  const auto peer = address_of(s, true, len);
  if (!peer) {
    throw_errno("getpeername");
  }
  m_peer = describe_endpoint(*peer, len);
  if (m_role == TcpRole::Client) {
    m_port = port_of(*peer);
  } else if (const auto local = address_of(s, false, len)) {
    m_port = port_of(*local);
  }
  handshake(program_id, settings);
}

int TcpPair::rank() const { return m_role == TcpRole::Server ? 0 : 1; }

void TcpPair::set_timeout_s(double timeout_s) { m_timeout_s = checked_timeout(timeout_s); }

void TcpPair::handshake(std::string_view program_id, std::string_view settings) {
  const std::string hello = encode_hello(program_id, settings);
  if (m_role == TcpRole::Client) {
    send_frame(TcpFrame::Hello, hello, kHandshake, m_timeout_s);
    check_hello(receive_frame(TcpFrame::Hello, kHandshake), program_id);
  } else {
    const std::string theirs = receive_frame(TcpFrame::Hello, kHandshake);
    // Answered before checking, so that the client can say what differs as well.
    send_frame(TcpFrame::Hello, hello, kHandshake, m_timeout_s);
    check_hello(theirs, program_id);
  }
}

void TcpPair::check_hello(std::string_view payload, std::string_view program_id) {
  if (payload.size() < 4) {
    throw BackendError(fmt::format("peer {} sent a malformed hello ({} bytes)", m_peer, payload.size()));
  }
  const auto version = get_le<std::uint32_t>(payload, 0);
  if (version != kTcpPairProtocolVersion) {
    throw UsageError(fmt::format("peer {} speaks protocol version {}, this is version {}", m_peer, version,
                                 kTcpPairProtocolVersion));
  }
  std::size_t at = 4;
  auto id = take_string(payload, at);
  auto settings = take_string(payload, at);
  if (!id || !settings || at != payload.size()) {
    throw BackendError(fmt::format("peer {} sent a malformed hello ({} bytes)", m_peer, payload.size()));
  }
  if (*id != program_id) {
    throw UsageError(fmt::format(R"(peer {} runs "{}", this is "{}": start the same program and version on both)",
                                 m_peer, printable(*id), printable(program_id)));
  }
  m_peer_program_id = std::move(*id);
  m_peer_settings = std::move(*settings);
}

void TcpPair::send_frame(TcpFrame type, std::string_view payload, std::string_view during, double timeout_s) {
  const Channel c{m_fd.get(), m_peer};
  if (payload.size() > kTcpPairMaxFrameBytes) {
    throw BackendError(fmt::format("cannot send {} bytes to peer {} during {}: over the {}-byte frame limit",
                                   payload.size(), m_peer, during, kTcpPairMaxFrameBytes));
  }
  std::string frame(kTcpPairMagic);
  put_le<std::uint32_t>(frame, static_cast<std::uint32_t>(type));
  put_le<std::uint32_t>(frame, static_cast<std::uint32_t>(payload.size()));
  frame.append(payload);
  send_all(c, frame, Deadline(timeout_s), during);
}

std::string TcpPair::receive_frame(TcpFrame expected, std::string_view during) {
  const Channel c{m_fd.get(), m_peer};
  const Deadline deadline(m_timeout_s);
  const bool first = expected == TcpFrame::Hello;
  std::string header(kTcpPairHeaderBytes, '\0');
  const std::size_t got = receive_upto(c, header, deadline, during);
  const std::string_view magic = std::string_view(header).substr(0, std::min(got, kTcpPairMagic.size()));
  if (first && !kTcpPairMagic.starts_with(magic)) {
    throw_not_a_peer(c, std::string_view(header).substr(0, got));
  }
  if (got < header.size()) {
    throw BackendError(fmt::format("peer {} closed the connection during {}", m_peer, during));
  }
  if (magic != kTcpPairMagic) {
    throw BackendError(
        fmt::format("peer {} sent a corrupt frame header during {} (\"{}\")", m_peer, during, printable(header)));
  }
  const auto type = get_le<std::uint32_t>(header, 8);
  const auto length = get_le<std::uint32_t>(header, 12);
  if (length > kTcpPairMaxFrameBytes) {
    throw BackendError(fmt::format("peer {} announced a {}-byte {} frame during {}, over the {}-byte limit", m_peer,
                                   length, frame_name(type), during, kTcpPairMaxFrameBytes));
  }
  if (type != static_cast<std::uint32_t>(expected) && type != static_cast<std::uint32_t>(TcpFrame::Failure)) {
    throw BackendError(fmt::format("peer {} sent a {} frame during {}: the two sides are out of step", m_peer,
                                   frame_name(type), during));
  }
  std::string payload(length, '\0');
  receive_exact(c, payload, deadline, during);
  if (type == static_cast<std::uint32_t>(TcpFrame::Failure)) {
    throw_peer_failure(c, payload);
  }
  return payload;
}

std::string TcpPair::exchange_frame(TcpFrame type, std::string_view mine, std::string_view during) {
  if (m_role == TcpRole::Client) {
    send_frame(type, mine, during, m_timeout_s);
    return receive_frame(type, during);
  }
  std::string theirs = receive_frame(type, during);
  send_frame(type, mine, during, m_timeout_s);
  return theirs;
}

void TcpPair::barrier() {
  const std::string theirs = exchange_frame(TcpFrame::Barrier, {}, "barrier");
  check_size(Channel{m_fd.get(), m_peer}, theirs, 0, "barrier");
}

void TcpPair::max_all(std::span<double> values) {
  std::string mine;
  mine.reserve(values.size() * 8);
  for (const double v : values) {
    put_le<std::uint64_t>(mine, std::bit_cast<std::uint64_t>(v));
  }
  const std::string theirs = exchange_frame(TcpFrame::MaxAll, mine, "max_all");
  check_size(Channel{m_fd.get(), m_peer}, theirs, mine.size(), "max_all");
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto peer = std::bit_cast<double>(get_le<std::uint64_t>(theirs, 8 * i));
    // In rank order on both sides, so that both get the same bits (NaN, -0.0 and 0.0).
    const double first = rank() == 0 ? values[i] : peer;
    const double second = rank() == 0 ? peer : values[i];
    values[i] = std::max(first, second);
  }
}

void TcpPair::sum_all(std::span<std::uint64_t> values) {
  std::string mine;
  mine.reserve(values.size() * 8);
  for (const std::uint64_t v : values) {
    put_le<std::uint64_t>(mine, v);
  }
  const std::string theirs = exchange_frame(TcpFrame::SumAll, mine, "sum_all");
  check_size(Channel{m_fd.get(), m_peer}, theirs, mine.size(), "sum_all");
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] += get_le<std::uint64_t>(theirs, 8 * i);
  }
}

void TcpPair::broadcast(std::span<std::byte> bytes, int root) {
  if (root != 0 && root != 1) {
    throw UsageError(fmt::format("broadcast root {} is not a rank of a pair (0 or 1)", root));
  }
  if (root == rank()) {
    send_frame(TcpFrame::Broadcast, {reinterpret_cast<const char*>(bytes.data()), bytes.size()}, "broadcast",
               m_timeout_s);
    return;
  }
  const std::string theirs = receive_frame(TcpFrame::Broadcast, "broadcast");
  check_size(Channel{m_fd.get(), m_peer}, theirs, bytes.size(), "broadcast");
  std::transform(theirs.begin(), theirs.end(), bytes.begin(), [](char c) { return static_cast<std::byte>(c); });
}

std::vector<std::string> TcpPair::all_gather(const std::string& mine) {
  std::string theirs = exchange_frame(TcpFrame::AllGather, mine, "all_gather");
  if (rank() == 0) {
    return {mine, std::move(theirs)};
  }
  return {std::move(theirs), mine};
}

std::string TcpPair::exchange(const std::string& mine) { return exchange_frame(TcpFrame::Exchange, mine, "exchange"); }

void TcpPair::send_failure(int exit_code, std::string_view message) noexcept {
  try {
    std::string payload;
    put_le<std::uint32_t>(payload, static_cast<std::uint32_t>(exit_code));
    payload.append(message.substr(0, kMaxFailureMessage));
    send_frame(TcpFrame::Failure, payload, "send_failure", std::min(m_timeout_s, kFailureNoticeWait_s));
  } catch (...) {  // NOLINT(bugprone-empty-catch): best effort; the caller is giving up already
  }
}

// ---- TcpListener ----

TcpListener::TcpListener(std::uint16_t port) {
  int error = 0;
  m_fd = listening_socket(AF_INET6, port, error);  // IPv4 too, as ::ffff:a.b.c.d
  if (m_fd.get() < 0 && error != EADDRINUSE && error != EACCES) {
    m_fd = listening_socket(AF_INET, port, error);  // no IPv6 here
  }
  if (m_fd.get() < 0) {
    const std::string text = fmt::format("cannot listen on port {}: {}", port, std::strerror(error));
    if (error == EADDRINUSE) {
      throw UsageError(text + " (is another server running there? pick another port)");
    }
    if (error == EACCES) {
      throw UsageError(text);
    }
    throw BackendError(text);
  }
  socklen_t len = 0;
  const auto local = address_of(m_fd.get(), false, len);
  if (!local) {
    throw_errno("getsockname");
  }
  m_port = port_of(*local);
}

std::unique_ptr<TcpPair> TcpListener::accept(double timeout_s, std::string_view program_id, std::string_view settings) {
  const Deadline deadline(checked_timeout(timeout_s));
  for (;;) {
    const int fd = ::accept4(m_fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      return std::make_unique<TcpPair>(SocketFd(fd), TcpRole::Server, timeout_s, program_id, settings);
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_ready(m_fd.get(), POLLIN, deadline)) {
        throw TimeoutError(fmt::format("no peer connected to port {} within {:g} s", m_port, timeout_s));
      }
    } else if (errno != EINTR && errno != ECONNABORTED) {
      throw_errno("accept");
    }
  }
}

}  // namespace ccbench

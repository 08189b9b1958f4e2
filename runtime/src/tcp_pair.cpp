#include "ccbench/tcp_pair.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "ccbench/errors.hpp"
#include "tcp_socket.hpp"

namespace ccbench {
namespace {

constexpr std::string_view kHandshake = "handshake";
constexpr double kFailureNoticeWait_s = 1;  // send_failure() gives up after this
constexpr std::size_t kMaxFailureMessage = 4096;

}  // namespace

using namespace tcp_detail;  // the socket layer (tcp_socket.hpp)

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
                                 m_peer, escaped_bytes(*id), escaped_bytes(program_id)));
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
        fmt::format("peer {} sent a corrupt frame header during {} (\"{}\")", m_peer, during, escaped_bytes(header)));
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

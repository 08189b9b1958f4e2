#include "tcp_socket.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <thread>

#include "ccbench/errors.hpp"

namespace ccbench::tcp_detail {

[[noreturn]] void throw_errno(std::string_view what) {
  throw BackendError(fmt::format("tcp pair: {}: {}", what, std::strerror(errno)));
}

double checked_timeout(double timeout_s) {
  if (!(timeout_s > 0)) {
    throw UsageError(fmt::format("a timeout of {} s is not positive", timeout_s));
  }
  return timeout_s;
}

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

std::string frame_name(std::uint32_t type) {
  constexpr std::array<std::string_view, 9> kNames{"",          "hello",      "barrier",  "max_all", "sum_all",
                                                   "broadcast", "all_gather", "exchange", "failure"};
  return type > 0 && type < kNames.size() ? std::string(kNames[type]) : fmt::format("unknown (type {})", type);
}

std::string escaped_bytes(std::string_view bytes) {
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
  throw UsageError(fmt::format("{} is not a ccbench peer (it sent \"{}\")", c.peer, escaped_bytes(sent)));
}

[[noreturn]] void throw_peer_failure(const Channel& c, std::string_view payload) {
  if (payload.size() < 4) {
    throw BackendError(fmt::format("peer {} gave up", c.peer));
  }
  const auto code = get_le<std::uint32_t>(payload, 0);
  const std::string text = fmt::format("peer {} gave up: {}", c.peer, escaped_bytes(payload.substr(4)));
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

bool connected_to_itself(int fd) {
  socklen_t local_len = 0;
  socklen_t peer_len = 0;
  const auto local = address_of(fd, false, local_len);
  const auto peer = address_of(fd, true, peer_len);
  return local && peer && local_len == peer_len && std::memcmp(&*local, &*peer, local_len) == 0;
}

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

}  // namespace ccbench::tcp_detail

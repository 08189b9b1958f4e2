#include "udp_socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "ccbench/errors.hpp"

namespace ccbench::udp_detail {
namespace {

constexpr std::size_t kMaxDatagram = 65507;
constexpr int kBindAttempts = 32;

}  // namespace

[[noreturn]] void throw_errno(const std::string& what) {
  throw BackendError(fmt::format("roll call: {}: {}", what, std::strerror(errno)));
}

int udp_socket() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw_errno("socket");
  }
  return fd;
}

sockaddr_in endpoint(std::uint32_t address, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = address;
  a.sin_port = htons(port);
  return a;
}

std::string ip_text(std::uint32_t address) {
  std::array<char, INET_ADDRSTRLEN> text{};
  ::inet_ntop(AF_INET, &address, text.data(), text.size());
  return text.data();
}

void close_all(std::vector<int>& fds) {
  for (const int fd : fds) {
    ::close(fd);
  }
  fds.clear();
}

std::vector<int> bind_all(const std::vector<std::uint32_t>& addresses, std::uint16_t& port) {
  for (int attempt = 0; attempt < kBindAttempts; ++attempt) {
    std::vector<int> fds;
    port = 0;
    for (const auto address : addresses) {
      fds.push_back(udp_socket());
      sockaddr_in a = endpoint(address, port);
      socklen_t len = sizeof a;
      if (::bind(fds.back(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {  // NOLINT(*-reinterpret-cast)
        const int error = errno;
        close_all(fds);
        if (error == EADDRINUSE && port != 0) {
          break;
        }
        errno = error;
        throw_errno(fmt::format("bind {}", ip_text(address)));
      }
      if (port == 0 && ::getsockname(fds.back(), reinterpret_cast<sockaddr*>(&a), &len) == 0) {  // NOLINT
        port = ntohs(a.sin_port);
      }
    }
    if (!fds.empty()) {
      return fds;
    }
  }
  throw BackendError(fmt::format("roll call: no port free on every one of {} addresses", addresses.size()));
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

void send_to(int fd, const std::string& text, const sockaddr_in& to) {
  (void)::sendto(fd, text.data(), text.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&to),  // NOLINT
                 sizeof to);
}

std::optional<std::string> receive(int fd, int ms, sockaddr_in* from) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, ms) <= 0) {
    return std::nullopt;
  }
  std::string buffer(kMaxDatagram, '\0');
  sockaddr_in sender{};
  socklen_t len = sizeof sender;
  const ssize_t n = ::recvfrom(fd, buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&sender),  // NOLINT
                               &len);
  if (n < 0) {
    return std::nullopt;
  }
  buffer.resize(static_cast<std::size_t>(n));
  if (from != nullptr) {
    *from = sender;
  }
  return buffer;
}

}  // namespace ccbench::udp_detail

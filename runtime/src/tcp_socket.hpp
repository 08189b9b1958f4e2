#pragma once
// The socket layer under TcpPair and TcpListener (tcp_pair.cpp): deadlines, non-blocking sends and
// receives that name the peer and the step in their errors, addresses, connecting and listening.
// Private to the runtime library.
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ccbench/tcp_pair.hpp"

namespace ccbench::tcp_detail {

using Clock = std::chrono::steady_clock;

constexpr double kLongestWait_s = 1e9;  // "forever" (infinity) without overflowing the clock
constexpr auto kRetryPeriod = std::chrono::milliseconds(100);

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

/// The connected side of a pair, for the send and receive loops and their messages.
struct Channel {
  int fd;
  std::string_view peer;
};

using AddressList = std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)>;

[[noreturn]] void throw_errno(std::string_view what);

double checked_timeout(double timeout_s);

/// Waits until `fd` is ready for `events`; false when the deadline passes first.
bool wait_ready(int fd, short events, const Deadline& deadline);

std::string frame_name(std::uint32_t type);

/// Bytes as text for a one-line message: printable ASCII as is, the rest (and \) as \xNN.
std::string escaped_bytes(std::string_view bytes);

std::string host_port(std::string_view host, std::uint16_t port);

std::uint16_t port_of(const sockaddr_storage& a);

/// "192.0.2.1:18515", "[2001:db8::1]:18515"; an IPv4 peer of an IPv6 socket as IPv4.
std::string describe_endpoint(const sockaddr_storage& a, socklen_t len);

std::optional<sockaddr_storage> address_of(int fd, bool peer, socklen_t& len);

void set_nonblocking(int fd);

[[noreturn]] void throw_broken(const Channel& c, int error, std::string_view during);

void send_all(const Channel& c, std::string_view bytes, const Deadline& deadline, std::string_view during);

/// Fills `into` unless the peer closes the connection first; returns the bytes received.
std::size_t receive_upto(const Channel& c, std::span<char> into, const Deadline& deadline, std::string_view during);

void receive_exact(const Channel& c, std::span<char> into, const Deadline& deadline, std::string_view during);

[[noreturn]] void throw_not_a_peer(const Channel& c, std::string_view sent);

[[noreturn]] void throw_peer_failure(const Channel& c, std::string_view payload);

void check_size(const Channel& c, std::string_view payload, std::size_t expected, std::string_view during);

std::string encode_hello(std::string_view program_id, std::string_view settings);

/// The next length-prefixed string of `payload` from `at`, or nullopt when it runs past the end.
std::optional<std::string> take_string(std::string_view payload, std::size_t& at);

AddressList resolve(const std::string& host, std::uint16_t port);

/// A socket connected to itself: the kernel picked the server's port as the client's own while
/// nobody listened there (TCP simultaneous open).
bool connected_to_itself(int fd);

/// One attempt on one address; an invalid SocketFd and `error` set when it fails.
SocketFd try_connect(const addrinfo& ai, const Deadline& deadline, int& error);

/// A socket listening on `port` of every address of `family`; an invalid one and `error` set
/// when that fails.
SocketFd listening_socket(int family, std::uint16_t port, int& error);

}  // namespace ccbench::tcp_detail

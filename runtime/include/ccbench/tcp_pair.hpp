#pragma once
// A Group of two processes joined by one TCP connection: the standalone mode of the pairwise
// benches (--server on one host, --connect HOST on the other), where there is no MPI, and the
// channel for their set-up (queue pair numbers, keys and addresses: exchange()).
//
// Wire protocol, version 1. Every integer is little-endian.
//   frame   = header payload
//   header  = magic "CCBPAIR\0" (8 bytes) | type (u32, TcpFrame) | payload length (u32)
//   hello   = version (u32) | program id (u32 length, bytes) | settings (u32 length, bytes)
//   failure = exit code (u32) | message (the rest)
// The hello frame keeps this layout in every version, so that two versions can tell which one
// the other speaks. The client speaks first in every exchange (the hello included) and the
// server answers, so two large payloads never wait on each other's socket buffers.
//
// Every send and receive waits at most timeout_s() (poll()); a silent or stopped peer gives a
// TimeoutError that names it and what was being done. Not thread-safe: one caller at a time.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/group.hpp"

namespace ccbench {

inline constexpr std::string_view kTcpPairMagic{"CCBPAIR\0", 8};
inline constexpr std::uint32_t kTcpPairProtocolVersion = 1;
inline constexpr std::size_t kTcpPairHeaderBytes = 16;
/// The largest payload either side sends or accepts.
inline constexpr std::uint32_t kTcpPairMaxFrameBytes = 64U << 20U;

/// The type field of a frame header.
enum class TcpFrame : std::uint32_t {
  Hello = 1,
  Barrier = 2,
  MaxAll = 3,
  SumAll = 4,
  Broadcast = 5,
  AllGather = 6,
  Exchange = 7,
  Failure = 8,  // the peer gives up; see TcpPair::send_failure()
};

enum class TcpRole {
  Server,  // rank 0
  Client,  // rank 1
};

/// Owns a socket descriptor and closes it.
class SocketFd {
 public:
  SocketFd() = default;
  explicit SocketFd(int fd) noexcept : m_fd(fd) {}
  SocketFd(SocketFd&& other) noexcept;
  SocketFd& operator=(SocketFd&& other) noexcept;
  SocketFd(const SocketFd&) = delete;
  SocketFd& operator=(const SocketFd&) = delete;
  ~SocketFd();

  [[nodiscard]] int get() const noexcept { return m_fd; }
  /// Closes the descriptor held (if any) and holds `fd` instead.
  void reset(int fd = -1) noexcept;

 private:
  int m_fd = -1;
};

class TcpPair final : public Group {
 public:
  /// Listens on `port` (every address; 0: any free port), accepts one peer within `timeout_s`
  /// and handshakes. Throws UsageError when the port cannot be bound, TimeoutError when no peer
  /// comes, and what the handshake throws.
  static std::unique_ptr<TcpPair> listen(std::uint16_t port, double timeout_s, std::string_view program_id,
                                         std::string_view settings = {});
  /// Resolves `host`, connects to it (again every ~100 ms while refused: the server may start
  /// later) and handshakes. Throws UsageError "cannot resolve HOST: ..." and TimeoutError "no
  /// server at HOST:PORT after N s". Name resolution itself is not bound by `timeout_s`.
  static std::unique_ptr<TcpPair> connect(const std::string& host, std::uint16_t port, double timeout_s,
                                          std::string_view program_id, std::string_view settings = {});

  /// Takes a connected stream socket and handshakes over it: both sides send a hello with the
  /// protocol version, `program_id` (e.g. "ib_write_bw_bench 0.1.0") and `settings` (flags the
  /// two sides must agree on; compare peer_settings()). Throws UsageError when the peer is not
  /// a ccbench peer, speaks another protocol version or runs another program id.
  TcpPair(SocketFd fd, TcpRole role, double timeout_s, std::string_view program_id, std::string_view settings);

  [[nodiscard]] int rank() const override;
  [[nodiscard]] int size() const override { return 2; }
  void barrier() override;
  void max_all(std::span<double> values) override;
  void sum_all(std::span<std::uint64_t> values) override;
  void broadcast(std::span<std::byte> bytes, int root) override;
  std::vector<std::string> all_gather(const std::string& mine) override;
  /// Sends `mine`, returns the peer's.
  std::string exchange(const std::string& mine);

  /// Best effort, never throws: tells the peer why this side gives up, so that its next receive
  /// throws "peer HOST:PORT gave up: MESSAGE" as the error `exit_code` stands for (kExitUsage:
  /// UsageError, kExitTimeout: TimeoutError, otherwise BackendError).
  void send_failure(int exit_code, std::string_view message) noexcept;

  [[nodiscard]] const std::string& peer_program_id() const { return m_peer_program_id; }
  [[nodiscard]] const std::string& peer_settings() const { return m_peer_settings; }
  /// The peer's numeric address and port: "192.0.2.1:18515", "[2001:db8::1]:18515".
  [[nodiscard]] const std::string& peer_description() const { return m_peer; }
  /// The server's port (on the server: the one it listens on).
  [[nodiscard]] std::uint16_t port() const { return m_port; }
  [[nodiscard]] double timeout_s() const { return m_timeout_s; }
  /// The longest any later send or receive waits (e.g. the bench's --timeout).
  void set_timeout_s(double timeout_s);

 private:
  std::string exchange_frame(TcpFrame type, std::string_view mine, std::string_view during);
  void send_frame(TcpFrame type, std::string_view payload, std::string_view during, double timeout_s);
  std::string receive_frame(TcpFrame expected, std::string_view during);
  void handshake(std::string_view program_id, std::string_view settings);
  void check_hello(std::string_view payload, std::string_view program_id);

  SocketFd m_fd;
  TcpRole m_role;
  double m_timeout_s;
  std::string m_peer;
  std::uint16_t m_port = 0;
  std::string m_peer_program_id;
  std::string m_peer_settings;
};

/// A listening socket, for a server that needs its port before a peer comes (port 0 picks a
/// free one, as the tests do).
class TcpListener {
 public:
  /// Binds `port` on every address (IPv6 and IPv4 where the host has IPv6, else IPv4) with
  /// SO_REUSEADDR and listens. Throws UsageError when the port cannot be bound.
  explicit TcpListener(std::uint16_t port);

  [[nodiscard]] std::uint16_t port() const { return m_port; }
  /// Waits up to `timeout_s` for one peer (TimeoutError naming the port and the wait), then
  /// handshakes with it; later operations wait up to `timeout_s` too.
  std::unique_ptr<TcpPair> accept(double timeout_s, std::string_view program_id, std::string_view settings = {});

 private:
  SocketFd m_fd;
  std::uint16_t m_port = 0;
};

}  // namespace ccbench

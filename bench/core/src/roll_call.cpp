#include "ccbench/roll_call.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include "ccbench/errors.hpp"

namespace ccbench {
namespace {

// Datagrams are text: "<magic> <verb> <nonce>[ <rest>]"; anything else is ignored.
constexpr std::string_view kMagic = "CCBRC1";
constexpr std::size_t kMaxDatagram = 65507;
constexpr std::size_t kMaxPayload = 60000;
constexpr std::uint32_t kLoopback = 0x7f000001;

using Clock = std::chrono::steady_clock;

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

/// Binds `fd` to an ephemeral port on every address; closes it when that fails.
std::uint16_t bind_any(int fd) {
  sockaddr_in a = endpoint(htonl(INADDR_ANY), 0);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||  // NOLINT(*-reinterpret-cast)
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {     // NOLINT(*-reinterpret-cast)
    const int error = errno;
    ::close(fd);
    errno = error;
    throw_errno("bind");
  }
  return ntohs(a.sin_port);
}

void send_to(int fd, const std::string& text, const sockaddr_in& to) {
  // Best effort: a lost datagram is sent again by the caller's next round.
  (void)::sendto(fd, text.data(), text.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&to),  // NOLINT
                 sizeof to);
}

/// Waits up to `ms` for a datagram; nullopt on timeout.
std::optional<std::string> receive(int fd, int ms, sockaddr_in* from = nullptr) {
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

/// The IPv4 addresses of the interfaces that are up, loopback last (and only when alone).
std::vector<std::uint32_t> local_addresses() {
  std::vector<std::uint32_t> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_UP) == 0U ||
          (i->ifa_flags & IFF_LOOPBACK) != 0U) {
        continue;
      }
      out.push_back(reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);  // NOLINT
    }
    ::freeifaddrs(list);
  }
  if (out.empty()) {
    out.push_back(htonl(kLoopback));
  }
  return out;
}

std::string ip_text(std::uint32_t address) {
  std::array<char, INET_ADDRSTRLEN> text{};
  ::inet_ntop(AF_INET, &address, text.data(), text.size());
  return text.data();
}

std::int64_t monotonic_ns() noexcept {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// When a SIGCONT last ended a stop of this process. A stopped rank cannot answer; once continued
// (Open MPI sends SIGCONT before it kills a job) it answers, and says it had been stopped.
std::atomic<std::int64_t> g_resumed_ns{0};

void on_sigcont(int /*signal*/) { g_resumed_ns.store(monotonic_ns(), std::memory_order_relaxed); }

void watch_for_resume() {
  static const bool installed = [] {
    struct sigaction old {};
    if (::sigaction(SIGCONT, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) {
      return false;  // someone else handles it: leave theirs alone
    }
    struct sigaction sa {};
    sa.sa_handler = on_sigcont;
    sa.sa_flags = SA_RESTART;
    ::sigemptyset(&sa.sa_mask);
    return ::sigaction(SIGCONT, &sa, nullptr) == 0;
  }();
  (void)installed;
}

std::uint64_t new_nonce() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine();
}

struct Datagram {
  std::string verb;
  std::uint64_t nonce = 0;
  std::string rest;
};

std::optional<Datagram> parse(const std::string& text) {
  const std::size_t line_end = text.find('\n');
  std::istringstream head(text.substr(0, line_end));
  std::string magic;
  Datagram d;
  if (!(head >> magic >> d.verb >> d.nonce) || magic != kMagic) {
    return std::nullopt;
  }
  if (d.verb == "NOTE") {
    d.rest = line_end == std::string::npos ? std::string{} : text.substr(line_end + 1);
  } else {
    std::getline(head >> std::ws, d.rest);
  }
  return d;
}

}  // namespace

RollCall::RollCall(int rank, std::string host)
    : m_rank(rank),
      m_host(std::move(host)),
      m_socket(udp_socket()),
      m_port(bind_any(m_socket)),
      m_local_addresses(local_addresses()) {
  watch_for_resume();
  if (::pipe2(m_stop_pipe.data(), O_CLOEXEC) != 0) {
    ::close(m_socket);
    throw_errno("pipe");
  }
  m_thread = std::thread([this] { answer_loop(); });
}

RollCall::~RollCall() {
  const char stop = 's';
  (void)::write(m_stop_pipe[1], &stop, 1);
  m_thread.join();
  ::close(m_stop_pipe[0]);
  ::close(m_stop_pipe[1]);
  ::close(m_socket);
}

std::string RollCall::card() const {
  std::string ips;
  for (const auto a : m_local_addresses) {
    ips += (ips.empty() ? "" : ",") + ip_text(a);
  }
  return fmt::format("{} {} {} {}", m_rank, m_host, m_port, ips);
}

void RollCall::set_peers(const std::vector<std::string>& cards) {
  std::vector<Peer> peers;
  for (std::size_t r = 0; r < cards.size(); ++r) {
    std::istringstream in(cards[r]);
    Peer p;
    int port = 0;
    std::string ips;
    if (!(in >> p.rank >> p.host >> port >> ips) || p.rank != static_cast<int>(r) || port <= 0 || port > 65535) {
      throw BackendError(fmt::format("roll call: rank {} sent a malformed address card {:?}", r, cards[r]));
    }
    p.port = static_cast<std::uint16_t>(port);
    std::istringstream list(ips);
    for (std::string ip; std::getline(list, ip, ',');) {
      in_addr a{};
      if (::inet_pton(AF_INET, ip.c_str(), &a) != 1) {
        throw BackendError(fmt::format("roll call: rank {} sent a bad address {:?}", r, ip));
      }
      p.addresses.push_back(a.s_addr);
    }
    peers.push_back(std::move(p));
  }
  m_peers = std::move(peers);
}

double RollCall::resumed_s_ago() {
  const std::int64_t at = g_resumed_ns.load(std::memory_order_relaxed);
  return at == 0 ? -1.0 : static_cast<double>(monotonic_ns() - at) / 1e9;
}

std::string RollCall::host_of(int rank) const {
  return rank >= 0 && rank < static_cast<int>(m_peers.size()) ? m_peers[static_cast<std::size_t>(rank)].host
                                                              : std::string{};
}

void RollCall::set_activity(std::string activity) {
  const std::lock_guard lock(m_mutex);
  m_activity = std::move(activity);
}

void RollCall::on_notice(NoticeHandler handler) {
  const std::lock_guard lock(m_mutex);
  m_handler = std::move(handler);
}

// A peer on this host is reached over loopback first (namespaced hosts have their own).
std::vector<std::uint32_t> RollCall::addresses_of(const Peer& peer) const {
  std::vector<std::uint32_t> out;
  if (peer.host == m_host) {
    out.push_back(htonl(kLoopback));
  }
  out.insert(out.end(), peer.addresses.begin(), peer.addresses.end());
  return out;
}

void RollCall::answer_loop() {
  std::array<pollfd, 2> fds{pollfd{m_socket, POLLIN, 0}, pollfd{m_stop_pipe[0], POLLIN, 0}};
  while (true) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      return;
    }
    sockaddr_in from{};
    const auto text = receive(m_socket, 0, &from);
    const auto d = text ? parse(*text) : std::nullopt;
    if (!d) {
      continue;
    }
    if (d->verb == "PING") {
      std::string activity;
      {
        const std::lock_guard lock(m_mutex);
        activity = m_activity;
      }
      send_to(m_socket, fmt::format("{} HERE {} {} {:.3f} {}", kMagic, d->nonce, m_rank, resumed_s_ago(), activity),
              from);
    } else if (d->verb == "NOTE") {
      NoticeHandler handler;
      {
        const std::lock_guard lock(m_mutex);
        handler = m_handler;
      }
      if (handler) {
        handler(d->rest);
      }
      send_to(m_socket, fmt::format("{} DONE {}", kMagic, d->nonce), from);
    }
  }
}

RollCall::Outcome RollCall::call(double wait_s, double recent_s) const {
  std::map<int, Answer> answers;
  {
    const std::lock_guard lock(m_mutex);
    answers[m_rank] = {m_rank, m_activity, resumed_s_ago()};
  }
  const int fd = udp_socket();
  const std::uint64_t nonce = new_nonce();
  const std::string ping = fmt::format("{} PING {}", kMagic, nonce);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s));
  auto next_round = Clock::now();
  while (answers.size() < m_peers.size() && Clock::now() < deadline) {
    if (Clock::now() >= next_round) {
      for (const auto& p : m_peers) {
        if (!answers.contains(p.rank)) {
          for (const auto a : addresses_of(p)) {
            send_to(fd, ping, endpoint(a, p.port));
          }
        }
      }
      next_round = Clock::now() + std::chrono::milliseconds(250);
    }
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::min(next_round, deadline) - Clock::now());
    const auto text = receive(fd, static_cast<int>(std::max<std::int64_t>(ms.count(), 1)));
    const auto d = text ? parse(*text) : std::nullopt;
    if (!d || d->verb != "HERE" || d->nonce != nonce) {
      continue;
    }
    std::istringstream rest(d->rest);
    Answer a;
    if (rest >> a.rank >> a.resumed_s_ago && a.rank >= 0 && a.rank < static_cast<int>(m_peers.size())) {
      std::getline(rest >> std::ws, a.activity);
      answers.emplace(a.rank, a);
    }
  }
  ::close(fd);
  Outcome out;
  for (const auto& p : m_peers) {
    const auto a = answers.find(p.rank);
    if (a == answers.end()) {
      out.silent.push_back(p.rank);
      continue;
    }
    out.answered.push_back(a->second);
    if (a->second.resumed_s_ago >= 0 && a->second.resumed_s_ago < recent_s) {
      out.silent.push_back(p.rank);
      out.resumed.push_back(p.rank);
    }
  }
  return out;
}

bool RollCall::notify(int rank, const std::string& payload, double wait_s) const {
  if (rank < 0 || rank >= static_cast<int>(m_peers.size()) || payload.size() > kMaxPayload) {
    return false;
  }
  const Peer& peer = m_peers[static_cast<std::size_t>(rank)];
  const int fd = udp_socket();
  const std::uint64_t nonce = new_nonce();
  const std::string note = fmt::format("{} NOTE {}\n{}", kMagic, nonce, payload);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s));
  bool done = false;
  while (!done && Clock::now() < deadline) {
    for (const auto a : addresses_of(peer)) {
      send_to(fd, note, endpoint(a, peer.port));
    }
    // The handler may write a file: give it time before sending again (it is idempotent).
    const Clock::time_point round_end =
        std::min<Clock::time_point>(deadline, Clock::now() + std::chrono::milliseconds(500));
    while (!done && Clock::now() < round_end) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(round_end - Clock::now());
      const auto text = receive(fd, static_cast<int>(std::max<std::int64_t>(ms.count(), 1)));
      const auto d = text ? parse(*text) : std::nullopt;
      done = d && d->verb == "DONE" && d->nonce == nonce;
    }
  }
  ::close(fd);
  return done;
}

std::string RollCall::describe(const std::vector<int>& ranks) const {
  // Consecutive ranks on one host share the host's name: "ranks 2, 3 (node1)".
  std::vector<std::pair<std::string, std::vector<int>>> runs;
  for (const int r : ranks) {
    const std::string host = host_of(r);
    if (runs.empty() || runs.back().first != host) {
      runs.emplace_back(host, std::vector<int>{});
    }
    runs.back().second.push_back(r);
  }
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::string numbers;
    for (const int r : runs[i].second) {
      numbers += (numbers.empty() ? "" : ", ") + std::to_string(r);
    }
    text += fmt::format("{}{}{}", i == 0 ? "" : ", ", numbers,
                        runs[i].first.empty() ? std::string{} : fmt::format(" ({})", runs[i].first));
  }
  return text;
}

}  // namespace ccbench

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
#include <set>
#include <span>
#include <sstream>

#include "ccbench/errors.hpp"
#include "udp_socket.hpp"

namespace ccbench {
namespace {

constexpr std::size_t kMaxPayload = 60000;
constexpr std::uint32_t kLoopback = 0x7f000001;

}  // namespace

using namespace udp_detail;  // the UDP layer (udp_socket.hpp)

std::vector<std::uint32_t> RollCall::interface_addresses() {
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
  return out;
}

namespace {

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

}  // namespace

RollCall::RollCall(int rank, std::string host) : m_rank(rank), m_host(std::move(host)) {
  watch_for_resume();
  if (::pipe2(m_stop_pipe.data(), O_CLOEXEC) != 0) {
    throw_errno("pipe");
  }
}

RollCall::~RollCall() {
  if (m_thread.joinable()) {
    const char stop = 's';
    (void)::write(m_stop_pipe[1], &stop, 1);
    m_thread.join();
  }
  ::close(m_stop_pipe[0]);
  ::close(m_stop_pipe[1]);
  close_all(m_sockets);
}

void RollCall::join(Group& world) {
  RollKey key{};
  if (world.rank() == 0) {
    key = random_roll_key();
  }
  world.broadcast(std::as_writable_bytes(std::span(key)), 0);
  listen(key, addresses_to_bind(world.rank(), world.all_gather(m_host), interface_addresses()));
  set_peers(world.all_gather(card()));
}

std::vector<std::uint32_t> RollCall::addresses_to_bind(int rank, const std::vector<std::string>& hosts,
                                                       const std::vector<std::uint32_t>& interfaces) {
  bool shared = false;
  bool elsewhere = false;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    if (static_cast<int>(r) != rank) {
      (hosts[r] == hosts.at(static_cast<std::size_t>(rank)) ? shared : elsewhere) = true;
    }
  }
  std::vector<std::uint32_t> out;
  if (shared || !elsewhere || interfaces.empty()) {
    out.push_back(htonl(kLoopback));
  }
  if (elsewhere) {
    out.insert(out.end(), interfaces.begin(), interfaces.end());
  }
  return out;
}

void RollCall::listen(const RollKey& key, const std::vector<std::uint32_t>& addresses) {
  if (m_thread.joinable() || addresses.empty()) {
    throw BackendError("roll call: listen() needs addresses, once");
  }
  std::uint16_t port = 0;
  std::vector<int> sockets = bind_all(addresses, port);
  {
    const std::lock_guard lock(m_mutex);
    m_key = key;
    m_sockets = std::move(sockets);
    m_port = port;
    m_bound = addresses;
  }
  m_thread = std::thread([this] { answer_loop(); });
}

std::string RollCall::card() const {
  const std::lock_guard lock(m_mutex);
  std::string ips;
  for (const auto a : m_bound) {
    ips += (ips.empty() ? "" : ",") + ip_text(a);
  }
  return fmt::format("{} {} {} {}", m_rank, m_host, m_port, ips.empty() ? "-" : ips);
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
  const std::lock_guard lock(m_mutex);
  m_peers = std::move(peers);
}

bool RollCall::has_peers() const {
  const std::lock_guard lock(m_mutex);
  return !m_peers.empty();
}

double RollCall::resumed_s_ago() {
  const std::int64_t at = g_resumed_ns.load(std::memory_order_relaxed);
  return at == 0 ? -1.0 : static_cast<double>(monotonic_ns() - at) / 1e9;
}

std::string RollCall::host_of(int rank) const {
  const std::lock_guard lock(m_mutex);
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

RollCall::Ignored RollCall::ignored() const { return {m_rejected.load(), m_replayed.load()}; }

std::pair<RollKey, std::vector<RollCall::Peer>> RollCall::snapshot() const {
  const std::lock_guard lock(m_mutex);
  return {m_key, m_peers};
}

// A peer on this host is reached over loopback first (namespaced hosts have their own).
std::vector<std::uint32_t> RollCall::addresses_of(const Peer& peer) const {
  std::vector<std::uint32_t> out;
  if (peer.host == m_host) {
    out.push_back(htonl(kLoopback));
  }
  for (const auto a : peer.addresses) {
    if (a != htonl(kLoopback)) {
      out.push_back(a);
    }
  }
  return out;
}

std::string RollCall::answer(const RollMessage& request) {
  std::string body = std::to_string(request.seq);
  if (request.verb == RollVerb::Ping) {
    std::string activity;
    {
      const std::lock_guard lock(m_mutex);
      activity = m_activity;
    }
    body += fmt::format(" {:.3f} {}", resumed_s_ago(), activity);
  } else {
    NoticeHandler handler;
    {
      const std::lock_guard lock(m_mutex);
      handler = m_handler;
    }
    if (handler) {
      handler(request.body);
    }
  }
  const RollVerb verb = request.verb == RollVerb::Ping ? RollVerb::Here : RollVerb::Done;
  return seal(m_key, {verb, m_rank, next_seq(), body});
}

void RollCall::answer_loop() {
  std::vector<pollfd> fds{pollfd{m_stop_pipe[0], POLLIN, 0}};
  for (const int fd : m_sockets) {
    fds.push_back(pollfd{fd, POLLIN, 0});
  }
  while (true) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    if ((fds[0].revents & POLLIN) != 0) {
      return;
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      sockaddr_in from{};
      const auto text = (fds[i].revents & POLLIN) != 0 ? receive(fds[i].fd, 0, &from) : std::nullopt;
      if (!text) {
        continue;
      }
      const auto m = unseal(m_key, *text);
      if (!m || (m->verb != RollVerb::Ping && m->verb != RollVerb::Note)) {
        ++m_rejected;
      } else if (!m_replay.fresh(m->sender, m->seq)) {
        ++m_replayed;
      } else {
        send_to(fds[i].fd, answer(*m), from);
      }
    }
  }
}

std::optional<RollMessage> RollCall::await_answer(int fd, const RollKey& key, RollVerb verb,
                                                  const std::set<std::uint64_t>& asked, Clock::time_point until) const {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  const auto text = receive(fd, static_cast<int>(std::max<std::int64_t>(ms.count(), 1)));
  if (!text) {
    return std::nullopt;
  }
  auto m = unseal(key, *text);
  std::istringstream body(m ? m->body : std::string{});
  std::uint64_t re = 0;
  if (!m || m->verb != verb || !(body >> re) || !asked.contains(re)) {
    ++m_rejected;
    return std::nullopt;
  }
  std::getline(body >> std::ws, m->body);  // what follows the SEQ answered
  return m;
}

RollCall::Outcome RollCall::call(double wait_s, double recent_s) const {
  const auto [key, peers] = snapshot();
  std::map<int, Answer> answers;
  {
    const std::lock_guard lock(m_mutex);
    answers[m_rank] = {m_rank, m_activity, resumed_s_ago()};
  }
  const int fd = udp_socket();
  std::set<std::uint64_t> asked;
  const Clock::time_point deadline = Clock::now() + seconds(wait_s);
  auto next_round = Clock::now();
  while (answers.size() < peers.size() && Clock::now() < deadline) {
    if (Clock::now() >= next_round) {
      for (const auto& p : peers) {
        if (!answers.contains(p.rank)) {
          const std::uint64_t seq = next_seq();
          asked.insert(seq);
          const std::string ping = seal(key, {RollVerb::Ping, m_rank, seq, {}});
          for (const auto a : addresses_of(p)) {
            send_to(fd, ping, endpoint(a, p.port));
          }
        }
      }
      next_round = Clock::now() + std::chrono::milliseconds(250);
    }
    const auto m = await_answer(fd, key, RollVerb::Here, asked, std::min(next_round, deadline));
    std::istringstream rest(m ? m->body : std::string{});
    Answer a{m ? m->sender : -1, {}, -1};
    if (m && rest >> a.resumed_s_ago && a.rank < static_cast<int>(peers.size())) {
      std::getline(rest >> std::ws, a.activity);
      answers.emplace(a.rank, a);
    }
  }
  ::close(fd);
  return outcome(peers, answers, recent_s);
}

RollCall::Outcome RollCall::outcome(const std::vector<Peer>& peers, const std::map<int, Answer>& answers,
                                    double recent_s) {
  Outcome out;
  for (const auto& p : peers) {
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
  const auto [key, peers] = snapshot();
  if (rank < 0 || rank >= static_cast<int>(peers.size()) || payload.size() > kMaxPayload) {
    return false;
  }
  const Peer& peer = peers[static_cast<std::size_t>(rank)];
  const int fd = udp_socket();
  std::set<std::uint64_t> asked;
  const Clock::time_point deadline = Clock::now() + seconds(wait_s);
  bool done = false;
  while (!done && Clock::now() < deadline) {
    // Each try is a new datagram (a new SEQ): the receiver refuses one it has seen.
    const std::uint64_t seq = next_seq();
    asked.insert(seq);
    const std::string note = seal(key, {RollVerb::Note, m_rank, seq, payload});
    for (const auto a : addresses_of(peer)) {
      send_to(fd, note, endpoint(a, peer.port));
    }
    // The handler may write a file: give it time before sending again (it is idempotent).
    const Clock::time_point round_end =
        std::min<Clock::time_point>(deadline, Clock::now() + std::chrono::milliseconds(500));
    while (!done && Clock::now() < round_end) {
      done = await_answer(fd, key, RollVerb::Done, asked, round_end).has_value();
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

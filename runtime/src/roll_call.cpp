// The roll call's answering side: the socket thread that answers a call or a notice, the key and the sockets it
// answers on, and whether this process was just resumed from a stop. Where ranks listen is roll_call_peers.cpp;
// calling them, roll_call_calls.cpp.
#include "ccbench/roll_call.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <optional>
#include <span>

#include "ccbench/errors.hpp"
#include "udp_socket.hpp"

namespace ccbench {

using namespace udp_detail;  // the UDP layer (udp_socket.hpp)

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

double RollCall::resumed_s_ago() {
  const std::int64_t at = g_resumed_ns.load(std::memory_order_relaxed);
  return at == 0 ? -1.0 : static_cast<double>(monotonic_ns() - at) / 1e9;
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

}  // namespace ccbench

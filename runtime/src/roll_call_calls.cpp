// The roll call's calling side: calling every peer (who is still there), and a notice sent to one rank and
// waited for. The answering side is roll_call.cpp.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "ccbench/roll_call.hpp"
#include "udp_socket.hpp"

namespace ccbench {
namespace {

constexpr std::size_t kMaxPayload = 60000;

}  // namespace

using namespace udp_detail;  // the UDP layer (udp_socket.hpp)

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

}  // namespace ccbench

// The roll call's peers: where a rank listens (this host's addresses), the address cards the ranks exchange, and
// ranks named by their hosts. The answering side is roll_call.cpp, the calling side roll_call_calls.cpp.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <sstream>

#include "ccbench/errors.hpp"
#include "ccbench/roll_call.hpp"
#include "udp_socket.hpp"

namespace ccbench {
namespace {

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

std::string RollCall::host_of(int rank) const {
  const std::lock_guard lock(m_mutex);
  return rank >= 0 && rank < static_cast<int>(m_peers.size()) ? m_peers[static_cast<std::size_t>(rank)].host
                                                              : std::string{};
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

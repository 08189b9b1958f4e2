#pragma once
// The UDP layer under the roll call (roll_call.cpp): sockets bound on every interface address to one
// port, best-effort datagrams, and a bounded wait for one. Private to the runtime library.
#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ccbench::udp_detail {

using Clock = std::chrono::steady_clock;

[[noreturn]] void throw_errno(const std::string& what);
int udp_socket();
sockaddr_in endpoint(std::uint32_t address, std::uint16_t port);
std::string ip_text(std::uint32_t address);
void close_all(std::vector<int>& fds);
/// One socket on each of `addresses`, all on one ephemeral port (the card names one port): the
/// first address picks it, and another try is made when a later address has it taken.
std::vector<int> bind_all(const std::vector<std::uint32_t>& addresses, std::uint16_t& port);
Clock::duration seconds(double s);
/// Best effort: a lost datagram is sent again by the caller's next round.
void send_to(int fd, const std::string& text, const sockaddr_in& to);
/// Waits up to `ms` for a datagram; nullopt on timeout.
std::optional<std::string> receive(int fd, int ms, sockaddr_in* from = nullptr);

}  // namespace ccbench::udp_detail

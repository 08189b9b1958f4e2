#pragma once
// Who is still there when a run hangs (DESIGN §7). A collective that never completes looks the
// same on every rank that waits in it; only the rank that is stopped (SIGSTOP, a debugger), dead
// or stuck in the kernel knows it is the cause, and it cannot say so. So every rank keeps a UDP
// socket with a thread blocked on it (no CPU while the run goes well) that answers a roll call
// with its rank and what it is doing. When the watchdog expires, the rank calls the roll: the
// ranks that do not answer within a few seconds are the ones that did not arrive.
//
// The same channel carries one kind of notice: a rank that gives up tells the writer (world
// rank 0) first, so the result file records the timeout before MPI_Abort ends the job.
//
// Only the job may use it: the sockets are bound to the addresses the job's ranks reach each
// other on (loopback for ranks on this host, the interfaces' addresses for ranks elsewhere), and
// every datagram carries an HMAC under a key that world rank 0 draws and shares over the job's
// own channel (MPI, or the standalone pair's TCP connection): see roll_message.hpp. A datagram
// that is not the job's, or one sent again, is ignored and counted (ignored()), never answered.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ccbench/group.hpp"
#include "ccbench/roll_message.hpp"

namespace ccbench {

class RollCall {
 public:
  /// One rank's answer: what it was doing when called, and whether it had just been stopped.
  struct Answer {
    int rank = -1;
    std::string activity;
    double resumed_s_ago = -1;  // since a SIGCONT ended a stop; < 0 when it never was stopped
  };
  struct Outcome {
    std::vector<Answer> answered;  // by rank, the caller included
    /// Ranks that did not answer, or answered only because they were resumed (SIGCONT) within
    /// the last `recent_s` (Open MPI continues stopped ranks as it ends the job), ascending.
    std::vector<int> silent;
    std::vector<int> resumed;  // the second kind
  };
  /// Handles a notice (on the answering thread) and returns when it has been dealt with.
  using NoticeHandler = std::function<void(const std::string& payload)>;

  /// Datagrams ignored so far, by why.
  struct Ignored {
    std::uint64_t rejected = 0;  // not the job's: another magic, malformed, no or a wrong MAC
    std::uint64_t replayed = 0;  // the job's MAC, but a SEQ already seen from that sender
  };

  /// Answers nothing until listen() (or join()).
  RollCall(int rank, std::string host);
  RollCall(const RollCall&) = delete;
  RollCall& operator=(const RollCall&) = delete;
  RollCall(RollCall&&) = delete;
  RollCall& operator=(RollCall&&) = delete;
  ~RollCall();

  /// Collective over `world`: world rank 0 draws the key and broadcasts it, the ranks gather each
  /// other's hosts, bind (addresses_to_bind) and exchange their cards. Throws BackendError.
  void join(Group& world);
  /// Binds one UDP socket (one ephemeral port) on each of `addresses` (IPv4, network byte order)
  /// and starts answering datagrams sealed with `key`. Throws BackendError when it cannot bind.
  void listen(const RollKey& key, const std::vector<std::uint32_t>& addresses);
  /// Where rank `rank` of a job on `hosts` (by world rank) listens: loopback when another rank
  /// shares its host or none is elsewhere, `interfaces` when a rank is on another host.
  [[nodiscard]] static std::vector<std::uint32_t> addresses_to_bind(int rank, const std::vector<std::string>& hosts,
                                                                    const std::vector<std::uint32_t>& interfaces);
  /// The IPv4 addresses of this host's interfaces that are up, loopback excepted.
  [[nodiscard]] static std::vector<std::uint32_t> interface_addresses();

  /// This rank's address card, to be exchanged with every rank: "RANK HOST PORT IP[,IP...]".
  [[nodiscard]] std::string card() const;
  /// Every rank's card, indexed by world rank (this rank's own included). Throws BackendError
  /// on a malformed card.
  void set_peers(const std::vector<std::string>& cards);
  [[nodiscard]] bool has_peers() const;
  /// The host a rank's card named ("" when unknown).
  [[nodiscard]] std::string host_of(int rank) const;

  /// What this rank answers when called ("all_reduce 4 MiB in group world").
  void set_activity(std::string activity);
  void on_notice(NoticeHandler handler);

  /// Calls every peer, repeating the call every 250 ms, until all answered or `wait_s` passed.
  [[nodiscard]] Outcome call(double wait_s, double recent_s) const;
  /// Seconds since this process was last continued after a stop; < 0 when it never was.
  [[nodiscard]] static double resumed_s_ago();
  /// Sends `payload` (at most 60000 bytes) to `rank` and waits up to `wait_s` for it to be
  /// handled there; false when it was not.
  [[nodiscard]] bool notify(int rank, const std::string& payload, double wait_s) const;

  /// "rank 3 (node1)", "ranks 2, 3 (node1)", "ranks 1 (node0), 3 (node1)".
  [[nodiscard]] std::string describe(const std::vector<int>& ranks) const;
  [[nodiscard]] Ignored ignored() const;

 private:
  struct Peer {
    int rank = -1;
    std::string host;
    std::uint16_t port = 0;
    std::vector<std::uint32_t> addresses;  // IPv4, network byte order
  };
  using Clock = std::chrono::steady_clock;
  void answer_loop();
  /// Waits until `until` for a sealed `verb` answering one of `asked`; its body after that SEQ.
  [[nodiscard]] std::optional<RollMessage> await_answer(int fd, const RollKey& key, RollVerb verb,
                                                        const std::set<std::uint64_t>& asked,
                                                        Clock::time_point until) const;
  [[nodiscard]] static Outcome outcome(const std::vector<Peer>& peers, const std::map<int, Answer>& answers,
                                       double recent_s);
  /// The sealed answer to a request this rank accepted.
  [[nodiscard]] std::string answer(const RollMessage& request);
  [[nodiscard]] std::vector<std::uint32_t> addresses_of(const Peer& peer) const;
  [[nodiscard]] std::uint64_t next_seq() const { return m_seq.fetch_add(1) + 1; }
  [[nodiscard]] std::pair<RollKey, std::vector<Peer>> snapshot() const;

  int m_rank;
  std::string m_host;
  std::vector<int> m_sockets;  // one per bound address, all on m_port
  std::array<int, 2> m_stop_pipe{-1, -1};
  std::uint16_t m_port = 0;
  std::vector<std::uint32_t> m_bound;
  RollKey m_key{};
  std::vector<Peer> m_peers;
  mutable std::mutex m_mutex;  // activity, handler, and what listen() and set_peers() set
  std::string m_activity = "setting up";
  NoticeHandler m_handler;
  ReplayGuard m_replay;  // the answering thread's
  mutable std::atomic<std::uint64_t> m_seq{0};
  mutable std::atomic<std::uint64_t> m_rejected{0};
  mutable std::atomic<std::uint64_t> m_replayed{0};
  std::thread m_thread;
};

}  // namespace ccbench

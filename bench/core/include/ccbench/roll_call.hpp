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
#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

  /// Binds a UDP socket on every local address (an ephemeral port) and starts answering.
  /// Throws BackendError when no socket can be made.
  RollCall(int rank, std::string host);
  RollCall(const RollCall&) = delete;
  RollCall& operator=(const RollCall&) = delete;
  RollCall(RollCall&&) = delete;
  RollCall& operator=(RollCall&&) = delete;
  ~RollCall();

  /// This rank's address card, to be exchanged with every rank: "RANK HOST PORT IP[,IP...]".
  [[nodiscard]] std::string card() const;
  /// Every rank's card, indexed by world rank (this rank's own included). Throws BackendError
  /// on a malformed card.
  void set_peers(const std::vector<std::string>& cards);
  [[nodiscard]] bool has_peers() const { return !m_peers.empty(); }
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

 private:
  struct Peer {
    int rank = -1;
    std::string host;
    std::uint16_t port = 0;
    std::vector<std::uint32_t> addresses;  // IPv4, network byte order
  };
  void answer_loop();
  [[nodiscard]] std::vector<std::uint32_t> addresses_of(const Peer& peer) const;

  int m_rank;
  std::string m_host;
  int m_socket = -1;
  std::array<int, 2> m_stop_pipe{-1, -1};
  std::uint16_t m_port = 0;
  std::vector<std::uint32_t> m_local_addresses;
  std::vector<Peer> m_peers;
  mutable std::mutex m_mutex;  // activity, handler
  std::string m_activity = "setting up";
  NoticeHandler m_handler;
  std::thread m_thread;
};

}  // namespace ccbench

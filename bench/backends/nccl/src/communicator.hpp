#pragma once
// A blocking NCCL communicator, as nccl-tests uses: on a non-blocking one every group end hands the launch
// to a new helper thread and returns ncclInProgress (NCCL 2.28 group.cc), a thread create/join and polling
// inside every timed op. Every wait for the stream has a deadline (--timeout): on expiry it aborts the
// communicator and throws TimeoutError; on an asynchronous NCCL error it aborts and throws BackendError.
//
// One thread owns the communicator: the rank's. Only it calls NCCL, and only it aborts (NCCL allows
// ncclCommAbort from another thread only on a non-blocking communicator with no other thread inside NCCL). The
// hang guard's watchdog only asks (request_abort()); the rank's polling loop aborts at its next poll, as
// nccl-tests' -T aborts on its polling thread. A rank blocked inside an NCCL call (set-up, a launch) never polls:
// the watchdog ends the job without an abort (MPI_Abort, then _Exit).
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "ccbench/abort_sequence.hpp"

namespace ccbench::nccl_detail {

/// A point in time `seconds` from now; a non-positive or non-finite `seconds` never expires.
class Deadline {
 public:
  explicit Deadline(double seconds);
  [[nodiscard]] bool expired() const;

 private:
  std::optional<std::chrono::steady_clock::time_point> m_at;
};

/// Pauses between polls: yields the core at first (short ops finish within microseconds), then
/// sleeps briefly so a long wait does not burn a core that NCCL's proxy thread may need.
class Poller {
 public:
  void pause();

 private:
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

class Communicator {
 public:
  /// Creates this rank's communicator (blocking until every rank has joined; the hang guard's watchdog
  /// bounds that). `timeout_s` bounds every later wait. The current CUDA device must already be the
  /// rank's GPU.
  /// `blocking` false gives the non-blocking communicator (set-up and ops polled to completion within the
  /// timeout), kept to measure what it costs (CCBENCH_NCCL_BLOCKING=0).
  Communicator(const ncclUniqueId& id, int nranks, int rank, double timeout_s, bool blocking = true);
  /// Finalises (waiting at most the timeout) and destroys; aborts when that fails. Never throws.
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator(Communicator&&) = delete;
  Communicator& operator=(Communicator&&) = delete;

  /// The communicator; throws BackendError once it has been aborted.
  [[nodiscard]] ncclComm_t get() const;
  [[nodiscard]] int rank() const { return m_rank; }
  [[nodiscard]] int size() const { return m_size; }

  /// Handles what an NCCL call on this communicator returned (`what` names the op in errors):
  /// ncclSuccess returns, ncclInProgress is polled to completion within the timeout, anything
  /// else throws BackendError.
  void complete(ncclResult_t result, const std::string& what);
  /// complete(), then polls until no call is in progress on the communicator. On a non-blocking one
  /// ncclCommRegister and ncclCommWindowRegister (and their deregistrations) hand their work to a helper thread
  /// and still return ncclSuccess; the next call would meet "Attempt to use communicator before the previous
  /// operation returned ncclSuccess". On a blocking one this is one ncclCommGetAsyncError.
  void settle(ncclResult_t result, const std::string& what);

  /// What must be released before this communicator is aborted (the backend's CUDA graph).
  void release_before_abort(std::function<void()> release) { m_abort.release_first(std::move(release)); }

  /// From any thread (the hang guard's watchdog): asks the owning thread to abort at its next poll (wait_until,
  /// complete, settle: they then throw TimeoutError), or in the destructor instead of finalizing. Calls nothing
  /// of NCCL's and touches nothing the owning thread uses but one atomic flag.
  void request_abort() noexcept { m_abort_requested.store(true); }

  /// Polls `done()` until it returns true, checking for asynchronous NCCL errors meanwhile.
  /// Aborts and throws TimeoutError when that takes longer than the timeout.
  template <typename Done>
  void wait_until(Done&& done, const std::string& what) {
    const Deadline deadline(m_timeout_s);
    Poller poller;
    while (!(settled(what) && done())) {
      if (deadline.expired()) {
        abort_and_throw_timeout(what);
      }
      poller.pause();
    }
  }

 private:
  /// True when no non-blocking call is pending; aborts and throws on an asynchronous error.
  bool settled(const std::string& what);
  [[noreturn]] void abort_and_throw_timeout(const std::string& what);
  /// Releases what holds the communicator's work, then aborts it (once; the owning thread only).
  void abort() noexcept;
  /// ncclCommAbort.
  void abort_now() noexcept;
  /// ncclCommFinalize, then (non-blocking) polled within the timeout; true when the communicator can be
  /// destroyed. On a blocking communicator ncclCommFinalize itself returns only once NCCL's work is done
  /// (commDestroySync), so no deadline applies there: a finalize that hangs is the hang guard's.
  bool finalize();

  // The communicator until it is destroyed or aborted (null then). Only the owning thread changes it.
  std::atomic<ncclComm_t> m_comm{nullptr};
  std::atomic<bool> m_abort_requested{false};  // the watchdog's request (the one thing it touches)
  AbortSequence m_abort;
  int m_rank;
  int m_size;
  double m_timeout_s;
};

}  // namespace ccbench::nccl_detail

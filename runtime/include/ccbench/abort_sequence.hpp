#pragma once
// Ending a communicator after an error or a timeout, in the order its library needs: first what still holds
// its work (NCCL: a CUDA graph with captured NCCL calls, whose references ncclCommAbort would wait for, so
// an error there turned into a timeout and lost NCCL's message), then the abort itself; once, whichever
// thread comes first (the rank's own after an error, or the hang guard's watchdog while the rank is blocked).
#include <atomic>
#include <functional>
#include <utility>

namespace ccbench {

class AbortSequence {
 public:
  /// What must be released before the abort (replaces an earlier one); set before any thread may run().
  void release_first(std::function<void()> release) { m_release = std::move(release); }

  /// Releases, then calls `abort`; does nothing the second time, from any thread.
  template <typename Abort>
  void run(Abort&& abort) {
    if (m_done.exchange(true)) {
      return;
    }
    if (m_release) {
      m_release();
    }
    std::forward<Abort>(abort)();
  }

  [[nodiscard]] bool done() const { return m_done.load(); }

 private:
  std::function<void()> m_release;
  std::atomic<bool> m_done{false};
};

}  // namespace ccbench

#pragma once
// Ending a communicator after an error or a timeout, in the order its library needs: first what still holds
// its work (NCCL: a CUDA graph with captured NCCL calls, whose references ncclCommAbort would wait for, so
// an error there turned into a timeout and lost NCCL's message), then the abort itself; once. Run by the thread
// that owns the communicator only (the hang guard's watchdog asks that thread, it never runs this itself), so
// the release and the abort are complete when run() returns, and done() cannot be seen before they are.
#include <functional>
#include <utility>

namespace ccbench {

class AbortSequence {
 public:
  /// What must be released before the abort (replaces an earlier one); the owning thread only.
  void release_first(std::function<void()> release) { m_release = std::move(release); }

  /// Releases, then calls `abort`; does nothing the second time.
  template <typename Abort>
  void run(Abort&& abort) {
    if (m_started) {
      return;
    }
    m_started = true;
    if (m_release) {
      m_release();
    }
    std::forward<Abort>(abort)();
    m_done = true;
  }

  /// True once the abort has returned (not when it has begun).
  [[nodiscard]] bool done() const { return m_done; }

 private:
  std::function<void()> m_release;
  bool m_started = false;
  bool m_done = false;
};

}  // namespace ccbench

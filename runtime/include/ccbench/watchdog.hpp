#pragma once
// A hang is a result, not a mystery (DESIGN §7): the watchdog calls `on_expired` from its own
// thread when the current activity made no progress for `timeout_s`. The caller decides what
// expiry does (record, say which op, end the job with exit code 3).
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace ccbench {

class Watchdog {
 public:
  using Expired = std::function<void(const std::string& activity, double waited_s)>;

  Watchdog(double timeout_s, Expired on_expired);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  Watchdog(Watchdog&&) = delete;
  Watchdog& operator=(Watchdog&&) = delete;
  ~Watchdog();

  /// Starts watching `activity` ("all_reduce 4M out-of-place"); counts as progress.
  void begin(std::string activity);
  /// Progress within the current activity (cheap: one atomic store).
  void kick() noexcept;
  /// Stops watching until the next begin().
  void idle();

 private:
  void loop();
  static std::int64_t now_ns() noexcept;

  const std::int64_t m_timeout_ns;
  Expired m_on_expired;
  std::atomic<std::int64_t> m_last_progress_ns{0};
  std::atomic<bool> m_watching{false};
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::string m_activity;
  bool m_stop = false;
  std::thread m_thread;
};

}  // namespace ccbench

#include "ccbench/watchdog.hpp"

#include <algorithm>
#include <chrono>

namespace ccbench {

Watchdog::Watchdog(double timeout_s, Expired on_expired)
    : m_timeout_ns(static_cast<std::int64_t>(timeout_s * 1e9)),
      m_on_expired(std::move(on_expired)),
      m_thread([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    const std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  m_thread.join();
}

std::int64_t Watchdog::now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Watchdog::begin(std::string activity) {
  {
    const std::lock_guard lock(m_mutex);
    m_activity = std::move(activity);
  }
  kick();
  m_watching.store(true, std::memory_order_release);
}

void Watchdog::kick() noexcept { m_last_progress_ns.store(now_ns(), std::memory_order_relaxed); }

void Watchdog::idle() { m_watching.store(false, std::memory_order_release); }

void Watchdog::loop() {
  // Polls at a tenth of the timeout (at most 1 s), so expiry is noticed within ~10%.
  const auto period = std::chrono::nanoseconds(std::clamp<std::int64_t>(m_timeout_ns / 10, 1'000'000, 1'000'000'000));
  std::unique_lock lock(m_mutex);
  while (!m_wake.wait_for(lock, period, [this] { return m_stop; })) {
    if (!m_watching.load(std::memory_order_acquire)) {
      continue;
    }
    const std::int64_t waited = now_ns() - m_last_progress_ns.load(std::memory_order_relaxed);
    if (waited >= m_timeout_ns) {
      const std::string activity = m_activity;
      m_watching.store(false);
      lock.unlock();
      m_on_expired(activity, static_cast<double>(waited) / 1e9);
      lock.lock();
    }
  }
}

}  // namespace ccbench

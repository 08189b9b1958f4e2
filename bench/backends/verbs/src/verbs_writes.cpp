// The verbs backend's data path: RDMA writes posted (signalled every --cq-mod), their completions reaped, the
// ping-pong of ib_write_lat detected by its last byte, and --timeout while waiting for any of them.
#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <numeric>

#include "ccbench/errors.hpp"
#include "verbs_backend_impl.hpp"

namespace ccbench::verbs_detail {

std::uint64_t VerbsBackend::completed() const {
  return std::accumulate(m_completed.begin(), m_completed.end(), std::uint64_t{0});
}

void VerbsBackend::check_deadline(std::chrono::steady_clock::time_point since, std::string_view what) const {
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
  if (waited > m_timeout_s) {
    throw TimeoutError(fmt::format("no {} from {} ({} on {}) for {:.1f} s (--timeout {:g}): is the peer alive?", what,
                                   m_peer.device, m_peer.host, m_peer.rank, waited, m_timeout_s));
  }
}

void VerbsBackend::post_write(std::size_t qp, std::uint32_t bytes, bool signaled, std::uint64_t covers) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uintptr_t>(send_half());
  sge.length = bytes;
  sge.lkey = mr()->lkey;
  ibv_send_wr wr{};
  wr.wr_id = (covers << 16U) | qp;
  wr.sg_list = bytes > 0 ? &sge : nullptr;
  wr.num_sge = bytes > 0 ? 1 : 0;
  wr.opcode = IBV_WR_RDMA_WRITE;
  const unsigned signal_flag = signaled ? static_cast<unsigned>(IBV_SEND_SIGNALED) : 0U;
  const unsigned inline_flag =
      bytes > 0 && static_cast<int>(bytes) <= m_inline ? static_cast<unsigned>(IBV_SEND_INLINE) : 0U;
  wr.send_flags = signal_flag | inline_flag;
  wr.wr.rdma.remote_addr = m_peer.addr;
  wr.wr.rdma.rkey = m_peer.rkey;
  ibv_send_wr* bad = nullptr;
  if (const int err = ::ibv_post_send(m_qps[qp].get(), &wr, &bad); err != 0) {
    fail(fmt::format("ibv_post_send (RDMA WRITE of {} B)", bytes), err);
  }
  m_posted_writes += 1;
  m_posted_bytes += bytes;
}

// One poll of the completion queue; each signalled write completed covers the unsignalled writes posted before
// it on its QP. Returns how many completions it found.
std::size_t VerbsBackend::reap_some() {
  std::array<ibv_wc, 16> wc{};
  const int n = ::ibv_poll_cq(m_cq.get(), static_cast<int>(wc.size()), wc.data());
  if (n < 0) {
    throw BackendError("ibv_poll_cq failed");
  }
  for (int i = 0; i < n; ++i) {
    const ibv_wc& c = wc[static_cast<std::size_t>(i)];
    if (c.status != IBV_WC_SUCCESS) {
      throw BackendError(fmt::format("RDMA write to {} ({} on {}) failed: {} (vendor error {:#x})", m_peer.device,
                                     m_peer.host, m_peer.rank, ::ibv_wc_status_str(c.status), c.vendor_err));
    }
    const std::size_t qp = c.wr_id & 0xffffU;
    m_completed[qp] = std::min(m_posted[qp], m_completed[qp] + (c.wr_id >> 16U));
  }
  return static_cast<std::size_t>(n);
}

// Polls until at least `min_completions` signalled writes have completed.
void VerbsBackend::reap(std::size_t min_completions) {
  std::size_t got = 0;
  const auto since = Clock::now();
  std::uint64_t idle = 0;
  while (got < min_completions) {
    const std::size_t n = reap_some();
    got += n;
    if (n == 0 && (++idle & 0xfffU) == 0) {
      check_deadline(since, "completion");
    }
  }
}

void VerbsBackend::wait_for_byte(std::uint8_t value) {
  const std::uint8_t* flag = recv_half() + m_bytes - 1;
  const auto since = std::chrono::steady_clock::now();
  std::uint64_t spins = 0;
  while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != value) {
    if ((++spins & 0xfffU) == 0) {
      check_deadline(since, "write");
    }
  }
}

void VerbsBackend::enqueue() {
  if (m_lat) {  // ping-pong: the writer's write, then the answer, each detected by its last byte
    m_seq = static_cast<std::uint8_t>(m_seq % 255U + 1U);
    if (m_pair.rank() == 1) {
      wait_for_byte(m_seq);
    }
    send_half()[m_bytes - 1] = m_seq;
    m_posted[0] += 1;
    post_write(0, m_bytes, true, 1);
    if (m_pair.rank() == 0) {
      wait_for_byte(m_seq);
    }
    reap(1);
    return;
  }
  if (!writes()) {
    return;
  }
  const std::size_t qp = m_next_qp;
  while (in_flight(qp) >= static_cast<std::uint64_t>(m_tx_depth)) {
    reap(1);
  }
  post_data_write(qp, false);
}

// The next write of the current size, on `qp` (which has room): signalled every --cq-mod writes, or when asked.
void VerbsBackend::post_data_write(std::size_t qp, bool signal_it) {
  m_next_qp = (qp + 1) % m_qps.size();
  m_posted[qp] += 1;
  m_since_signalled[qp] += 1;
  const bool signal = signal_it || m_since_signalled[qp] >= static_cast<std::uint64_t>(m_cq_mod);
  post_write(qp, m_bytes, signal, signal ? m_since_signalled[qp] : 0);
  if (signal) {
    m_since_signalled[qp] = 0;
  }
}

// Every write posted is complete: a signalled zero-byte write on each QP with unsignalled writes before it
// (complete once they are), then the completion queue reaped until nothing is in flight.
void VerbsBackend::wait() {
  for (std::size_t qp = 0; qp < m_qps.size(); ++qp) {
    if (m_since_signalled[qp] > 0) {
      m_posted[qp] += 1;
      post_write(qp, 0, true, m_since_signalled[qp] + 1);
      m_since_signalled[qp] = 0;
    }
  }
  for (std::size_t qp = 0; qp < m_qps.size(); ++qp) {
    while (in_flight(qp) > 0) {
      reap(1);
    }
  }
}

}  // namespace ccbench::verbs_detail

#include "ccbench/verbs/verbs_backend.hpp"

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <numeric>
#include <span>

#include "ccbench/errors.hpp"
#include "ccbench/pattern.hpp"
#include "ccbench/verbs/verbs_choice.hpp"
#include "ccbench/version.hpp"

#include "verbs_backend_impl.hpp"

namespace ccbench {
namespace verbs_detail {

void VerbsTimer::start() { m_backend.start_sample(); }

double VerbsTimer::stop() { return m_backend.end_sample(); }

VerbsBackend::VerbsBackend(Group& pair, const RunConfig& config, int world_rank, const std::string& host)
    : m_pair(pair),
      m_lat(config.collective == Collective::IbWriteLat),
      m_bidir(config.rdma.bidir),
      m_timeout_s(config.timeout_s),
      m_port(config.rdma.ib_port) {
  if (pair.size() != 2) {
    throw UsageError(fmt::format("an RDMA pair has 2 ranks, this group {}", pair.size()));
  }
  open_device(config);
  create_queue_pairs(config);
  const PeerInfo mine = my_info(config, world_rank, host);
  const auto both = pair.all_gather(verbs::to_text(mine));
  m_peer = verbs::peer_from_text(both.at(static_cast<std::size_t>(1 - pair.rank())), mine);
  // Either side's buffer unusable (--mem cuda:N): both skip every case, with the reason.
  const auto reasons = pair.all_gather(m_unsupported);
  const std::string& theirs = reasons.at(static_cast<std::size_t>(1 - pair.rank()));
  if (m_unsupported.empty() && !theirs.empty()) {
    m_unsupported = fmt::format("rank {} ({}): {}", m_peer.rank, m_peer.host, theirs);
  }
  connect(m_peer, config.rdma.mtu);
  pair.barrier();  // both sides ready to receive before anyone writes

  const int path_mtu = std::min(mine.active_mtu, m_peer.active_mtu);
  m_info.mtu = config.rdma.mtu ? std::min(*config.rdma.mtu, path_mtu) : path_mtu;
  m_info.qps = static_cast<int>(m_qps.size());
  m_info.tx_depth = m_tx_depth;
  m_info.cq_mod = m_cq_mod;
  m_info.inline_bytes = m_inline;
  m_info.bidir = m_bidir;
  m_info.mem = config.rdma.mem;
  const auto endpoint = [](const PeerInfo& p) {
    return RdmaEndpoint{p.rank, p.host,     p.device, p.port,      p.link_layer, p.gid_index,
                        p.gid,  p.gid_type, p.lid,    p.rate_Gbps, p.active_mtu};
  };
  m_info.endpoints =
      pair.rank() == 0 ? std::vector{endpoint(mine), endpoint(m_peer)} : std::vector{endpoint(m_peer), endpoint(mine)};
}

Support VerbsBackend::supports(const CaseSpec& spec) const {
  if (!m_unsupported.empty()) {
    return {false, m_unsupported};
  }
  if (!is_rdma(spec.collective) || spec.dtype != DType::Uint8) {
    return {false, "the verbs backend measures ib_write_bw and ib_write_lat on bytes only"};
  }
  if (spec.count == 0 || spec.count > m_half || spec.count > 0x80000000ULL) {
    return {false, fmt::format("{} bytes: an RDMA write here is 1 B to {} B", spec.count,
                               std::min<std::uint64_t>(m_half, 0x80000000ULL))};
  }
  return {};
}

void VerbsBackend::prepare(const CaseSpec& spec) {
  wait();  // nothing of the last case is in flight
  m_spec = spec;
  m_bytes = static_cast<std::uint32_t>(spec.count);
  m_seq = 0;
  m_run_writes = 0;
  m_run_s = 0.0;
  m_posted_writes = 0;
  m_posted_bytes = 0;
  if (m_lat) {                                                                       // (host memory only)
    __atomic_store_n(recv_half() + m_bytes - 1, std::uint8_t{0}, __ATOMIC_RELEASE);  // no stale marker
  }
}

void VerbsBackend::fill_pattern() {
#if CCBENCH_VERBS_CUDA
  if (m_gpu) {
    fill_input(m_spec, 2, m_pair.rank(), m_staging.data());
    m_gpu->upload(0, m_staging.data(), m_bytes);
    m_gpu->zero(m_half, m_bytes);
    return;
  }
#endif
  fill_input(m_spec, 2, m_pair.rank(), send_half());
  std::memset(recv_half(), 0, m_bytes);
}

std::uint64_t VerbsBackend::count_wrong() {
  m_pair.barrier();  // the writer's last write is complete: the data is in place
  if (!receives()) {
    return 0;
  }
  CaseSpec checked = m_spec;
  if (m_lat) {
    checked.count -= 1;  // the last byte is the round trip's marker
  }
#if CCBENCH_VERBS_CUDA
  if (m_gpu) {
    m_gpu->download(m_half, m_staging.data(), m_bytes);
    return ccbench::count_wrong(checked, 2, m_pair.rank(), m_staging.data());
  }
#endif
  return ccbench::count_wrong(checked, 2, m_pair.rank(), recv_half());
}

std::optional<RdmaInfo> VerbsBackend::rdma_info() const {
  RdmaInfo info = m_info;
  // One direction's figure: with --bidirectional each side knows only its own writes.
  if (!m_lat && !m_bidir && m_run_s > 0.0) {
    info.run_bw_GBps = static_cast<double>(m_run_writes) * m_bytes / m_run_s / 1e9;
  }
  info.posted_writes = m_posted_writes;
  info.posted_bytes = m_posted_bytes;
  return info;
}

double VerbsBackend::end_sample() {
  wait();
  const double elapsed = std::chrono::duration<double>(Clock::now() - m_sample_start).count();
  if (m_lat) {
    return m_pair.rank() == 0 ? elapsed / 2.0 : 0.0;  // one way; the answering side's clock says nothing
  }
  return writes() ? elapsed : 0.0;
}

// ib_write_bw's samples as perftest takes its run: `per_op_s.size()` samples of `ops` writes posted back to back
// with --tx-depth in flight, each sample the time between the completion that ends the one before it (the first:
// the first post) and its own last write's completion. Only the stream's first sample pays the link's ramp-up,
// and the drain comes once, after the last; the ranks do not meet between samples. The side that only receives
// reports zeros (the runner takes the MAX across ranks).
void VerbsBackend::stream_samples(std::uint64_t ops, std::span<double> per_op_s) {
  std::fill(per_op_s.begin(), per_op_s.end(), 0.0);
  if (m_lat) {
    stream_round_trips(ops, per_op_s);
    return;
  }
  if (!writes() || per_op_s.empty() || ops == 0) {
    return;
  }
  const std::uint64_t total = ops * per_op_s.size();
  const std::uint64_t done_before = completed();
  std::uint64_t posted = 0;
  std::size_t next_sample = 0;
  const Clock::time_point start = Clock::now();
  Clock::time_point last = start;
  // Every sample whose last write is complete ends now. Completions can come in bursts (Soft-RoCE's threads
  // report several at once): samples that end in the same poll share the time since the last one ended.
  const auto stamp = [&] {
    const std::uint64_t done = completed() - done_before;
    std::size_t ended = next_sample;
    while (ended < per_op_s.size() && done >= (ended + 1) * ops) {
      ++ended;
    }
    if (ended == next_sample) {
      return;
    }
    const Clock::time_point now = Clock::now();
    const double each =
        std::chrono::duration<double>(now - last).count() / static_cast<double>((ended - next_sample) * ops);
    std::fill(per_op_s.begin() + static_cast<std::ptrdiff_t>(next_sample),
              per_op_s.begin() + static_cast<std::ptrdiff_t>(ended), each);
    next_sample = ended;
    last = now;
  };
  Clock::time_point progress = start;
  std::uint64_t idle = 0;
  while (next_sample < per_op_s.size()) {
    if (posted < total && in_flight(m_next_qp) < static_cast<std::uint64_t>(m_tx_depth)) {
      ++posted;
      // A sample's last write says when it is complete; so does each QP's last, so that nothing stays unknown.
      post_data_write(m_next_qp, posted % ops == 0 || posted + m_qps.size() > total);
      continue;
    }
    if (reap_some() > 0) {
      stamp();
      progress = Clock::now();
      idle = 0;
    } else if ((++idle & 0xfffU) == 0) {
      check_deadline(progress, "completion");
    }
  }
  m_run_writes += total;
  m_run_s += std::chrono::duration<double>(last - start).count();
}

// ib_write_lat's samples as perftest takes its iterations: `per_op_s.size()` samples of `ops` round trips played
// back to back, each sample half the time from the end of the one before to its own last answer. One untimed
// round trip comes first: the two sides leave the barrier before the stream at different times, and the first
// ping would wait for the late side to start answering. The answering side plays along and reports zeros.
void VerbsBackend::stream_round_trips(std::uint64_t ops, std::span<double> per_op_s) {
  enqueue();
  Clock::time_point last = Clock::now();
  for (double& sample : per_op_s) {
    for (std::uint64_t i = 0; i < ops; ++i) {
      enqueue();
    }
    const Clock::time_point now = Clock::now();
    if (m_pair.rank() == 0) {
      sample = std::chrono::duration<double>(now - last).count() / 2.0 / static_cast<double>(ops);
    }
    last = now;
  }
}

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

}  // namespace verbs_detail

std::string loaded_verbs_version() {
  const std::string file = library_file_of(reinterpret_cast<const void*>(&ibv_get_device_list));
  if (file.empty()) {
    return "libibverbs (linked statically)";
  }
  // The file is the library's real name, libibverbs.so.1.14.44.0: its version follows ".so.".
  const auto so = file.rfind(".so.");
  return so == std::string::npos ? fmt::format("libibverbs ({})", file)
                                 : fmt::format("libibverbs {} ({})", file.substr(so + 4), file);
}

LibraryLines verbs_library_lines() {
  return {{"verbs", fmt::format("{}, built with libibverbs {}", loaded_verbs_version(), CCBENCH_IBVERBS_VERSION)}};
}

std::unique_ptr<Backend> make_verbs_backend(Group& pair, const RunConfig& config, int world_rank,
                                            const std::string& host) {
  return std::make_unique<verbs_detail::VerbsBackend>(pair, config, world_rank, host);
}

}  // namespace ccbench

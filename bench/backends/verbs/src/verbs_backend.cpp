#include "ccbench/verbs/verbs_backend.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <span>

#include "ccbench/errors.hpp"
#include "ccbench/pattern.hpp"
#include "ccbench/verbs/verbs_choice.hpp"
#include "verbs_device.hpp"
#if CCBENCH_VERBS_CUDA
#include "gpu_buffer.hpp"
#endif

#ifndef CCBENCH_IBVERBS_VERSION
#define CCBENCH_IBVERBS_VERSION "unknown"
#endif

namespace ccbench {
namespace {

using verbs::PeerInfo;

using verbs_detail::CompletionQueue;
using verbs_detail::Context;
using verbs_detail::DeviceList;
using verbs_detail::fail;
using verbs_detail::FreeDeleter;
using verbs_detail::gid_table;
using verbs_detail::gid_text;
using verbs_detail::MemoryRegion;
using verbs_detail::PortFacts;
using verbs_detail::ProtectionDomain;
using verbs_detail::query_port;
using verbs_detail::QueuePair;
using verbs_detail::view_of;

class VerbsBackend;

using Clock = std::chrono::steady_clock;

class VerbsTimer final : public Timer {
 public:
  explicit VerbsTimer(VerbsBackend& backend) : m_backend(backend) {}
  void start() override;
  double stop() override;
  [[nodiscard]] std::string clock() const override { return "host steady_clock"; }

 private:
  VerbsBackend& m_backend;
};

class VerbsBackend final : public Backend {
 public:
  VerbsBackend(Group& pair, const RunConfig& config, int world_rank, const std::string& host);

  [[nodiscard]] std::string name() const override { return "verbs"; }
  [[nodiscard]] std::map<std::string, std::string> versions() const override {
    return {{"verbs", fmt::format("libibverbs {} (rdma-core)", CCBENCH_IBVERBS_VERSION)},
            {"rdma_device", m_device_text},
            {"rdma_buffer", m_buffer_text}};
  }
  [[nodiscard]] std::string device_bus_id() const override { return m_bus_id; }  // empty: host memory
  [[nodiscard]] Support supports(const CaseSpec& spec) const override;
  void prepare(const CaseSpec& spec) override;
  void fill_pattern() override;
  void enqueue() override;
  void wait() override;
  std::uint64_t count_wrong() override;
  Timer& timer() override { return m_timer; }
  [[nodiscard]] std::optional<RdmaInfo> rdma_info() const override;
  [[nodiscard]] bool streams(TimingMode timing) const override {
    return timing == TimingMode::Batch || (m_lat && timing == TimingMode::PerOp);
  }
  [[nodiscard]] std::uint64_t min_stream_ops() const override {
    return m_lat ? 1 : static_cast<std::uint64_t>(m_tx_depth) * m_qps.size();
  }
  void stream_samples(std::uint64_t ops, std::span<double> per_op_s) override;
  void stream_round_trips(std::uint64_t ops, std::span<double> per_op_s);

  /// ib_write_lat first plays one untimed round trip: the two sides leave the barrier before a
  /// sample at different times (over TCP, a wake-up apart: ~2 ms in the QEMU guest), and the
  /// first timed ping would wait for the late side to start answering. After it, both spin.
  void start_sample() {
    if (m_lat) {
      enqueue();
    }
    m_sample_start = Clock::now();
  }
  /// Seconds of this side's ops since start_sample(), the link drained (what the timer reports).
  [[nodiscard]] double end_sample();

 private:
  void open_device(const RunConfig& config);
  void create_queue_pairs(const RunConfig& config);
  void allocate_buffer(const RunConfig& config, std::size_t total, unsigned access);
  [[nodiscard]] ibv_mr* mr() const;
  [[nodiscard]] PeerInfo my_info(const RunConfig& config, int world_rank, const std::string& host) const;
  void connect(const PeerInfo& peer, std::optional<int> mtu);
  void post_write(std::size_t qp, std::uint32_t bytes, bool signaled, std::uint64_t covers);
  void post_data_write(std::size_t qp, bool signal_it);
  [[nodiscard]] std::uint64_t completed() const;
  [[nodiscard]] std::uint64_t in_flight(std::size_t qp) const { return m_posted[qp] - m_completed[qp]; }
  std::size_t reap_some();
  void reap(std::size_t min_completions);
  void check_deadline(std::chrono::steady_clock::time_point since, std::string_view what) const;
  void wait_for_byte(std::uint8_t value);
  [[nodiscard]] bool writes() const { return m_pair.rank() == 0 || m_bidir; }
  [[nodiscard]] bool receives() const { return m_pair.rank() == 1 || m_bidir; }
  // Host or device addresses (--mem): the CPU touches them only when m_gpu is empty.
  [[nodiscard]] std::uint8_t* send_half() const { return m_base; }
  [[nodiscard]] std::uint8_t* recv_half() const { return m_base + m_half; }

  Group& m_pair;
  const bool m_lat;
  const bool m_bidir;
  const double m_timeout_s;
  const int m_port;
  std::uint64_t m_half = 0;  // bytes of each half of the buffer: the largest size
  std::unique_ptr<std::uint8_t, FreeDeleter> m_buffer;
  // Declared in creation order: destroyed QPs first, the context last.
  Context m_ctx;
  ProtectionDomain m_pd;
  MemoryRegion m_mr;  // host memory's
#if CCBENCH_VERBS_CUDA
  std::unique_ptr<verbs::GpuBuffer> m_gpu;  // --mem cuda:N: the buffer and its registration
#endif
  std::uint8_t* m_base = nullptr;       // the buffer: send half, then receive half
  std::vector<std::uint8_t> m_staging;  // GPU memory: the pattern on its way in and the data on its way out
  std::string m_buffer_text = "host memory";
  std::string m_bus_id;       // the GPU's, for GPU memory
  std::string m_unsupported;  // why every case is skipped (GPU memory unusable on either side)
  CompletionQueue m_cq;
  std::vector<QueuePair> m_qps;
  PortFacts m_facts;
  std::optional<int> m_gid_index;
  ibv_gid m_gid{};
  std::string m_gid_type;
  std::string m_device;
  std::string m_device_text;
  int m_tx_depth = 1;
  int m_cq_mod = 1;
  int m_inline = 0;
  std::uint32_t m_psn = 0;
  PeerInfo m_peer;
  RdmaInfo m_info;
  VerbsTimer m_timer{*this};
  // The current case and the state of the writes in flight.
  CaseSpec m_spec;
  std::uint32_t m_bytes = 0;
  std::size_t m_next_qp = 0;
  std::vector<std::uint64_t> m_posted;           // per QP: writes posted, ever
  std::vector<std::uint64_t> m_completed;        // per QP: writes known complete, ever
  std::vector<std::uint64_t> m_since_signalled;  // per QP: posted since the last signalled write
  std::uint8_t m_seq = 0;                        // ib_write_lat: the marker of the current round trip
  Clock::time_point m_sample_start;
  std::uint64_t m_run_writes = 0;  // ib_write_bw: the writes of the measured streams, and their time
  double m_run_s = 0.0;
};

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

void VerbsBackend::open_device(const RunConfig& config) {
  const DeviceList list;
  std::vector<verbs::DeviceView> views;
  for (ibv_device* dev : list.devices()) {
    views.push_back(view_of(dev, m_port));
  }
  m_device = verbs::choose_device(views, config.rdma.device, m_port);
  for (ibv_device* dev : list.devices()) {
    if (m_device == ::ibv_get_device_name(dev)) {
      m_ctx = Context(::ibv_open_device(dev));
    }
  }
  if (m_ctx.get() == nullptr) {
    fail("ibv_open_device " + m_device, errno);
  }
  m_facts = query_port(m_ctx.get(), m_port);
  const bool ethernet = m_facts.link_layer == "Ethernet";
  const auto gids = gid_table(m_ctx.get(), m_port, m_facts.attr.gid_tbl_len);
  m_gid_index = verbs::choose_gid(gids, config.rdma.gid_index, ethernet, m_facts.attr.gid_tbl_len, m_device, m_port);
  if (m_gid_index) {
    if (const int err = ::ibv_query_gid(m_ctx.get(), static_cast<std::uint8_t>(m_port), *m_gid_index, &m_gid);
        err != 0) {
      fail("ibv_query_gid", err);
    }
    const auto it = std::ranges::find(gids, *m_gid_index, &verbs::GidView::index);
    m_gid_type = it != gids.end() ? it->type : "IB";
  }
  const auto rate = verbs::port_rate_gbps(m_facts.attr.active_speed, m_facts.attr.active_width);
  m_device_text = fmt::format("{} port {} ({}, {}, active MTU {})", m_device, m_port, m_facts.link_layer,
                              rate ? fmt::format("{:g} Gb/s", *rate) : std::string{"rate unknown"},
                              verbs::mtu_bytes(m_facts.attr.active_mtu));
}

void VerbsBackend::create_queue_pairs(const RunConfig& config) {
  const RdmaOptions& r = config.rdma;
  m_tx_depth = m_lat ? 1 : r.tx_depth;
  m_cq_mod = m_lat ? 1 : std::min(r.cq_mod, m_tx_depth);
  const int want_inline = r.inline_size.value_or(m_lat ? 220 : 0);
  m_half = std::max<std::uint64_t>(config.max_bytes, 64);
  constexpr std::size_t kPage = 4096;
  const std::size_t total = (2 * m_half + kPage - 1) / kPage * kPage;
  m_pd = ProtectionDomain(::ibv_alloc_pd(m_ctx.get()));
  if (m_pd.get() == nullptr) {
    fail("ibv_alloc_pd", errno);
  }
  allocate_buffer(config, total, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  const int cq_depth = (m_tx_depth + 1) * (m_lat ? 1 : r.qps) + 1;  // every write, and wait()'s flush
  m_cq = CompletionQueue(::ibv_create_cq(m_ctx.get(), cq_depth, nullptr, nullptr, 0));
  if (m_cq.get() == nullptr) {
    fail(fmt::format("ibv_create_cq of depth {} (lower --tx-depth or --qp)", cq_depth), errno);
  }
  m_inline = m_base == m_buffer.get() ? want_inline : 0;  // inline sends are CPU copies: host memory only
  for (int i = 0; i < (m_lat ? 1 : r.qps); ++i) {
    ibv_qp_init_attr init{};
    init.send_cq = m_cq.get();
    init.recv_cq = m_cq.get();
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = static_cast<std::uint32_t>(m_tx_depth + 1);  // + the flushing write of wait()
    init.cap.max_recv_wr = 1;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.cap.max_inline_data = static_cast<std::uint32_t>(m_inline);
    QueuePair qp(::ibv_create_qp(m_pd.get(), &init));
    if (qp.get() == nullptr) {
      fail(fmt::format("ibv_create_qp (RC, {} writes in flight, {} bytes inline: lower -t or -I)", m_tx_depth,
                       want_inline),
           errno);
    }
    m_inline = std::min(m_inline, static_cast<int>(init.cap.max_inline_data));
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = static_cast<std::uint8_t>(m_port);
    attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (const int err =
            ::ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        err != 0) {
      fail("ibv_modify_qp to INIT", err);
    }
    m_qps.push_back(std::move(qp));
  }
  m_posted.assign(m_qps.size(), 0);
  m_completed.assign(m_qps.size(), 0);
  m_since_signalled.assign(m_qps.size(), 0);
  std::random_device rd;
  m_psn = rd() & 0xffffffU;
}

// --mem host: page-aligned host memory. --mem cuda:N: device memory through dmabuf or peer memory; when
// the GPU cannot serve, host memory keeps the pair's set-up going and every case is skipped with the reason.
void VerbsBackend::allocate_buffer(const RunConfig& config, std::size_t total, unsigned access) {
  const std::string& mem = config.rdma.mem;
  if (mem != "host") {
#if CCBENCH_VERBS_CUDA
    try {
      m_gpu = std::make_unique<verbs::GpuBuffer>(std::stoi(mem.substr(5)), total, m_pd.get(), access);
      m_base = m_gpu->data();
      m_buffer_text = m_gpu->description();
      m_bus_id = m_gpu->bus_id();
      m_staging.resize(m_half);
      return;
    } catch (const verbs::GpuUnsupported& e) {
      m_unsupported = e.what();
      m_buffer_text = fmt::format("host memory (--mem {} unusable: {})", mem, e.what());
    }
#else
    throw UsageError(
        fmt::format("--mem {}: this build has no CUDA (CUDA was not found or CCBENCH_CUDA=OFF); "
                    "use --mem host",
                    mem));
#endif
  }
  constexpr std::size_t kPage = 4096;
  m_buffer.reset(static_cast<std::uint8_t*>(std::aligned_alloc(kPage, total)));  // NOLINT(cppcoreguidelines-no-malloc)
  if (!m_buffer) {
    throw BackendError(fmt::format("cannot allocate {} bytes of RDMA buffer (-e {})", total, config.max_bytes));
  }
  std::memset(m_buffer.get(), 0, total);
  m_base = m_buffer.get();
  m_mr = MemoryRegion(::ibv_reg_mr(m_pd.get(), m_base, total, access));
  if (m_mr.get() == nullptr) {
    fail(fmt::format("ibv_reg_mr of {} bytes (ulimit -l may be too low)", total), errno);
  }
}

ibv_mr* VerbsBackend::mr() const {
#if CCBENCH_VERBS_CUDA
  if (m_gpu) {
    return m_gpu->mr();
  }
#endif
  return m_mr.get();
}

PeerInfo VerbsBackend::my_info(const RunConfig& config, int world_rank, const std::string& host) const {
  PeerInfo p;
  p.settings = fmt::format("{} qps={} bidir={} max_bytes={} mem={}", info(config.collective).bench, m_qps.size(),
                           m_bidir ? 1 : 0, config.max_bytes, config.rdma.mem);
  p.rank = world_rank;
  p.host = host;
  p.device = m_device;
  p.port = m_port;
  p.link_layer = m_facts.link_layer;
  p.gid_index = m_gid_index;
  if (m_gid_index) {
    p.gid = gid_text(m_gid);
    p.gid_type = m_gid_type;
    p.gid_raw.assign(std::begin(m_gid.raw), std::end(m_gid.raw));
  }
  p.lid = m_facts.attr.lid;
  p.active_mtu = verbs::mtu_bytes(m_facts.attr.active_mtu);
  p.rate_Gbps = verbs::port_rate_gbps(m_facts.attr.active_speed, m_facts.attr.active_width);
  for (const auto& qp : m_qps) {
    p.qpns.push_back(qp.get()->qp_num);
  }
  p.psn = m_psn;
  p.addr = reinterpret_cast<std::uintptr_t>(recv_half());
  p.rkey = mr()->rkey;
  p.bytes = m_half;
  return p;
}

void VerbsBackend::connect(const PeerInfo& peer, std::optional<int> mtu) {
  const int path = std::min(verbs::mtu_bytes(m_facts.attr.active_mtu), peer.active_mtu);
  const int bytes = mtu ? std::min(*mtu, path) : path;
  const auto path_mtu = verbs::ibv_mtu_of(bytes);
  if (!path_mtu) {
    throw BackendError(fmt::format("no path MTU: this port's active MTU is {}, the peer's {}",
                                   verbs::mtu_bytes(m_facts.attr.active_mtu), peer.active_mtu));
  }
  for (std::size_t i = 0; i < m_qps.size(); ++i) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = static_cast<enum ibv_mtu>(*path_mtu);
    attr.dest_qp_num = peer.qpns[i];
    attr.rq_psn = peer.psn;
    attr.max_dest_rd_atomic = 1;
    attr.min_rnr_timer = 12;
    attr.ah_attr.dlid = static_cast<std::uint16_t>(peer.lid);
    attr.ah_attr.sl = 0;
    attr.ah_attr.port_num = static_cast<std::uint8_t>(m_port);
    if (m_gid_index) {
      attr.ah_attr.is_global = 1;
      std::copy(peer.gid_raw.begin(), peer.gid_raw.end(), std::begin(attr.ah_attr.grh.dgid.raw));
      attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(*m_gid_index);
      attr.ah_attr.grh.hop_limit = 64;
    }
    if (const int err = ::ibv_modify_qp(m_qps[i].get(), &attr,
                                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                            IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
        err != 0) {
      fail(fmt::format("ibv_modify_qp to RTR (peer {} {} qpn {}, {}; this side's GID index {})", peer.host, peer.device,
                       peer.qpns[i], peer.gid.empty() ? fmt::format("LID {}", peer.lid) : peer.gid,
                       m_gid_index ? std::to_string(*m_gid_index) : std::string{"none"}),
           err);
    }
    ibv_qp_attr rts{};
    rts.qp_state = IBV_QPS_RTS;
    rts.timeout = 14;  // 4.096 us x 2^14 = 67 ms per try
    rts.retry_cnt = 7;
    rts.rnr_retry = 7;
    rts.sq_psn = m_psn;
    rts.max_rd_atomic = 1;
    if (const int err = ::ibv_modify_qp(m_qps[i].get(), &rts,
                                        IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                            IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
        err != 0) {
      fail("ibv_modify_qp to RTS", err);
    }
  }
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

}  // namespace

std::unique_ptr<Backend> make_verbs_backend(Group& pair, const RunConfig& config, int world_rank,
                                            const std::string& host) {
  return std::make_unique<VerbsBackend>(pair, config, world_rank, host);
}

}  // namespace ccbench

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include "ccbench/errors.hpp"
#include "verbs_backend_impl.hpp"

namespace ccbench::verbs_detail {

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

}  // namespace ccbench::verbs_detail

#include "ccbench/verbs/verbs_backend.hpp"

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>

#include "ccbench/errors.hpp"
#include "ccbench/pattern.hpp"
#include "ccbench/verbs/verbs_choice.hpp"
#include "ccbench/version.hpp"

#include "verbs_backend_impl.hpp"

namespace ccbench {
namespace verbs_detail {

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

#include "ccbench/topo/peak.hpp"

#include "ccbench/text.hpp"
#include "ccbench/topo/query.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

namespace ccbench::topo {
namespace {

/// A bound on the per-rank bandwidth per direction, or (GBps empty) why there is none.
struct Bound {
  std::optional<double> GBps;
  std::string basis;
};

Bound unknown(std::string why) { return {std::nullopt, std::move(why)}; }

// The PCIe figure is the encoded line rate; a reader comparing busbw with it must know that data
// never reaches it.
constexpr std::string_view kPcieOverheadNote =
    "line rate after encoding; packet overhead (TLP headers, DLLPs, flow control) keeps achievable PCIe bandwidth "
    "near 85-90% of it";

/// The smaller of two bounds; an unknown one wins (a peak built on an unknown is not a peak).
Bound tighter(Bound a, Bound b) {
  if (!a.GBps) {
    return a;
  }
  if (!b.GBps) {
    return b;
  }
  return *b.GBps < *a.GBps ? std::move(b) : std::move(a);
}

/// The ranks of a group that run on one host.
struct HostGroup {
  const HostTopology* host = nullptr;
  std::string label;             // "node-a", or "host 1" when discovery found no name
  std::vector<const Gpu*> gpus;  // distinct GPUs used by the group's GPU ranks
  int ranks = 0;                 // the group's ranks on this host, host-memory ranks included
  bool host_memory = false;      // some rank works on host memory
};

std::string gpu_label(const Gpu& gpu, const HostGroup& group, bool with_host) {
  return with_host ? fmt::format("GPU{} on {}", gpu.index, group.label) : fmt::format("GPU{}", gpu.index);
}

bool is_usable_nvlink(const NvLink& link) { return link.active && link.peer != NvLinkPeer::Cpu; }

bool has_switch_link(const Gpu& gpu) {
  return std::ranges::any_of(gpu.nvlinks, [](const NvLink& l) { return l.active && l.peer == NvLinkPeer::NvSwitch; });
}

bool links_directly(const Gpu& from, const Gpu& to) {
  const std::string target = normalize_bus_id(to.bus_id);
  if (target.empty()) {
    return false;
  }
  return std::ranges::any_of(from.nvlinks, [&target](const NvLink& l) {
    return l.active && l.peer == NvLinkPeer::Gpu && normalize_bus_id(l.peer_bus_id) == target;
  });
}

/// Every pair joined by active NVLinks, directly or both through NVSwitch.
bool is_nvlink_domain(const std::vector<const Gpu*>& gpus) {
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = i + 1; j < gpus.size(); ++j) {
      const Gpu& a = *gpus[i];
      const Gpu& b = *gpus[j];
      const bool switched = has_switch_link(a) && has_switch_link(b);
      if (!switched && !links_directly(a, b) && !links_directly(b, a)) {
        return false;
      }
    }
  }
  return true;
}

/// Links that can carry the group's traffic: to an NVSwitch, or straight to a GPU of the group.
int usable_links(const Gpu& gpu, const std::set<std::string>& group_bus_ids) {
  return static_cast<int>(std::ranges::count_if(gpu.nvlinks, [&group_bus_ids](const NvLink& l) {
    if (!is_usable_nvlink(l)) {
      return false;
    }
    return l.peer == NvLinkPeer::NvSwitch ||
           (l.peer == NvLinkPeer::Gpu && group_bus_ids.contains(normalize_bus_id(l.peer_bus_id)));
  }));
}

Bound nvlink_bound(const HostGroup& group, const std::vector<const GpuSpec*>& models) {
  std::set<std::string> bus_ids;
  for (const Gpu* gpu : group.gpus) {
    if (auto id = normalize_bus_id(gpu->bus_id); !id.empty()) {
      bus_ids.insert(std::move(id));
    }
  }
  Bound best = unknown("no GPU");
  for (std::size_t i = 0; i < group.gpus.size(); ++i) {
    const Gpu& gpu = *group.gpus[i];
    const GpuSpec& spec = *models[i];
    if (spec.nvlink_link_GBps <= 0.0) {
      return unknown(fmt::format("{} ({}): NVLink active but no NVLink figure in the spec database",
                                 gpu_label(gpu, group, false), spec.model));
    }
    const int links = usable_links(gpu, bus_ids);
    std::string basis = fmt::format("NVLink{} {} links x {:g} GB/s per direction, {}", spec.nvlink_version, links,
                                    spec.nvlink_link_GBps, spec.model);
    if (links < spec.nvlink_links) {
      basis += fmt::format(" ({}: {} of {} links usable)", gpu_label(gpu, group, false), links, spec.nvlink_links);
    }
    Bound candidate{links * spec.nvlink_link_GBps, std::move(basis)};
    best = (i == 0) ? std::move(candidate) : tighter(std::move(best), std::move(candidate));
  }
  return best;
}

/// PCIe per direction of one GPU's link as the GPU and its slot can train it (the max generation
/// and width). The peak is what the link should carry: a downtrained link then shows as a low
/// %peak. The current link is not used because GPUs lower the generation when idle, and
/// discovery runs before the load; the basis says when the link was seen below its max.
Bound gpu_pcie_bound(const SpecDatabase& specs, const Gpu& gpu, const std::string& label) {
  const PciLink& link = gpu.pcie;
  const int gen = link.gen_max > 0 ? link.gen_max : link.gen_current;
  const int width = link.width_max > 0 ? link.width_max : link.width_current;
  if (gen <= 0 || width <= 0) {
    return unknown(fmt::format("{}: PCIe link generation/width not known", label));
  }
  const auto spec = specs.pcie(gen, width);
  if (!spec) {
    return unknown(fmt::format("{}: no spec for PCIe Gen{} x{}", label, gen, width));
  }
  return {spec->GBps, fmt::format("{} {:g} GB/s per direction ({})", spec->name, spec->GBps, kPcieOverheadNote)};
}

/// "GPU2: Gen3 x16 at discovery, below its max" when the link was seen below what it can train.
std::string below_max_note(const Gpu& gpu, const std::string& label) {
  const PciLink& l = gpu.pcie;
  const bool below =
      (l.gen_current > 0 && l.gen_current < l.gen_max) || (l.width_current > 0 && l.width_current < l.width_max);
  return below ? fmt::format("{}: Gen{} x{} at discovery, below its max", label, l.gen_current, l.width_current)
               : std::string{};
}

Bound pcie_bound(const SpecDatabase& specs, const HostGroup& group) {
  Bound best = unknown("no GPU");
  const Gpu* slowest = nullptr;
  for (const Gpu* gpu : group.gpus) {
    Bound candidate = gpu_pcie_bound(specs, *gpu, gpu_label(*gpu, group, false));
    if (!candidate.GBps) {
      return candidate;
    }
    if (slowest == nullptr || *candidate.GBps < *best.GBps) {
      best = std::move(candidate);
      slowest = gpu;
    }
  }
  best.basis +=
      fmt::format("; no NVLink between every pair of the group, slowest GPU: {}", gpu_label(*slowest, group, false));
  std::string notes;
  for (const Gpu* gpu : group.gpus) {
    const std::string note = below_max_note(*gpu, gpu_label(*gpu, group, false));
    notes += note.empty() ? "" : (notes.empty() ? "" : "; ") + note;
  }
  if (!notes.empty()) {
    best.basis += " (" + notes + "; idle GPUs lower the generation, a downtrained link shows as low %peak)";
  }
  return best;
}

/// The spec of every GPU of the group, or the first one the database does not know.
Bound resolve_models(const SpecDatabase& specs, const HostGroup& group, bool with_host,
                     std::vector<const GpuSpec*>& models) {
  for (const Gpu* gpu : group.gpus) {
    const GpuSpec* spec = specs.find_gpu(gpu->name);
    if (spec == nullptr) {
      return unknown(fmt::format("{}: GPU model \"{}\" is not in the spec database", gpu_label(*gpu, group, with_host),
                                 gpu->name));
    }
    models.push_back(spec);
  }
  return {0.0, {}};
}

/// An active NVLink whose far end discovery could not name: the domain cannot be decided.
Bound check_nvlink_peers(const HostGroup& group, bool with_host) {
  for (const Gpu* gpu : group.gpus) {
    for (const NvLink& link : gpu->nvlinks) {
      const bool unnamed_gpu = link.peer == NvLinkPeer::Gpu && link.peer_bus_id.empty();
      if (link.active && (link.peer == NvLinkPeer::Unknown || unnamed_gpu)) {
        return unknown(fmt::format("{}: NVLink {} is active but its peer is not known",
                                   gpu_label(*gpu, group, with_host), link.index));
      }
    }
  }
  return {0.0, {}};
}

/// The bound among the GPUs of one host: NVLink inside a full NVLink/NVSwitch domain, else PCIe.
Bound intra_host_bound(const SpecDatabase& specs, const HostGroup& group, bool with_host) {
  std::vector<const GpuSpec*> models;
  if (Bound known = resolve_models(specs, group, with_host, models); !known.GBps) {
    return known;
  }
  if (Bound peers = check_nvlink_peers(group, with_host); !peers.GBps) {
    return peers;
  }
  return is_nvlink_domain(group.gpus) ? nvlink_bound(group, models) : pcie_bound(specs, group);
}

bool is_active(const Nic& nic) { return port_state(nic) == PortState::Active; }

/// The ports traffic can leave a host through: the active ones; of those only the RDMA devices
/// when there are any (NCCL's network transport and MPI's RDMA transports use those; plain
/// netdevs are then management ports).
std::vector<const Nic*> active_ports(const HostTopology& host) {
  std::vector<const Nic*> active;
  for (const Nic& nic : host.nics) {
    if (is_active(nic)) {
      active.push_back(&nic);
    }
  }
  if (std::ranges::any_of(active, [](const Nic* n) { return has_rdma_device(*n); })) {
    std::erase_if(active, [](const Nic* n) { return !has_rdma_device(*n); });
  }
  return active;
}

/// The NICs GPU traffic leaves a host through: of the active ports only the GPUs' rails when some
/// share a PCIe switch with a GPU (the others are storage ports).
std::vector<const Nic*> gpu_fabric_nics(const HostTopology& host) {
  auto ports = active_ports(host);
  if (std::ranges::any_of(ports, [&host](const Nic* n) { return near_a_gpu(*n, host); })) {
    std::erase_if(ports, [&host](const Nic* n) { return !near_a_gpu(*n, host); });
  }
  return ports;
}

/// The NICs host-memory traffic can use: the rails belong to the GPUs (NCCL drives them, and a
/// rail's PCIe switch sits between its GPU and the NIC), so only the other active ports count.
std::vector<const Nic*> host_memory_nics(const HostTopology& host) {
  auto ports = active_ports(host);
  std::erase_if(ports, [&host](const Nic* n) { return near_a_gpu(*n, host); });
  return ports;
}

std::optional<LinkSpec> nic_link(const SpecDatabase& specs, const Nic& nic) {
  if (auto rated = specs.nic(nic.rate_Gbps, nic.link_layer, nic.width)) {
    return rated;
  }
  if (lower(nic.link_layer) == "ethernet") {
    return LinkSpec{fmt::format("Ethernet {:g} Gb/s", nic.rate_Gbps), nic.rate_Gbps / 8.0, "port speed / 8"};
  }
  return std::nullopt;
}

/// The bandwidth of `nics` divided among the group's ranks on the host; `what` names them in the basis.
Bound nic_share_bound(const SpecDatabase& specs, const HostGroup& group, const std::vector<const Nic*>& nics,
                      const std::string& what) {
  if (nics.empty()) {
    return unknown(fmt::format("{}: no active NIC found", what));
  }
  double total = 0.0;
  std::map<std::string, std::pair<int, double>> kinds;  // link name -> (count, GB/s each)
  for (const Nic* nic : nics) {
    if (nic->rate_Gbps <= 0.0) {
      return unknown(fmt::format("NIC {} on {}: rate not known", nic->name, group.label));
    }
    const auto link = nic_link(specs, *nic);
    if (!link) {
      return unknown(fmt::format("NIC {} on {}: no rated {} port at {:g} Gb/s in the spec database", nic->name,
                                 group.label, nic->link_layer, nic->rate_Gbps));
    }
    total += link->GBps;
    auto& kind = kinds[link->name];
    kind = {kind.first + 1, link->GBps};
  }
  std::vector<std::string> parts;
  parts.reserve(kinds.size());
  for (const auto& [name, kind] : kinds) {
    parts.push_back(fmt::format("{} x {} ({:g} GB/s)", kind.first, name, kind.second));
  }
  const double share = total / group.ranks;
  return {share, fmt::format("{}: {} / {} rank{} = {:g} GB/s per direction per rank", what, fmt::join(parts, " + "),
                             group.ranks, group.ranks == 1 ? "" : "s", share)};
}

/// The bound on one host's ranks of a group that spans hosts.
Bound cross_host_bound(const SpecDatabase& specs, const HostGroup& group) {
  if (group.gpus.empty()) {
    const auto ports = host_memory_nics(*group.host);
    if (ports.empty() && !active_ports(*group.host).empty()) {
      return unknown(
          fmt::format("host memory on {}: every active port is a GPU's rail; which NICs MPI uses is "
                      "not known",
                      group.label));
    }
    return nic_share_bound(specs, group, ports,
                           fmt::format("NIC share on {} (ports that are no GPU's rail)", group.label));
  }
  const auto fabric = gpu_fabric_nics(*group.host);
  const bool lone_rank = group.ranks == 1 && group.gpus.size() == 1;
  Bound bound = lone_rank ? nic_share_bound(specs, group, rail_of(*group.gpus.front(), fabric),
                                            fmt::format("rail of {}", gpu_label(*group.gpus.front(), group, true)))
                          : nic_share_bound(specs, group, fabric, fmt::format("NIC share on {}", group.label));
  std::vector<const GpuSpec*> models;
  if (Bound known = resolve_models(specs, group, true, models); !known.GBps) {
    return known;
  }
  for (const Gpu* gpu : group.gpus) {
    Bound pcie = gpu_pcie_bound(specs, *gpu, gpu_label(*gpu, group, true));
    if (pcie.GBps) {
      pcie.basis += fmt::format(" ({}'s own PCIe link to the NICs)", gpu_label(*gpu, group, true));
    }
    bound = tighter(std::move(bound), std::move(pcie));
  }
  if (group.gpus.size() > 1) {
    bound = tighter(std::move(bound), intra_host_bound(specs, group, true));
  }
  return bound;
}

struct Grouping {
  std::vector<HostGroup> hosts;  // ordered by host index
  std::string error;             // non-empty when a rank is outside the topology
};

Grouping group_by_host(const std::vector<HostTopology>& hosts, const std::vector<RankPlace>& ranks) {
  std::map<int, HostGroup> by_host;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankPlace place = ranks[r];
    if (place.host < 0 || place.host >= static_cast<int>(hosts.size())) {
      return {{}, fmt::format("rank {}: host {} is not in the topology ({} hosts)", r, place.host, hosts.size())};
    }
    const HostTopology& host = hosts[static_cast<std::size_t>(place.host)];
    HostGroup& group = by_host[place.host];
    group.host = &host;
    group.label = host.hostname.empty() ? fmt::format("host {}", place.host) : host.hostname;
    ++group.ranks;
    if (place.gpu < 0) {
      group.host_memory = true;
      continue;
    }
    if (place.gpu >= static_cast<int>(host.gpus.size())) {
      return {{},
              fmt::format("rank {}: GPU {} is not in the topology of {} ({} GPUs)", r, place.gpu, group.label,
                          host.gpus.size())};
    }
    const Gpu* gpu = &host.gpus[static_cast<std::size_t>(place.gpu)];
    if (std::ranges::find(group.gpus, gpu) == group.gpus.end()) {
      group.gpus.push_back(gpu);
    }
  }
  Grouping out;
  for (auto& [index, group] : by_host) {
    out.hosts.push_back(std::move(group));
  }
  return out;
}

Bound single_host_bound(const SpecDatabase& specs, const HostGroup& group) {
  if (group.host_memory) {
    return unknown("host memory: no spec for shared-memory copies");
  }
  if (group.gpus.size() < 2) {
    return unknown("all ranks on one GPU: no link");
  }
  return intra_host_bound(specs, group, false);
}

}  // namespace

Peak expected_peak(const SpecDatabase& specs, const std::vector<HostTopology>& hosts,
                   const std::vector<RankPlace>& ranks) {
  if (ranks.size() < 2) {
    return {std::nullopt, "one rank: no link"};
  }
  Grouping grouping = group_by_host(hosts, ranks);
  if (!grouping.error.empty()) {
    return {std::nullopt, std::move(grouping.error)};
  }
  Bound bound;
  if (grouping.hosts.size() == 1) {
    bound = single_host_bound(specs, grouping.hosts.front());
  } else {
    bound = cross_host_bound(specs, grouping.hosts.front());
    for (std::size_t i = 1; i < grouping.hosts.size(); ++i) {
      bound = tighter(std::move(bound), cross_host_bound(specs, grouping.hosts[i]));
    }
  }
  return {bound.GBps, std::move(bound.basis)};
}

Peak gpu_pcie_peak(const SpecDatabase& specs, const Gpu& gpu, const std::string& label) {
  Bound b = gpu_pcie_bound(specs, gpu, label);
  if (const std::string note = below_max_note(gpu, label); b.GBps && !note.empty()) {
    b.basis += "; " + note;
  }
  return {b.GBps, std::move(b.basis)};
}

Peak rdma_pair_peak(const SpecDatabase& specs, const std::vector<RdmaEndpoint>& endpoints) {
  Peak peak;
  for (const auto& e : endpoints) {
    const auto spec = e.rate_Gbps ? specs.nic(*e.rate_Gbps, e.link_layer) : std::nullopt;
    if (!spec) {
      peak.GBps.reset();
      peak.basis =
          fmt::format("{} port {} on {}: {} is not a rated port in the spec database", e.device, e.port, e.host,
                      e.rate_Gbps ? fmt::format("{} {:g} Gb/s", e.link_layer, *e.rate_Gbps)
                                  : std::string{"its rate is unknown, which"});
      return peak;
    }
    if (!peak.GBps || spec->GBps < *peak.GBps) {
      peak.GBps = spec->GBps;
      peak.basis = fmt::format("{} ({} port {} on {})", spec->name, e.device, e.port, e.host);
    }
  }
  return peak;
}

}  // namespace ccbench::topo

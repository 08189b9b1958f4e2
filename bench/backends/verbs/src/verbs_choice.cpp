#include "ccbench/verbs/verbs_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ccbench/errors.hpp"

namespace ccbench::verbs {
namespace {

std::string names_of(const std::vector<DeviceView>& devices, int port) {
  std::string out;
  for (const auto& d : devices) {
    out += fmt::format("{}{} (port {} {})", out.empty() ? "" : ", ", d.name, port,
                       d.port_count < port ? "absent" : d.port_state);
  }
  return out;
}

std::string indices_of(const std::vector<GidView>& gids) {
  std::string out;
  for (const auto& g : gids) {
    out += fmt::format("{}{} ({} {})", out.empty() ? "" : ", ", g.index, g.type, g.text);
  }
  return out.empty() ? "none" : out;
}

bool ipv4_mapped(const std::string& text) { return text.starts_with("::ffff:") && text.find('.') != std::string::npos; }

}  // namespace

std::string choose_device(const std::vector<DeviceView>& devices, const std::string& wanted, int port) {
  if (devices.empty()) {
    throw UsageError(
        "no RDMA device here (ibv_get_device_list found none): load the HCA's driver, or add Soft-RoCE with "
        "'rdma link add rxe0 type rxe netdev IFACE'");
  }
  if (!wanted.empty()) {
    const auto it = std::ranges::find(devices, wanted, &DeviceView::name);
    if (it == devices.end()) {
      throw UsageError(
          fmt::format("--ib-dev {}: no such RDMA device (devices here: {})", wanted, names_of(devices, port)));
    }
    if (it->port_count < port) {
      throw UsageError(fmt::format("--ib-port {}: {} has port(s) 1..{}", port, wanted, it->port_count));
    }
    if (!it->port_active) {
      throw UsageError(fmt::format("port {} of {} is {}, not ACTIVE (check the cable/link: ibv_devinfo -d {})", port,
                                   wanted, it->port_state, wanted));
    }
    return wanted;
  }
  const auto it = std::ranges::find_if(devices, [](const DeviceView& d) { return d.port_active; });
  if (it == devices.end()) {
    throw UsageError(fmt::format("no RDMA device has port {} ACTIVE: {}", port, names_of(devices, port)));
  }
  return it->name;
}

std::optional<int> choose_gid(const std::vector<GidView>& gids, std::optional<int> wanted, bool ethernet,
                              int table_size, const std::string& device, int port) {
  if (wanted) {
    if (*wanted >= table_size) {
      throw UsageError(fmt::format("--gid-index {} is out of range: port {} of {} has GID indices 0..{} (valid: {})",
                                   *wanted, port, device, table_size - 1, indices_of(gids)));
    }
    if (std::ranges::find(gids, *wanted, &GidView::index) == gids.end()) {
      throw UsageError(fmt::format("--gid-index {}: that entry of {} port {} is empty (valid: {})", *wanted, device,
                                   port, indices_of(gids)));
    }
    return wanted;
  }
  if (!ethernet) {
    return std::nullopt;  // InfiniBand: the LID routes inside the subnet
  }
  const auto first = [&](auto pred) -> std::optional<int> {
    const auto it = std::ranges::find_if(gids, pred);
    return it == gids.end() ? std::nullopt : std::optional<int>(it->index);
  };
  if (auto v2_ipv4 = first([](const GidView& g) { return g.type == "RoCE v2" && ipv4_mapped(g.text); })) {
    return v2_ipv4;
  }
  if (auto v2 = first([](const GidView& g) { return g.type == "RoCE v2"; })) {
    return v2;
  }
  if (auto any = first([](const GidView&) { return true; })) {
    return any;
  }
  throw UsageError(
      fmt::format("port {} of {} is Ethernet (RoCE) but has no GID: give its interface an IP address", port, device));
}

std::optional<double> port_rate_gbps(int active_speed, int active_width) {
  double lane = 0.0;  // Gb/s per lane, as ibv_devinfo and sysfs' "rate" count them
  switch (active_speed) {
    case 1:
      lane = 2.5;  // SDR
      break;
    case 2:
      lane = 5.0;  // DDR
      break;
    case 4:
    case 8:
      lane = 10.0;  // QDR, FDR10
      break;
    case 16:
      lane = 14.0;  // FDR
      break;
    case 32:
      lane = 25.0;  // EDR
      break;
    case 64:
      lane = 50.0;  // HDR
      break;
    case 128:
      lane = 100.0;  // NDR
      break;
    case 256:
      lane = 200.0;  // XDR
      break;
    default:
      return std::nullopt;
  }
  int lanes = 0;
  switch (active_width) {
    case 1:
      lanes = 1;
      break;
    case 2:
      lanes = 4;
      break;
    case 4:
      lanes = 8;
      break;
    case 8:
      lanes = 12;
      break;
    case 16:
      lanes = 2;
      break;
    default:
      return std::nullopt;
  }
  return lane * lanes;
}

int mtu_bytes(int ibv_mtu) { return ibv_mtu >= 1 && ibv_mtu <= 5 ? 128 << ibv_mtu : 0; }

std::optional<int> ibv_mtu_of(int bytes) {
  for (int m = 1; m <= 5; ++m) {
    if (mtu_bytes(m) == bytes) {
      return m;
    }
  }
  return std::nullopt;
}

std::string to_text(const PeerInfo& p) {
  return nlohmann::json{{"ccbench_verbs", p.version},
                        {"settings", p.settings},
                        {"rank", p.rank},
                        {"host", p.host},
                        {"device", p.device},
                        {"port", p.port},
                        {"link_layer", p.link_layer},
                        {"gid_index", p.gid_index ? nlohmann::json(*p.gid_index) : nlohmann::json(nullptr)},
                        {"gid", p.gid},
                        {"gid_type", p.gid_type},
                        {"gid_raw", p.gid_raw},
                        {"lid", p.lid},
                        {"active_mtu", p.active_mtu},
                        {"rate_Gbps", p.rate_Gbps ? nlohmann::json(*p.rate_Gbps) : nlohmann::json(nullptr)},
                        {"qpns", p.qpns},
                        {"psn", p.psn},
                        {"addr", p.addr},
                        {"rkey", p.rkey},
                        {"bytes", p.bytes}}
      .dump();
}

PeerInfo peer_from_text(const std::string& text, const PeerInfo& mine) {
  PeerInfo p;
  try {
    const auto j = nlohmann::json::parse(text);
    p.version = j.at("ccbench_verbs").get<int>();
    if (p.version != kPeerInfoVersion) {
      throw UsageError(
          fmt::format("the peer speaks version {} of the queue pair exchange, this is version {}: "
                      "run the same ccbench on both sides",
                      p.version, kPeerInfoVersion));
    }
    p.settings = j.at("settings").get<std::string>();
    p.rank = j.at("rank").get<int>();
    p.host = j.at("host").get<std::string>();
    p.device = j.at("device").get<std::string>();
    p.port = j.at("port").get<int>();
    p.link_layer = j.at("link_layer").get<std::string>();
    if (!j.at("gid_index").is_null()) {
      p.gid_index = j.at("gid_index").get<int>();
    }
    p.gid = j.at("gid").get<std::string>();
    p.gid_type = j.at("gid_type").get<std::string>();
    p.gid_raw = j.at("gid_raw").get<std::vector<std::uint8_t>>();
    p.lid = j.at("lid").get<int>();
    p.active_mtu = j.at("active_mtu").get<int>();
    if (!j.at("rate_Gbps").is_null()) {
      p.rate_Gbps = j.at("rate_Gbps").get<double>();
    }
    p.qpns = j.at("qpns").get<std::vector<std::uint32_t>>();
    p.psn = j.at("psn").get<std::uint32_t>();
    p.addr = j.at("addr").get<std::uint64_t>();
    p.rkey = j.at("rkey").get<std::uint32_t>();
    p.bytes = j.at("bytes").get<std::uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("the peer's queue pair information is not ccbench's ({})", e.what()));
  }
  const std::string who = fmt::format("the peer (rank {} on {}, {})", p.rank, p.host, p.device);
  if (p.settings != mine.settings) {
    throw UsageError(
        fmt::format("{} was started with other flags: '{}' there, '{}' here", who, p.settings, mine.settings));
  }
  if (p.link_layer != mine.link_layer) {
    throw UsageError(
        fmt::format("{} is on {}, this side on {}: they cannot connect", who, p.link_layer, mine.link_layer));
  }
  if (mine.gid_index.has_value() != p.gid_index.has_value()) {
    throw UsageError(fmt::format("{} {} a GID and this side {}: give -x on both sides or on neither", who,
                                 p.gid_index ? "uses" : "does not use", mine.gid_index ? "does" : "does not"));
  }
  if (p.gid_index && p.gid_raw.size() != 16) {
    throw UsageError(fmt::format("{} sent a GID of {} bytes, not 16", who, p.gid_raw.size()));
  }
  if (p.qpns.size() != mine.qpns.size() || p.qpns.empty()) {
    throw UsageError(fmt::format("{} has {} queue pair(s), this side {}", who, p.qpns.size(), mine.qpns.size()));
  }
  if (p.bytes < mine.bytes || p.addr == 0) {
    throw UsageError(
        fmt::format("{} offers a buffer of {} bytes, this side writes up to {}", who, p.bytes, mine.bytes));
  }
  return p;
}

}  // namespace ccbench::verbs

#include "ccbench/report/devices.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "ccbench/topo/host_json.hpp"
#include "ccbench/topo/query.hpp"

namespace ccbench::report::detail {

namespace {

using nlohmann::json;

const json* member(const json& j, std::string_view key) {
  if (!j.is_object()) {
    return nullptr;
  }
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string text_of(const json* j) { return j != nullptr && j->is_string() ? j->get<std::string>() : std::string(); }

}  // namespace

const json* topology_host(const ResultDocument& doc, const std::string& hostname) {
  const json* hosts = member(doc.topology, "hosts");
  if (hosts == nullptr || !hosts->is_array()) {
    return nullptr;
  }
  const auto it = std::find_if(hosts->begin(), hosts->end(),
                               [&](const json& h) { return text_of(member(h, "hostname")) == hostname; });
  return it == hosts->end() ? nullptr : &*it;
}

namespace {

/// The NIC --bind auto would bind the rank on `gpu` to (topo::nearest_nic, the one function both ask), or ""
/// when the host's topology does not read as one or has no NIC.
std::string nearest_nic_name(const json& host, int gpu_index) {
  try {
    const topo::HostTopology topology = topo::host_topology_from_json(host);
    const auto gpu = std::ranges::find(topology.gpus, gpu_index, &topo::Gpu::index);
    const topo::Nic* nic = gpu != topology.gpus.end() ? topo::nearest_nic(topology, *gpu) : nullptr;
    return nic != nullptr ? nic->name : std::string();
  } catch (const topo::TopologyJsonError&) {
    return "";
  }
}

}  // namespace

std::string device_label(const json* host, int local_rank, bool with_nic) {
  const json* gpus = host != nullptr ? member(*host, "gpus") : nullptr;
  if (gpus == nullptr || !gpus->is_array()) {
    return "";
  }
  const auto it = std::find_if(gpus->begin(), gpus->end(), [&](const json& g) {
    const json* index = member(g, "index");
    return index != nullptr && index->is_number_integer() && index->get<std::int64_t>() == local_rank;
  });
  if (it == gpus->end()) {
    return "";
  }
  std::string label = fmt::format("GPU{} {}", local_rank, text_of(member(*it, "bus_id")));
  const std::string nic = with_nic ? nearest_nic_name(*host, local_rank) : std::string();
  return nic.empty() ? label : label + " NIC " + nic;
}

}  // namespace ccbench::report::detail

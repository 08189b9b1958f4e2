#include "topology_gather.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ccbench/result_json.hpp"
#include "ccbench/topo/discover.hpp"
#include "ccbench/topo/topology_json.hpp"

namespace ccbench {

std::vector<topo::HostTopology> gather_topology(Group& world, const std::vector<HostInfo>& hosts, int local_rank) {
  const std::string mine = local_rank == 0 ? json_text(topo::to_json(topo::discover_host())) : std::string{};
  const auto all = world.all_gather(mine);
  std::vector<topo::HostTopology> out;
  out.reserve(hosts.size());
  for (const auto& h : hosts) {  // a host's local rank 0 is its first (lowest) rank
    out.push_back(topo::host_topology_from_json(nlohmann::json::parse(all[static_cast<std::size_t>(h.ranks.front())])));
    out.back().hostname = h.hostname;  // the name MPI ranks see, so results and topology agree
  }
  return out;
}

std::vector<topo::RankPlace> gather_places(Group& world, const std::vector<HostInfo>& hosts,
                                           const std::vector<topo::HostTopology>& topology,
                                           const std::string& my_bus_id) {
  const auto bus_ids = world.all_gather(topo::normalize_bus_id(my_bus_id));
  std::vector<topo::RankPlace> places(bus_ids.size());
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    for (const int r : hosts[h].ranks) {
      auto& place = places[static_cast<std::size_t>(r)];
      place.host = static_cast<int>(h);
      const auto& gpus = topology[h].gpus;
      const auto& id = bus_ids[static_cast<std::size_t>(r)];
      const auto gpu = std::find_if(gpus.begin(), gpus.end(), [&](const topo::Gpu& g) {
        return !id.empty() && topo::normalize_bus_id(g.bus_id) == id;
      });
      place.gpu = gpu == gpus.end() ? -1 : static_cast<int>(gpu - gpus.begin());
    }
  }
  return places;
}

}  // namespace ccbench

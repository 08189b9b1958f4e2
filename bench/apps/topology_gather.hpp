#pragma once
// Topology for a run: one discovery per host (by its local rank 0), gathered on every rank, and
// where each rank runs (host and GPU), so world rank 0 can name each group's bottleneck.
#include <string>
#include <vector>

#include "ccbench/group.hpp"
#include "ccbench/host_info.hpp"
#include "ccbench/topo/peak.hpp"
#include "ccbench/topo/topology.hpp"

namespace ccbench {

/// Collective. One HostTopology per entry of `hosts`, in that order.
std::vector<topo::HostTopology> gather_topology(Group& world, const std::vector<HostInfo>& hosts, int local_rank);

/// Collective. Every world rank's host index and GPU index (by its device's PCI bus id; -1 for
/// host memory or a device discovery did not list).
std::vector<topo::RankPlace> gather_places(Group& world, const std::vector<HostInfo>& hosts,
                                           const std::vector<topo::HostTopology>& topology,
                                           const std::string& my_bus_id);

}  // namespace ccbench

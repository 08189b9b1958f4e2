#pragma once
// HostTopology <-> JSON (snake_case keys, unit suffixes: memory_bytes, rate_Gbps). Round trip is
// exact. Result files carry a list of these as {"topology": {"hosts": [...]}}.
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ccbench/topo/topology.hpp"

namespace ccbench::topo {

/// A topology document that does not have the expected shape; what() names the key.
class TopologyJsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

nlohmann::json to_json(const HostTopology& host);
/// Keys that are absent read as unknown (0 / -1 / empty), so older documents still load;
/// a key of the wrong type throws TopologyJsonError.
HostTopology host_topology_from_json(const nlohmann::json& j);

}  // namespace ccbench::topo

#pragma once
// Naming the devices of a rank from a result document's topology: the GPU of a local rank and the NIC
// --bind auto would pair with it. Shared by accept's and fleet's culprits.
#include <nlohmann/json.hpp>
#include <string>

#include "ccbench/result.hpp"

namespace ccbench::report::detail {

/// The topology entry of `hostname` in `doc` (topology.hosts[]), or nullptr.
const nlohmann::json* topology_host(const ResultDocument& doc, const std::string& hostname);

/// "GPU3 0000:1b:00.0[ NIC mlx5_3]" for the GPU a rank used (device = local rank), or "" when the
/// host's topology lists no such GPU.
std::string device_label(const nlohmann::json* host, int local_rank, bool with_nic);

}  // namespace ccbench::report::detail

#pragma once
// The human-readable report of ccbench-topo: host, CPUs and NUMA nodes, GPUs, NICs, the
// connection matrix with its legend, NUMA affinity per GPU, and the warnings.
#include <string>

#include "ccbench/topo/topology.hpp"

namespace ccbench::topo {

std::string format_report(const HostTopology& host);

}  // namespace ccbench::topo

#pragma once
// What ccbench-topo prints as JSON: a host's topology (host_json.hpp), its connection matrix and warnings.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "ccbench/topo/host_json.hpp"
#include "ccbench/topo/matrix.hpp"
#include "ccbench/topo/topology.hpp"

namespace ccbench::topo {

/// {"labels": ["GPU0", ..., "NIC0", ...], "rows": [["X", "NV18", ...], ...]}
nlohmann::json to_json(const Matrix& matrix);
/// [{"kind": "pcie_below_max", "device": "GPU1", "message": "..."}, ...]
nlohmann::json to_json(const std::vector<Warning>& found);

/// What `ccbench-topo --json` prints: {"topology": ..., "matrix": ..., "warnings": [...]}.
nlohmann::json host_report_json(const HostTopology& host);

}  // namespace ccbench::topo

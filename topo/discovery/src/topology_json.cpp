#include "ccbench/topo/topology_json.hpp"

using nlohmann::json;

namespace ccbench::topo {

json to_json(const Matrix& matrix) { return {{"labels", matrix.labels}, {"rows", matrix.cells}}; }

json to_json(const std::vector<Warning>& found) {
  json out = json::array();
  for (const auto& w : found) {
    out.push_back({{"kind", to_string(w.kind)}, {"device", label(w.device)}, {"message", w.message}});
  }
  return out;
}

json host_report_json(const HostTopology& host) {
  return {
      {"topology", to_json(host)}, {"matrix", to_json(connection_matrix(host))}, {"warnings", to_json(warnings(host))}};
}

}  // namespace ccbench::topo

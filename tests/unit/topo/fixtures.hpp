#pragma once
// Loads the HostTopology fixtures of tests/data/topo (see its README.md for their sources).
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "ccbench/topo/topology_json.hpp"

namespace ccbench::topo::test {

inline nlohmann::json fixture_json(const std::string& file) {
  const std::string path = std::string{CCBENCH_TOPO_DATA_DIR} + "/" + file;
  std::ifstream in{path};
  if (!in) {
    throw std::runtime_error("cannot open fixture " + path);
  }
  return nlohmann::json::parse(in);
}

inline HostTopology fixture(const std::string& file) { return host_topology_from_json(fixture_json(file)); }

// DGX H100: NVIDIA DGX H100/H200 User Guide (network ports), vllm-project/vllm#6746 (topo -m).
inline HostTopology dgx_h100() { return fixture("dgx_h100.json"); }
// 8x H800: NVIDIA/nccl#933 (topo -m, NV8), NVIDIA/nccl#892 (bus ids).
inline HostTopology h800() { return fixture("h800_nvlink8.json"); }
// 4x A100 PCIe, layout of lattice/quda#669, GPU1 at x8.
inline HostTopology pcie_4gpu() { return fixture("pcie_4gpu.json"); }

}  // namespace ccbench::topo::test

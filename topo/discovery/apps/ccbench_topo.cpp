// ccbench-topo: what this host is made of (CPUs, NUMA, GPUs, NICs), how GPUs and NICs connect
// (nvidia-smi topo -m vocabulary), and what an operator should fix. Exit 0 also without a GPU.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>

#include "ccbench/result_json.hpp"
#include "ccbench/topo/discover.hpp"
#include "ccbench/topo/fabric_read.hpp"
#include "ccbench/topo/topo_report.hpp"
#include "ccbench/topo/topology_json.hpp"
#include "ccbench/version.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

/// "ok", "BELOW" (trained below its capability) or "DOWN" (an RDMA port that is not ACTIVE).
std::string state_word(const ccbench::LinkState& l) {
  if (l.kind == "rdma_port" && l.state.find("ACTIVE") == std::string::npos) {
    return "DOWN";
  }
  return l.below ? "BELOW" : "ok";
}

/// --links: every link's trained state against its capability, one line each; exit 1 when one trained low or an
/// RDMA port is not active.
/// `unsupported`: the NVLink error counters NVML does not support here, per GPU (said in the text only).
int print_links(const std::vector<ccbench::LinkState>& links, const std::vector<std::string>& unsupported,
                bool as_json) {
  const bool low = std::any_of(links.begin(), links.end(), [](const auto& l) { return l.below; });
  if (as_json) {
    ccbench::HostFabric h;
    h.links = links;
    fmt::print("{}\n", ccbench::fabric_to_json(h).at("links").dump(2));
    return low ? kExitFailure : kExitOk;
  }
  fmt::print("{:<6} {:<16} {:<5} {:<24} {:<24} {:<10} {}\n", "", "link", "role", "trained", "capable", "state",
             "firmware / AER");
  for (const auto& l : links) {
    std::string extra = l.firmware;
    for (const auto& [name, count] : l.aer) {
      extra += fmt::format("{}{} {}", extra.empty() ? "" : ", ", name, count);
    }
    fmt::print("{:<6} {:<16} {:<5} {:<24} {:<24} {:<10} {}\n", state_word(l), l.device, l.role, l.current,
               l.capable.empty() ? "-" : l.capable, l.state.empty() ? "-" : l.state, extra);
  }
  if (links.empty()) {
    fmt::print("no RDMA port and no PCIe link of a NIC or an NVIDIA GPU in sysfs\n");
  }
  fmt::print(
      "{} link(s), {} below capability or down (a GPU lowers its PCIe speed when idle: only its width is judged)\n",
      links.size(), std::count_if(links.begin(), links.end(), [](const auto& l) { return l.below; }));
  if (!unsupported.empty()) {  // beside nvidia-smi nvlink -e: what neither of them can count here
    fmt::print("NVLink error counters NVML does not support here: {}\n", fmt::join(unsupported, "; "));
  }
  return low ? kExitFailure : kExitOk;
}

int run(int argc, char** argv) {
  CLI::App app{"ccbench-topo: CPUs, NUMA nodes, GPUs, NICs and how they connect (nvidia-smi topo -m vocabulary)",
               "ccbench-topo"};
  bool as_json = false;
  std::string hwloc_xml;
  app.add_flag("--json", as_json, "print the topology, the connection matrix and the warnings as JSON");
  app.add_option("--hwloc-xml", hwloc_xml, "read CPUs and the PCI tree from this hwloc XML export (lstopo --of xml)");
  bool links = false;
  std::string sysfs_root = "/sys";
  app.add_flag("--links", links,
               "the trained state of every RDMA port, every NIC's and NVIDIA GPU's PCIe link and every GPU's "
               "NVLinks against their capability (exit 1 when one trained low)");
  app.add_option("--sysfs-root", sysfs_root,
                 "read sysfs here (--links), e.g. a copy of another host's (NVLinks are then not asked of NVML)")
      ->capture_default_str();
  app.set_version_flag("--version", std::string{ccbench::version_string()});
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    fmt::print("{}", ccbench::version_text("ccbench-topo", ccbench::topo::library_lines()));
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "ccbench-topo: error: {} (see --help)\n", e.what());
    return kExitUsage;
  }
  if (links) {
    // A root that holds none of what --links reads (a missing path, a file, the folder above sys/) is no host
    // with no links: nothing was read, and that is bad input.
    std::error_code ec;
    if (!std::filesystem::is_directory(sysfs_root, ec)) {
      fmt::print(stderr, "ccbench-topo: error: --sysfs-root {}: not a folder (give a sysfs, or a copy of one)\n",
                 sysfs_root);
      return kExitUsage;
    }
    const std::filesystem::path root(sysfs_root);
    if (!std::filesystem::is_directory(root / "class/net", ec) &&
        !std::filesystem::is_directory(root / "class/infiniband", ec) &&
        !std::filesystem::is_directory(root / "bus/pci/devices", ec)) {
      fmt::print(stderr,
                 "ccbench-topo: error: --sysfs-root {}: nothing to read there (no class/net, class/infiniband or "
                 "bus/pci/devices: give the sys folder itself{})\n",
                 sysfs_root,
                 std::filesystem::is_directory(root / "sys/class", ec) ? fmt::format(", {}/sys", sysfs_root) : "");
      return kExitUsage;
    }
    // NVML answers for this host only: not beside another host's sysfs.
    const std::string nvml = sysfs_root == "/sys" ? "libnvidia-ml.so.1" : "";
    const auto unsupported =
        nvml.empty() ? std::vector<std::string>{} : ccbench::topo::query_nvlink_errors(nvml).unsupported;
    return print_links(ccbench::topo::read_links({sysfs_root, "/proc", false, nvml}), unsupported, as_json);
  }
  ccbench::topo::DiscoveryInputs inputs;
  if (!hwloc_xml.empty()) {
    inputs.hwloc_xml = hwloc_xml;
  }
  ccbench::topo::HostTopology host;
  try {
    host = ccbench::topo::discover_host(inputs);
  } catch (const ccbench::topo::DiscoveryError& e) {
    fmt::print(stderr, "ccbench-topo: error: {}\n", e.what());
    return kExitUsage;
  }
  if (as_json) {
    fmt::print("{}\n", ccbench::topo::host_report_json(host).dump(2));
  } else {
    fmt::print("{}", ccbench::topo::format_report(host));
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "ccbench-topo: error: {}\n", e.what());
    return kExitFailure;
  }
}

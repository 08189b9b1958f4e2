// ccbench-topo: what this host is made of (CPUs, NUMA, GPUs, NICs), how GPUs and NICs connect
// (nvidia-smi topo -m vocabulary), and what an operator should fix. Exit 0 also without a GPU.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "ccbench/topo/discover.hpp"
#include "ccbench/topo/topo_report.hpp"
#include "ccbench/topo/topology_json.hpp"
#include "ccbench/version.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int run(int argc, char** argv) {
  CLI::App app{"ccbench-topo: CPUs, NUMA nodes, GPUs, NICs and how they connect (nvidia-smi topo -m vocabulary)",
               "ccbench-topo"};
  bool as_json = false;
  std::string hwloc_xml;
  app.add_flag("--json", as_json, "print the topology, the connection matrix and the warnings as JSON");
  app.add_option("--hwloc-xml", hwloc_xml, "read CPUs and the PCI tree from this hwloc XML export (lstopo --of xml)");
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

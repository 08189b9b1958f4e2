#pragma once
// Reading the fabric's own evidence on this host (issue 26): every counter of its RDMA ports, network devices
// and TCP, and the trained state of its links. One reader per source, outside any timed window; the trees
// are read under roots that tests replace with fake ones (captured from real machines).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ccbench/fabric.hpp"
#include "ccbench/topo/topology.hpp"

namespace ccbench::topo {

struct FabricRoots {
  std::filesystem::path sys = "/sys";
  std::filesystem::path proc = "/proc";
  bool ethtool = true;  // ask the kernel's ethtool interface (the live host only)
  // NVML (dlopen'ed) for NVLink's state and error counters; empty: none (trees captured from other hosts)
  std::string nvml_library = "libnvidia-ml.so.1";
};

/// Every counter this host (its network namespace) shows: RDMA ports' counters/ and hw_counters/, network
/// devices' statistics/ and carrier_changes, TCP's (/proc/net/snmp Tcp, /proc/net/netstat TcpExt), each
/// network device's ethtool statistics, and NVLink's error counters where NVML answers. What cannot be read is
/// a problem line, never an exception.
CounterSnapshot read_counters(const FabricRoots& roots = {});

/// The links of this host and their trained state: each RDMA port's rate and state (its capability: the
/// best rate of the ports of the same HCA model and link layer here), firmware, and the PCIe links of its
/// NICs and NVIDIA GPUs (current against max speed and width, AER totals), and each GPU's NVLinks where NVML
/// answers (its active links against the most any GPU of its name has active here). A GPU lowers its link
/// speed when idle, so only its PCIe width is judged.
std::vector<LinkState> read_links(const FabricRoots& roots = {});

/// The PCIe link of one PCI device directory (current against max speed and width, AER totals); unset where the
/// device has no link files (not PCIe). `role` "gpu": only the width is judged (GPUs lower their speed when idle).
std::optional<LinkState> read_pcie_link(const std::filesystem::path& pci_dir, const std::string& role);

/// Each GPU's NVLinks as one link state (kind "nvlink", "17 of 18 active"): its active links against the most that a
/// GPU of the same name has active on this host (an 8-GPU NVSwitch board: 18 each on H100), the inactive ones named.
std::vector<LinkState> nvlink_states(const std::vector<Gpu>& gpus);

/// `ethtool -S DEV`'s text ("NIC statistics:" then "     name: value" lines), for captured output.
std::vector<std::pair<std::string, std::uint64_t>> parse_ethtool_text(std::string_view text);

/// The fields of `table` ("Tcp", "TcpExt") in /proc/net/snmp or /proc/net/netstat text: a line of names and
/// a line of values, both starting "TABLE:". Negative values (Tcp's MaxConn -1) are left out.
std::vector<std::pair<std::string, std::uint64_t>> parse_snmp_table(std::string_view text, std::string_view table);

/// A PCIe link speed as sysfs writes it ("32.0 GT/s PCIe", "8 GT/s", "2.5 GT/s PCIe"), in GT/s; 0 when unknown.
double parse_link_speed(std::string_view text);

}  // namespace ccbench::topo

#pragma once
// Topology discovery on this host: CPUs and NUMA nodes (hwloc, or sysfs when built without it),
// NICs (sysfs: RDMA ports and physical netdevs), GPUs and NVLinks (NVML, loaded at run time with
// dlopen; no CUDA or NVML headers at build time). Missing pieces are reported, never errors.
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ccbench/fabric.hpp"
#include "ccbench/topo/topology.hpp"
#include "ccbench/version.hpp"

namespace ccbench::topo {

/// --version's lines for ccbench-topo: hwloc loaded and built against; NVML is loaded at run time.
LibraryLines library_lines();

/// What a GPU source found: the GPUs (NUMA node and pci_path may be left unknown; discovery
/// fills them from the platform) and one line on how they were (not) found, e.g.
/// "NVML, driver 560.35.03, 8 GPUs" or "no GPU found: <reason>".
struct GpuInventory {
  std::vector<Gpu> gpus;
  std::string discovery;
};

/// Supplies the GPUs; the default asks NVML. Tests pass a recorded inventory.
using GpuProvider = std::function<GpuInventory()>;

/// Where discovery looks. The defaults describe the machine it runs on.
struct DiscoveryInputs {
  std::filesystem::path sysfs_root = "/sys";
  std::filesystem::path procfs_root = "/proc";
  bool use_hwloc = true;                           // false: sysfs only (also when built without hwloc)
  std::optional<std::filesystem::path> hwloc_xml;  // load this hwloc XML export instead of the live machine
  std::string nvml_library = "libnvidia-ml.so.1";
  GpuProvider gpu_provider;             // empty: query_nvml(nvml_library)
  std::optional<std::string> hostname;  // empty: gethostname()
};

/// An input the caller asked for explicitly cannot be used (an unreadable hwloc XML, or hwloc_xml
/// in a build without hwloc). Missing hardware or drivers are never errors.
class DiscoveryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The topology of the machine this runs on. Never throws for missing hardware or drivers;
/// throws DiscoveryError when inputs.hwloc_xml cannot be loaded.
HostTopology discover_host();
HostTopology discover_host(const DiscoveryInputs& inputs);

/// Asks NVML (dlopen of `library`) for the GPUs and their PCIe and NVLink state. Never throws:
/// an absent library gives no GPUs and
/// "no GPU found: libnvidia-ml.so.1 not available (no NVIDIA driver)".
GpuInventory query_nvml(const std::string& library = "libnvidia-ml.so.1");

/// NVML's NVLink error counters of every active link of every GPU.
struct NvLinkErrors {
  /// Every counter NVML answers for (nvmlDeviceGetNvLinkErrorCounter: replay, recovery, crc_flit, crc_data,
  /// ecc_data), as readings of source "nvlink", device "GPU<i> NVLink <l>".
  std::vector<CounterReading> readings;
  /// The counters NVML does not support, per GPU: "GPU0: crc_data (18 links)" (Hopper counts ECC, not CRC, data
  /// errors).
  std::vector<std::string> unsupported;
};
/// Empty without a driver, or where the driver does not answer for a link (Blackwell's NVML answers through
/// field values only).
NvLinkErrors query_nvlink_errors(const std::string& library = "libnvidia-ml.so.1");

/// True when the library was built with hwloc (CCBENCH_HAVE_HWLOC).
bool hwloc_available();

// normalize_bus_id: see ccbench/topo/topology.hpp

}  // namespace ccbench::topo

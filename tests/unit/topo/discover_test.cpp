// Discovery against a fake sysfs tree made in a temporary directory (one InfiniBand port, one
// Ethernet netdev, two NUMA nodes), with no NVML; and against a hand-written hwloc XML.
#include "ccbench/topo/discover.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "ccbench/topo/matrix.hpp"
#include "ccbench/topo/topology_json.hpp"

namespace fs = std::filesystem;

namespace ccbench::topo {
namespace {

constexpr const char* kNoNvml = "libccbench-test-no-such-nvml.so.1";

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream{file} << text << "\n";
}

void link(const fs::path& target, const fs::path& at) {
  fs::create_directories(at.parent_path());
  fs::create_directory_symlink(target, at);
}

/// A sysfs tree like a two-socket host with one ConnectX port (mlx5_0 / ib0) and one virtio NIC.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    m_root = fs::temp_directory_path() /
             ("ccbench-topo-test-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    const auto sys = m_root / "sys";
    const auto ib_pci = sys / "devices/pci0000:15/0000:15:01.0/0000:18:00.0";
    write(ib_pci / "numa_node", "1");
    write(ib_pci / "net/ib0/dev_port", "0");
    link(ib_pci, sys / "bus/pci/devices/0000:18:00.0");
    const auto port = sys / "class/infiniband/mlx5_0/ports/1";
    write(port / "rate", "400 Gb/sec (4X NDR)");
    write(port / "state", "4: ACTIVE");
    write(port / "link_layer", "InfiniBand");
    link(ib_pci, sys / "class/infiniband/mlx5_0/device");
    write(sys / "class/net/ib0/type", "32");
    link(ib_pci, sys / "class/net/ib0/device");  // the IPoIB netdev of mlx5_0: not listed twice

    const auto eth_pci = sys / "devices/pci0000:00/0000:00:03.0";
    write(eth_pci / "numa_node", "-1");
    fs::create_directories(eth_pci / "virtio2");
    link(eth_pci, sys / "bus/pci/devices/0000:00:03.0");
    link(eth_pci / "virtio2", sys / "class/net/eth0/device");
    write(sys / "class/net/eth0/speed", "25000");
    write(sys / "class/net/eth0/operstate", "up");
    write(sys / "class/net/eth0/type", "1");
    write(sys / "class/net/lo/operstate", "unknown");  // virtual: no device link

    for (int node = 0; node < 2; ++node) {
      const auto dir = sys / "devices/system/node" / ("node" + std::to_string(node));
      write(dir / "cpulist", node == 0 ? "0-3" : "4-7");
      write(dir / "meminfo", "Node " + std::to_string(node) + " MemTotal:       1048576 kB");
    }
    for (int cpu = 0; cpu < 8; ++cpu) {
      write(sys / "devices/system/cpu" / ("cpu" + std::to_string(cpu)) / "topology/physical_package_id",
            cpu < 4 ? "0" : "1");
    }
    write(m_root / "proc/cpuinfo", "processor\t: 0\nmodel name\t: Fake CPU 1234\n");
  }
  void TearDown() override { fs::remove_all(m_root); }

  [[nodiscard]] DiscoveryInputs inputs() const {
    DiscoveryInputs in;
    in.sysfs_root = m_root / "sys";
    in.procfs_root = m_root / "proc";
    in.use_hwloc = false;
    in.nvml_library = kNoNvml;
    in.hostname = "fake-host";
    return in;
  }
  [[nodiscard]] const fs::path& root() const { return m_root; }

 private:
  fs::path m_root;
};

TEST_F(FakeSysfs, NoNvmlMeansNoGpusAndSaysWhy) {
  const auto host = discover_host(inputs());
  EXPECT_TRUE(host.gpus.empty());
  EXPECT_EQ(host.gpu_discovery, std::string{"no GPU found: "} + kNoNvml + " not available (no NVIDIA driver)");
  EXPECT_EQ(host.hostname, "fake-host");
}

TEST_F(FakeSysfs, NicsParsedWithRateStateAndLinkLayer) {
  const auto host = discover_host(inputs());
  ASSERT_EQ(host.nics.size(), 2U);
  const auto& ib = host.nics[0];
  EXPECT_EQ(ib.name, "mlx5_0");
  EXPECT_EQ(ib.netdev, "ib0");
  EXPECT_EQ(ib.bus_id, "0000:18:00.0");
  EXPECT_EQ(ib.rate_Gbps, 400.0);
  EXPECT_EQ(ib.state, "ACTIVE");
  EXPECT_EQ(ib.link_layer, "InfiniBand");
  EXPECT_EQ(ib.numa_node, 1);
  EXPECT_EQ(ib.pci_path, (std::vector<std::string>{"0000:15:01.0"}));
  const auto& eth = host.nics[1];
  EXPECT_EQ(eth.name, "eth0");
  EXPECT_EQ(eth.netdev, "eth0");
  EXPECT_EQ(eth.bus_id, "0000:00:03.0");
  EXPECT_EQ(eth.rate_Gbps, 25.0);
  EXPECT_EQ(eth.state, "up");
  EXPECT_EQ(eth.link_layer, "Ethernet");
  EXPECT_EQ(eth.numa_node, -1);  // sysfs says -1 and there are two nodes: unknown, not guessed
  EXPECT_TRUE(eth.pci_path.empty());
}

// The rate alone cannot tell HDR100 (2 HDR lanes) from EDR (4 EDR lanes): the width is kept.
TEST_F(FakeSysfs, InfinibandWidthIsReadFromTheRate) {
  EXPECT_EQ(to_json(discover_host(inputs())).at("nics").at(0).value("width", 0), 4);  // "400 Gb/sec (4X NDR)"
  write(root() / "sys/class/infiniband/mlx5_0/ports/1/rate", "100 Gb/sec (2X HDR)");
  const auto nic = to_json(discover_host(inputs())).at("nics").at(0);
  EXPECT_EQ(nic.at("rate_Gbps"), 100.0);
  EXPECT_EQ(nic.value("width", 0), 2) << nic.dump();
  EXPECT_FALSE(to_json(discover_host(inputs())).at("nics").at(1).contains("width"));  // Ethernet: none
}

TEST_F(FakeSysfs, SoftRoceTakesItsNetdevsPlace) {
  const auto port = root() / "sys/class/infiniband/rxe0/ports/1";
  write(port / "rate", "10 Gb/sec (4X QDR)");
  write(port / "state", "1: DOWN");
  write(port / "link_layer", "Ethernet");
  write(port / "gid_attrs/ndevs/0", "eth0");
  const auto host = discover_host(inputs());
  ASSERT_EQ(host.nics.size(), 2U);  // mlx5_0 and rxe0; eth0 is rxe0's netdev
  const auto& rxe = host.nics[1];
  EXPECT_EQ(rxe.name, "rxe0");
  EXPECT_EQ(rxe.netdev, "eth0");
  EXPECT_EQ(rxe.bus_id, "0000:00:03.0");
  EXPECT_EQ(rxe.state, "DOWN");
  EXPECT_EQ(rxe.link_layer, "Ethernet");
  const auto found = warnings(host);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].message, "NIC1 (rxe0, 0000:00:03.0): port state DOWN, not active");
}

TEST_F(FakeSysfs, NumaNodesSocketsAndCpuModelFromSysfs) {
  const auto host = discover_host(inputs());
  EXPECT_EQ(host.cpu_model, "Fake CPU 1234");
  EXPECT_EQ(host.sockets, 2);
  ASSERT_EQ(host.numa_nodes.size(), 2U);
  EXPECT_EQ(host.numa_nodes[1].index, 1);
  EXPECT_EQ(host.numa_nodes[1].cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(host.numa_nodes[1].memory_bytes, 1024ULL * 1024 * 1024);
  EXPECT_EQ(host.numa_nodes[1].socket, 1);
}

TEST_F(FakeSysfs, RecordedGpusArePlacedFromSysfs) {
  auto in = inputs();
  const auto gpu_pci = root() / "sys/devices/pci0000:15/0000:15:02.0/0000:19:00.0";
  write(gpu_pci / "numa_node", "1");
  link(gpu_pci, root() / "sys/bus/pci/devices/0000:19:00.0");
  in.gpu_provider = [] {
    Gpu g;
    g.name = "NVIDIA H100 80GB HBM3";
    g.bus_id = "0000:19:00.0";
    return GpuInventory{{g}, "recorded"};
  };
  const auto host = discover_host(in);
  ASSERT_EQ(host.gpus.size(), 1U);
  EXPECT_EQ(host.gpu_discovery, "recorded");
  EXPECT_EQ(host.gpus[0].numa_node, 1);
  EXPECT_EQ(host.gpus[0].pci_path, (std::vector<std::string>{"0000:15:02.0"}));
  EXPECT_EQ(connection(host, gpu_ref(0), nic_ref(0)), "PHB");   // two root ports of host bridge 0000:15
  EXPECT_EQ(connection(host, gpu_ref(0), nic_ref(1)), "NODE");  // eth0's NUMA node is unknown
}

TEST_F(FakeSysfs, HwlocXmlGivesNumaAndPciTree) {
  if (!hwloc_available()) {
    GTEST_SKIP() << "built without hwloc";
  }
  // Flatten the sysfs side so that the PCI path can only come from hwloc.
  const auto sys = root() / "sys";
  fs::remove(sys / "class/infiniband/mlx5_0/device");
  fs::remove(sys / "bus/pci/devices/0000:18:00.0");
  write(sys / "devices/pci0000:18/0000:18:00.0/numa_node", "-1");
  link(sys / "devices/pci0000:18/0000:18:00.0", sys / "class/infiniband/mlx5_0/device");
  link(sys / "devices/pci0000:18/0000:18:00.0", sys / "bus/pci/devices/0000:18:00.0");
  auto in = inputs();
  in.use_hwloc = true;
  in.hwloc_xml = fs::path{CCBENCH_TOPO_DATA_DIR} / "hwloc_two_socket.xml";
  in.gpu_provider = [] {
    Gpu g;
    g.bus_id = "0000:1b:00.0";
    return GpuInventory{{g}, "recorded"};
  };
  const auto host = discover_host(in);
  EXPECT_EQ(host.cpu_model, "Test CPU 9000");
  EXPECT_EQ(host.sockets, 2);
  ASSERT_EQ(host.numa_nodes.size(), 2U);
  EXPECT_EQ(host.numa_nodes[1].cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(host.numa_nodes[1].memory_bytes, 17179869184ULL);
  EXPECT_EQ(host.numa_nodes[1].socket, 1);
  ASSERT_EQ(host.gpus.size(), 1U);
  EXPECT_EQ(host.gpus[0].numa_node, 0);
  EXPECT_EQ(host.gpus[0].pci_path,
            (std::vector<std::string>{"0000:15:01.0", "0000:16:00.0", "0000:17:01.0", "0000:19:00.0", "0000:1a:00.0"}));
  EXPECT_EQ(host.nics[0].numa_node, 0);
  EXPECT_EQ(host.nics[0].pci_path, (std::vector<std::string>{"0000:15:01.0", "0000:16:00.0", "0000:17:00.0"}));
  EXPECT_EQ(connection(host, gpu_ref(0), nic_ref(0)), "PXB");
}

TEST_F(FakeSysfs, UnreadableHwlocXmlIsAnError) {
  auto in = inputs();
  in.hwloc_xml = root() / "no-such-topology.xml";
  EXPECT_THROW((void)discover_host(in), DiscoveryError);
}

TEST(QueryNvml, AbsentLibraryIsNotAnError) {
  const auto inventory = query_nvml(kNoNvml);
  EXPECT_TRUE(inventory.gpus.empty());
  EXPECT_EQ(inventory.discovery, std::string{"no GPU found: "} + kNoNvml + " not available (no NVIDIA driver)");
}

TEST(QueryNvml, ReadsGpusLinksAndPcieThroughTheNvmlAbi) {
  const auto inventory = query_nvml(CCBENCH_FAKE_NVML);  // tests/unit/topo/fake_nvml.cpp
  EXPECT_EQ(inventory.discovery, "NVML, driver 550.54.15, 2 GPUs");
  ASSERT_EQ(inventory.gpus.size(), 2U);
  const auto& g1 = inventory.gpus[1];
  EXPECT_EQ(g1.index, 1);
  EXPECT_EQ(g1.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g1.bus_id, "0000:43:00.0");
  EXPECT_EQ(g1.memory_bytes, 85520809984ULL);
  EXPECT_EQ(g1.pcie.gen_current, 4);
  EXPECT_EQ(g1.pcie.gen_max, 5);
  EXPECT_EQ(g1.pcie.width_current, 16);
  ASSERT_EQ(g1.nvlinks.size(), 18U);
  EXPECT_FALSE(g1.nvlinks[3].active);
  EXPECT_EQ(g1.nvlinks[4].version, 4);  // raw 7 on Hopper read as NVLink4
  EXPECT_EQ(g1.nvlinks[4].peer, NvLinkPeer::NvSwitch);
  EXPECT_EQ(g1.nvlinks[4].peer_bus_id, "0000:05:00.0");

  HostTopology host;
  host.gpus = inventory.gpus;
  EXPECT_EQ(connection(host, gpu_ref(0), gpu_ref(1)), "NV17");
  const auto found = warnings(host);
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[0].kind, WarningKind::PcieBelowMax);
  EXPECT_EQ(found[1].kind, WarningKind::NvLinkDown);
  EXPECT_EQ(found[1].device, gpu_ref(1));
}

TEST(QueryNvml, RealMachineNeverThrows) {
  const auto inventory = query_nvml();
  if (inventory.gpus.empty()) {
    EXPECT_TRUE(inventory.discovery.starts_with("no GPU found: ")) << inventory.discovery;
  } else {
    EXPECT_TRUE(inventory.discovery.starts_with("NVML")) << inventory.discovery;
    for (const auto& gpu : inventory.gpus) {
      EXPECT_EQ(normalize_bus_id(gpu.bus_id), gpu.bus_id);
    }
  }
}

TEST(DiscoverHost, ThisMachine) {
  const auto host = discover_host();
  EXPECT_FALSE(host.hostname.empty());
  EXPECT_FALSE(host.numa_nodes.empty());
  EXPECT_FALSE(host.gpu_discovery.empty());
  for (const auto& nic : host.nics) {
    EXPECT_FALSE(nic.name.empty());
  }
}

TEST(NormalizeBusId, AcceptsNvmlAndSysfsSpellings) {
  EXPECT_EQ(normalize_bus_id("00000000:1B:00.0"), "0000:1b:00.0");
  EXPECT_EQ(normalize_bus_id("0000:1b:00.0"), "0000:1b:00.0");
  EXPECT_EQ(normalize_bus_id("1b:00.1"), "0000:1b:00.1");
  EXPECT_EQ(normalize_bus_id("0001:C3:00.0"), "0001:c3:00.0");
  EXPECT_EQ(normalize_bus_id("pci0000:15"), "");
  EXPECT_EQ(normalize_bus_id("virtio2"), "");
  EXPECT_EQ(normalize_bus_id("0000:1b:00"), "");
  EXPECT_EQ(normalize_bus_id("10000:1b:00.0"), "");
}

}  // namespace
}  // namespace ccbench::topo

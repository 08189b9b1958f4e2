// The fabric readers and the arithmetic of deltas: on counter trees captured from real hosts
// (tests/data/fabric/README.md), and on small trees written here for what no capture shows (a counter
// that vanishes, goes back, saturates, or cannot be read; links trained low).
#include "ccbench/topo/fabric_read.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "ccbench/result_json.hpp"
#include "ccbench/topo/discover.hpp"

namespace ccbench::topo {
namespace {

namespace fs = std::filesystem;

fs::path fabric_data() { return {CCBENCH_FABRIC_DATA_DIR}; }

FabricRoots captured(const std::string& name) {
  return FabricRoots{fabric_data() / name / "sys", fabric_data() / name / "proc", false, ""};
}

const CounterReading* find(const CounterSnapshot& s, std::string_view source, std::string_view device,
                           std::string_view name) {
  const auto it = std::find_if(s.readings.begin(), s.readings.end(), [&](const CounterReading& r) {
    return r.source == source && r.device == device && r.name == name;
  });
  return it == s.readings.end() ? nullptr : &*it;
}

const CounterDelta* moved(const HostFabric& h, std::string_view device, std::string_view name) {
  const auto it = std::find_if(h.moved.begin(), h.moved.end(),
                               [&](const CounterDelta& d) { return d.device == device && d.name == name; });
  return it == h.moved.end() ? nullptr : &*it;
}

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A small tree of its own per test, removed after it.
class FabricTree : public ::testing::Test {
 protected:
  void SetUp() override {
    m_root = fs::temp_directory_path() / ("ccbench-fabric-test-" + std::to_string(::getpid()));
    fs::remove_all(m_root);
  }
  void TearDown() override { fs::remove_all(m_root); }
  void write(const std::string& path, const std::string& text) const {
    fs::create_directories((m_root / path).parent_path());
    std::ofstream(m_root / path) << text << "\n";
  }
  [[nodiscard]] FabricRoots roots() const { return {m_root / "sys", m_root / "proc", false, ""}; }

 private:
  fs::path m_root;
};

TEST(FabricRead, ThisMachinesCaptureReadsWithoutProblems) {
  const CounterSnapshot s = read_counters(captured("debian12-vm"));
  EXPECT_TRUE(s.problems.empty()) << s.problems.front();
  ASSERT_NE(find(s, "net", "eth0", "tx_bytes"), nullptr);
  ASSERT_NE(find(s, "net", "lo", "carrier_changes"), nullptr);
  EXPECT_NE(find(s, "tcp", "", "RetransSegs"), nullptr);
  EXPECT_NE(find(s, "tcp", "", "TCPLostRetransmit"), nullptr);  // TcpExt, from /proc/net/netstat
  EXPECT_EQ(find(s, "tcp", "", "CurrEstab"), nullptr);          // a gauge, not a counter
  EXPECT_EQ(find(s, "tcp", "", "MaxConn"), nullptr);
  // Every statistics file of every device, and nothing else of theirs.
  const auto net = std::count_if(s.readings.begin(), s.readings.end(), [](const auto& r) { return r.source == "net"; });
  std::size_t files = 0;
  for (const auto& dev : fs::directory_iterator(captured("debian12-vm").sys / "class/net")) {
    files += static_cast<std::size_t>(std::distance(fs::directory_iterator(dev.path() / "statistics"), {})) + 1;
  }
  EXPECT_EQ(static_cast<std::size_t>(net), files);
}

// 1,000,000 bytes sent over TCP from one namespace to another through a veth pair, between two captures.
TEST(FabricRead, VethDeltasAgreeWithTheBytesSent) {
  const HostFabric h = counter_deltas(read_counters(captured("veth-before")), read_counters(captured("veth-after")));
  EXPECT_TRUE(h.warnings.empty()) << h.warnings.front();
  const CounterDelta* tx = moved(h, "veth-a", "tx_bytes");
  ASSERT_NE(tx, nullptr);
  EXPECT_EQ(tx->kind, CounterKind::Traffic);
  EXPECT_EQ(counted_bytes(*tx), tx->delta);
  EXPECT_GE(tx->delta, 1000000U);              // the payload, and
  EXPECT_LT(tx->delta, 1000000U * 101 / 100);  // under 1% of headers (1,856 bytes in 28 GSO packets)
  const CounterDelta* segments = moved(h, "", "OutSegs");
  ASSERT_NE(segments, nullptr);
  EXPECT_GE(segments->delta * 1448, 1000000U);  // at most an MSS of payload each
  EXPECT_EQ(moved(h, "", "RetransSegs"), nullptr);
}

TEST(FabricRead, EthtoolTextOfCapturedDevices) {
  const auto eth0 = parse_ethtool_text(text_of(fabric_data() / "debian12-vm/ethtool/eth0.txt"));
  ASSERT_EQ(eth0.size(), 20U);  // virtio_net: the 21 lines less "NIC statistics:"
  EXPECT_EQ(eth0.front().first, "rx_drops");
  const auto veth = parse_ethtool_text(text_of(fabric_data() / "veth-after/ethtool/veth-a.txt"));
  ASSERT_FALSE(veth.empty());
  EXPECT_EQ(veth.front(), (std::pair<std::string, std::uint64_t>{"peer_ifindex", 2}));
}

TEST(FabricRead, SnmpTablesAndLinkSpeeds) {
  const auto tcp = parse_snmp_table(text_of(fabric_data() / "veth-after/proc/net/snmp"), "Tcp");
  EXPECT_TRUE(std::none_of(tcp.begin(), tcp.end(), [](const auto& f) { return f.first == "MaxConn"; }));  // -1
  EXPECT_TRUE(std::any_of(tcp.begin(), tcp.end(), [](const auto& f) { return f.first == "OutSegs"; }));
  EXPECT_TRUE(parse_snmp_table("Udp: a b\nUdp: 1 2\n", "Tcp").empty());
  EXPECT_DOUBLE_EQ(parse_link_speed("32.0 GT/s PCIe"), 32.0);
  EXPECT_DOUBLE_EQ(parse_link_speed("8 GT/s"), 8.0);
  EXPECT_DOUBLE_EQ(parse_link_speed("2.5 GT/s PCIe"), 2.5);
  EXPECT_DOUBLE_EQ(parse_link_speed("Unknown"), 0.0);
}

// The rdma tier's guest (kernel 6.1, Soft-RoCE rxe0 on lo), captured before and after one ib_write_bw_bench run
// (-b 64K -e 1M -f 16 -n 10 -t 4 --cq-mod 4), whose result is rxe-ib_write_bw.json: rxe has no counters/ of its
// own, 16 hw_counters (lifespan left out); nothing else wrote on rxe0 between the captures, so the bench's own
// readings (taken inside it) saw the same deltas.
TEST(FabricRead, SoftRoceGuestCaptureAgreesWithTheBenchsResult) {
  const HostFabric h = counter_deltas(read_counters(captured("rxe-before")), read_counters(captured("rxe-after")));
  EXPECT_TRUE(h.warnings.empty()) << h.warnings.front();
  const auto rxe = [&h](std::string_view name) {
    const CounterDelta* d = moved(h, "rxe0", name);
    return d != nullptr ? d->delta : 0;
  };
  EXPECT_EQ(counter_info("rdma_hw", "duplicate_request").kind, CounterKind::Error);
  EXPECT_EQ(counter_info("rdma_hw", "ack_deferred").kind, CounterKind::Other);  // not an error: "deferred"
  EXPECT_EQ(counter_info("rdma_hw", "rx_deferred_pkts").kind, CounterKind::Traffic);
  EXPECT_EQ(counter_info("rdma_hw", "tx_err_pkts").kind, CounterKind::Error);
  EXPECT_EQ(rxe("sent_pkts"), rxe("rcvd_pkts"));  // one device on lo: every packet it sends, it receives
  EXPECT_GT(rxe("duplicate_request"), 0U);        // emulated rxe retransmits under TCG (see rdma_test_fabric.py)
  const ResultDocument doc = document_from_json(nlohmann::json::parse(text_of(fabric_data() / "rxe-ib_write_bw.json")));
  ASSERT_EQ(doc.fabric.size(), 1U);
  const HostFabric& bench = doc.fabric.front();
  EXPECT_EQ(bench.host, "ccbench-vm");
  for (const std::string name : {"sent_pkts", "rcvd_pkts", "duplicate_request", "completer_retry_err"}) {
    const CounterDelta* d = moved(bench, "rxe0", name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_EQ(d->delta, rxe(name)) << name;
  }
  // The packets the bench's writes need (a write of S bytes: ceil(S / MTU) packets, a zero-byte write one) are
  // all counted, with acknowledgements and retransmissions on top.
  std::uint64_t requests = 0;
  for (const CaseResult& r : doc.results) {
    ASSERT_TRUE(r.rdma && r.rdma->posted_writes && r.rdma->posted_bytes);
    const std::uint64_t size = r.spec.count;
    const std::uint64_t data = *r.rdma->posted_bytes / size;
    EXPECT_EQ(data * size, *r.rdma->posted_bytes);
    const auto mtu = static_cast<std::uint64_t>(r.rdma->mtu);
    requests += data * ((size + mtu - 1) / mtu) + (*r.rdma->posted_writes - data);
  }
  EXPECT_EQ(requests, 12790U);
  EXPECT_GE(rxe("sent_pkts") - 2 * rxe("duplicate_request"), requests);
  EXPECT_LE(rxe("sent_pkts") - 2 * rxe("duplicate_request"), requests * 102 / 100);
  // The guest's links: rxe0's one port, no PCIe link files (QEMU's virtual devices are not PCIe here).
  const auto links = read_links(captured("rxe-after"));
  ASSERT_EQ(links.size(), 1U);
  EXPECT_EQ(links[0].device, "rxe0 port 1");
  EXPECT_EQ(links[0].current, "2.5 Gb/sec (1X SDR)");
  EXPECT_FALSE(links[0].below);
}

// A public mlx5/mlx4/hfi1 layout (prometheus/procfs's fixtures): every counter read, hw_counters' lifespan left
// out, 64-bit extended data counters taken as they are (not as saturated 32-bit ones).
TEST(FabricRead, PublicInfinibandLayoutReads) {
  const FabricRoots roots{fabric_data() / "procfs-infiniband/sys", fabric_data() / "none", false, ""};
  const CounterSnapshot s = read_counters(roots);
  const auto count = [&s](std::string_view source, std::string_view device) {
    return std::count_if(s.readings.begin(), s.readings.end(),
                         [&](const auto& r) { return r.source == source && r.device == device; });
  };
  EXPECT_EQ(count("rdma", "mlx5_0"), 21);
  EXPECT_EQ(count("rdma_hw", "mlx5_0"), 24);  // 25 files less lifespan
  EXPECT_EQ(count("rdma", "mlx4_0"), 34);     // two ports
  const CounterReading* data = find(s, "rdma", "mlx5_0", "port_xmit_data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->value, 2880761508848U);
  EXPECT_EQ(counter_info("rdma_hw", "local_ack_timeout_err").kind, CounterKind::Error);
  EXPECT_EQ(counter_info("rdma_hw", "req_cqe_error").kind, CounterKind::Error);  // by its name
  const HostFabric same = counter_deltas(s, s);
  EXPECT_TRUE(same.moved.empty());
  ASSERT_EQ(same.warnings.size(), 1U);  // no /proc here: no TCP counters, said once
  EXPECT_NE(same.warnings[0].find("net/snmp: not read"), std::string::npos) << same.warnings[0];
  const auto links = read_links(roots);
  ASSERT_EQ(links.size(), 4U);  // hfi1_0, mlx4_0 x2, mlx5_0; no device links: no PCIe
  EXPECT_TRUE(std::none_of(links.begin(), links.end(), [](const LinkState& l) { return l.below; }));
  EXPECT_EQ(links[3].device, "mlx5_0 port 1");
  EXPECT_EQ(links[3].current, "25 Gb/sec (1X EDR)");
  EXPECT_EQ(links[3].firmware, "14.28.2006");
}

// PCIe links and AER files of prometheus/node_exporter's fixtures: an Intel NIC at its Gen2 x4, an NVMe drive at
// 8 of its 16 GT/s (below, unless judged as a GPU is: on width only).
TEST(FabricRead, PublicPcieLayoutReads) {
  const fs::path devices = fabric_data() / "node-exporter-pci/sys/devices";
  const auto nic = read_pcie_link(devices / "pci0000:40/0000:40:01.3/0000:45:00.0", "nic");
  ASSERT_TRUE(nic);
  EXPECT_EQ(nic->device, "0000:45:00.0");
  EXPECT_EQ(nic->current, "5.0 GT/s PCIe x4");
  EXPECT_FALSE(nic->below);
  EXPECT_EQ(nic->aer, (std::map<std::string, std::uint64_t>{
                          {"TOTAL_ERR_COR", 0}, {"TOTAL_ERR_FATAL", 0}, {"TOTAL_ERR_NONFATAL", 0}}));
  const fs::path nvme = devices / "pci0000:00/0000:00:02.1/0000:01:00.0";
  const auto slow = read_pcie_link(nvme, "");
  ASSERT_TRUE(slow);
  EXPECT_TRUE(slow->below);
  EXPECT_EQ(slow->capable, "16.0 GT/s PCIe x4");
  EXPECT_FALSE(read_pcie_link(nvme, "gpu")->below);
  EXPECT_FALSE(read_pcie_link(devices, "nic"));  // no link files
}

TEST(FabricDeltas, VanishedResetAndSaturatedCountersWarnAndGiveNoWrongDelta) {
  CounterSnapshot before{0.0,
                         {{"rdma", "mlx5_0", 1, "symbol_error", 65530},
                          {"rdma", "mlx5_0", 1, "link_downed", 255},
                          {"rdma", "mlx5_0", 1, "port_xmit_data", 1000},
                          {"rdma_hw", "mlx5_1", 1, "out_of_sequence", 7},
                          {"net", "eth0", 0, "rx_bytes", 5000}},
                         {}};
  CounterSnapshot after{2.5,
                        {{"rdma", "mlx5_0", 1, "symbol_error", 65535},
                         {"rdma", "mlx5_0", 1, "link_downed", 255},
                         {"rdma", "mlx5_0", 1, "port_xmit_data", 1250},
                         {"net", "eth0", 0, "rx_bytes", 10}},
                        {"/sys/class/infiniband/mlx5_2/ports/1/counters: 1 counter file(s) not read (x)"}};
  const HostFabric h = counter_deltas(before, after);
  EXPECT_DOUBLE_EQ(h.seconds, 2.5);
  EXPECT_EQ(h.counters_read, 4U);
  const CounterDelta* symbols = moved(h, "mlx5_0", "symbol_error");  // 16 bits, stopped at 65535
  ASSERT_NE(symbols, nullptr);
  EXPECT_EQ(symbols->delta, 5U);
  EXPECT_TRUE(symbols->lower_bound);
  EXPECT_EQ(symbols->kind, CounterKind::Error);
  EXPECT_EQ(moved(h, "mlx5_0", "link_downed"), nullptr);  // at 255 before: no delta to give
  const CounterDelta* data = moved(h, "mlx5_0", "port_xmit_data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(counted_bytes(*data), 1000U);            // 250 four-byte words
  EXPECT_EQ(moved(h, "eth0", "rx_bytes"), nullptr);  // went back: reset, no delta
  const auto said = [&h](std::string_view text) {
    return std::any_of(h.warnings.begin(), h.warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(said("mlx5_0 port 1 symbol_error: at its 16-bit maximum 65535"));
  EXPECT_TRUE(said("mlx5_0 port 1 link_downed: at its 8-bit maximum 255 (it saturates, it does not wrap): stuck"));
  EXPECT_TRUE(said("mlx5_1 port 1 out_of_sequence: not read after the run"));
  EXPECT_TRUE(said("eth0 rx_bytes: went back from 5000 to 10"));
  EXPECT_TRUE(said("mlx5_2/ports/1/counters: 1 counter file(s) not read"));
}

TEST(FabricDeltas, JsonRoundTrip) {
  HostFabric h =
      counter_deltas({0.0, {{"tcp", "", 0, "RetransSegs", 3}}, {}}, {1.0, {{"tcp", "", 0, "RetransSegs", 9}}, {}});
  h.host = "node1";
  h.links.push_back(LinkState{"pcie",
                              "0000:1b:00.0",
                              "gpu",
                              "10de:2330",
                              "16.0 GT/s PCIe x8",
                              "32.0 GT/s PCIe x16",
                              true,
                              "",
                              "",
                              {{"TOTAL_ERR_COR", 2}}});
  const nlohmann::json j = fabric_to_json(h);
  EXPECT_EQ(j.at("moved").at(0).at("meaning"), "TCP segments retransmitted: loss or timeouts on the path");
  const HostFabric back = fabric_from_json(j);
  EXPECT_EQ(fabric_to_json(back), j);
}

TEST_F(FabricTree, AnUnreadableCounterIsAProblemAndTheRestAreRead) {
  write("sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts", "120");
  write("sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts", "N/A");
  write("sys/class/infiniband/rxe0/ports/1/hw_counters/lifespan", "10");
  const CounterSnapshot s = read_counters(roots());
  ASSERT_NE(find(s, "rdma_hw", "rxe0", "sent_pkts"), nullptr);
  EXPECT_EQ(find(s, "rdma_hw", "rxe0", "lifespan"), nullptr);  // a setting
  ASSERT_EQ(s.problems.size(), 2U);                            // rcvd_pkts, and no /proc/net/snmp here
  EXPECT_NE(s.problems[0].find("1 counter file(s) not read (rcvd_pkts)"), std::string::npos) << s.problems[0];
}

// Ports of one HCA model: the best active rate is their capability; a GPU is judged on its width only.
TEST_F(FabricTree, LinksTrainedLowAreNamed) {
  for (const auto& [dev, rate] : {std::pair{"mlx5_0", "400 Gb/sec (4X NDR)"}, {"mlx5_1", "200 Gb/sec (2X NDR)"}}) {
    write(std::string("sys/class/infiniband/") + dev + "/hca_type", "MT4129");
    write(std::string("sys/class/infiniband/") + dev + "/fw_ver", "28.39.1002");
    write(std::string("sys/class/infiniband/") + dev + "/ports/1/rate", rate);
    write(std::string("sys/class/infiniband/") + dev + "/ports/1/state", "4: ACTIVE");
    write(std::string("sys/class/infiniband/") + dev + "/ports/1/link_layer", "InfiniBand");
  }
  const auto gpu = [&](const std::string& bdf, const std::string& speed, const std::string& width) {
    const std::string dir = "sys/bus/pci/devices/" + bdf + "/";
    write(dir + "vendor", "0x10de");
    write(dir + "class", "0x030200");
    write(dir + "current_link_speed", speed);
    write(dir + "current_link_width", width);
    write(dir + "max_link_speed", "32.0 GT/s PCIe");
    write(dir + "max_link_width", "16");
  };
  gpu("0000:1b:00.0", "2.5 GT/s PCIe", "16");  // idle: a lower speed, full width
  gpu("0000:43:00.0", "16.0 GT/s PCIe", "8");  // half its lanes
  const auto links = read_links(roots());
  ASSERT_EQ(links.size(), 4U);
  EXPECT_FALSE(links[0].below);
  EXPECT_EQ(links[1].device, "mlx5_1 port 1");
  EXPECT_TRUE(links[1].below);
  EXPECT_EQ(links[1].capable, "400 Gb/sec (4X NDR)");
  EXPECT_EQ(links[1].firmware, "28.39.1002");
  EXPECT_FALSE(links[2].below) << links[2].current;
  EXPECT_EQ(links[3].device, "0000:43:00.0");
  EXPECT_TRUE(links[3].below);
  EXPECT_EQ(links[3].current, "16.0 GT/s PCIe x8");
  EXPECT_EQ(links[3].capable, "32.0 GT/s PCIe x16");
}

// Issue 35: a DOWN RDMA port passed `links` and ccbench-topo --links listed it "ok". A port that is not ACTIVE is
// below what it can do, whatever rate its file still says.
TEST_F(FabricTree, APortThatIsNotActiveIsBelow) {
  for (const auto& [dev, state] : {std::pair{"mlx5_0", "4: ACTIVE"}, {"mlx5_1", "1: DOWN"}}) {
    write(std::string("sys/class/infiniband/") + dev + "/hca_type", "MT4129");
    write(std::string("sys/class/infiniband/") + dev + "/ports/1/rate", "400 Gb/sec (4X NDR)");
    write(std::string("sys/class/infiniband/") + dev + "/ports/1/state", state);
    write(std::string("sys/class/infiniband/") + dev + "/ports/1/link_layer", "InfiniBand");
  }
  const auto links = read_links(roots());
  ASSERT_EQ(links.size(), 2U);
  EXPECT_FALSE(links[0].below);
  EXPECT_EQ(links[1].device, "mlx5_1 port 1");
  EXPECT_EQ(links[1].state, "1: DOWN");
  EXPECT_TRUE(links[1].below);
  EXPECT_EQ(links[1].capable, "400 Gb/sec (4X NDR)");
}

// NVLink through NVML (a stand-in library, tests/unit/topo/fake_nvml.cpp: two H100s, GPU1's link 3 down, GPU0's
// link 2 counting replays): the counters of active links only, and each GPU's links against its peers'.
TEST(FabricRead, NvLinkErrorsAndStatesFromNvml) {
  const FabricRoots roots{fabric_data() / "none", fabric_data() / "none", false, CCBENCH_FAKE_NVML};
  const CounterSnapshot before = read_counters(roots);  // (in this order: arguments have none)
  const HostFabric h = counter_deltas(before, read_counters(roots));
  const CounterDelta* replay = moved(h, "GPU0 NVLink 2", "replay");
  ASSERT_NE(replay, nullptr);
  EXPECT_EQ(replay->delta, 3U);
  EXPECT_EQ(replay->kind, CounterKind::Error);
  EXPECT_FALSE(counter_info("nvlink", "replay").meaning.empty());
  // NVML_NVLINK_ERROR_DL_ECC_DATA (4): Hopper's data errors (issue 38, section 4)
  const CounterDelta* ecc = moved(h, "GPU0 NVLink 1", "ecc_data");
  ASSERT_NE(ecc, nullptr);
  EXPECT_EQ(ecc->delta, 2U);
  EXPECT_EQ(ecc->kind, CounterKind::Error);
  EXPECT_EQ(h.moved.size(), 2U);        // every other counter stayed; none is read on GPU1's link 3 (down)
  EXPECT_EQ(h.counters_read, 35U * 4);  // 35 active links, 4 of NVML's 5 counters (no crc_data)
  EXPECT_TRUE(std::none_of(h.warnings.begin(), h.warnings.end(),  // unsupported is no evidence lost
                           [](const std::string& w) { return w.find("NVLink") != std::string::npos; }));
  const auto findings = fabric_findings({h});  // (and one for the TCP counters this tree has not)
  EXPECT_EQ(std::count_if(findings.begin(), findings.end(),
                          [](const std::string& f) { return f.find("GPU0 NVLink 2 replay +3") != std::string::npos; }),
            1);
  const auto errors = query_nvlink_errors(CCBENCH_FAKE_NVML);
  EXPECT_EQ(errors.unsupported, (std::vector<std::string>{"GPU0: crc_data (18 links)", "GPU1: crc_data (17 links)"}));

  const auto links = read_links(roots);
  ASSERT_EQ(links.size(), 2U);
  EXPECT_EQ(links[0].kind, "nvlink");
  EXPECT_EQ(links[0].device, "GPU0 0000:1b:00.0 NVLinks");
  EXPECT_EQ(links[0].current, "18 of 18 active");
  EXPECT_FALSE(links[0].below);
  EXPECT_EQ(links[1].current, "17 of 18 active");
  EXPECT_EQ(links[1].capable, "18 active");
  EXPECT_NE(fabric_findings({HostFabric{"node0", 1.0, 0, {}, links, {}}})
                .at(0)
                .find("node0: GPU1 0000:43:00.0 NVLinks (gpu) trained at 17 of 18 active, capable of 18 active"),
            std::string::npos);
  EXPECT_TRUE(links[1].below);
  EXPECT_EQ(links[1].state, "down: 3");
  EXPECT_EQ(links[1].model, "NVIDIA H100 80GB HBM3");
  // Without NVML (a tree from another host): no NVLink.
  EXPECT_TRUE(read_links(captured("rxe-after")).size() == 1U);
}

TEST(FabricRead, ThisMachinesLiveTreesReadWithoutError) {
  const CounterSnapshot s = read_counters();
  EXPECT_FALSE(s.readings.empty());
  EXPECT_NO_THROW(read_links());
}

}  // namespace
}  // namespace ccbench::topo

#pragma once
// The fabric's own evidence with a run (issue 26): on each host, how its counters moved while the bench ran
// (RDMA ports, network devices, TCP) and how its links trained against what they can do. The readers are in
// topo/ (sysfs, procfs, the ethtool interface); here are the values, the meaning of the well-known counters
// and the arithmetic of deltas (saturation, resets, counters that vanish), so the bench and the reporter
// judge them alike.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

/// What a counter says when it moves.
enum class CounterKind {
  Error,       // a fault: symbol errors, discards, retransmissions, link downs
  Congestion,  // flow control at work: pause frames, CNPs, ECN marks, xmit wait
  Traffic,     // bytes and packets
  Other,
};
std::string_view name(CounterKind kind);  // "error", "congestion", "traffic", "other"
std::optional<CounterKind> parse_counter_kind(std::string_view text);

/// Where a counter is read: "rdma" (/sys/class/infiniband/D/ports/P/counters), "rdma_hw" (.../hw_counters),
/// "net" (/sys/class/net/D/statistics and carrier_changes), "ethtool" (what ethtool -S prints), "tcp"
/// (/proc/net/snmp Tcp and /proc/net/netstat TcpExt), "nvlink" (NVML's NVLink error counters; device "GPU0 NVLink 3").
struct CounterReading {
  std::string source;
  std::string device;  // "mlx5_0", "eth0"; empty for the host's TCP
  int port = 0;        // the RDMA port; 0 otherwise
  std::string name;    // the file's or the field's name
  std::uint64_t value = 0;
};

struct CounterSnapshot {
  double taken_s = 0;  // a steady clock, seconds
  std::vector<CounterReading> readings;
  std::vector<std::string> problems;  // what could not be read (one line each)
};

/// What ccbench knows of a counter: its kind, its meaning, its width where the hardware keeps fewer than 64
/// bits (InfiniBand's PortCounters saturate at all ones rather than wrap), and the bytes per unit (IB's
/// port_xmit_data counts 4-byte words).
struct CounterInfo {
  CounterKind kind = CounterKind::Other;
  std::string_view meaning;  // empty where the counter is not a well-known one
  int bits = 64;
  int unit_bytes = 0;  // bytes per count for data counters; 0 otherwise
};
CounterInfo counter_info(std::string_view source, std::string_view name);

struct CounterDelta {
  std::string source;
  std::string device;
  int port = 0;
  std::string name;
  std::uint64_t delta = 0;
  CounterKind kind = CounterKind::Other;
  bool lower_bound = false;  // the counter saturated during the run: it moved at least this much
};

/// A link's trained state against its capability: an RDMA port's rate and width, a GPU's or NIC's PCIe link.
struct LinkState {
  std::string kind;      // "rdma_port", "pcie", "nvlink"
  std::string device;    // "mlx5_0 port 1", "0000:18:00.0", "GPU0 0000:18:00.0 NVLinks"
  std::string role;      // "gpu", "nic", "hca"; empty when unknown
  std::string model;     // an HCA's hca_type ("MT4129"); a PCI device's vendor:device ("10de:2330"); may be empty
  std::string current;   // "200 Gb/sec (2X NDR)", "16.0 GT/s PCIe x8"
  std::string capable;   // "400 Gb/sec (4X NDR)", "32.0 GT/s PCIe x16"; empty when unknown
  bool below = false;    // trained below its capability
  std::string state;     // "4: ACTIVE"; empty for PCIe
  std::string firmware;  // an HCA's fw_ver
  std::map<std::string, std::uint64_t> aer;  // PCIe AER totals: TOTAL_ERR_COR, TOTAL_ERR_FATAL, TOTAL_ERR_NONFATAL
};

/// One host's evidence for a run.
struct HostFabric {
  std::string host;
  double seconds = 0;               // between the two readings
  std::size_t counters_read = 0;    // readings matched before and after
  std::vector<CounterDelta> moved;  // the counters that moved, every kind
  std::vector<LinkState> links;
  std::vector<std::string> warnings;  // a counter that vanished, went back or saturated; a file not read
};

/// The counters that moved between two snapshots of one host. A counter lower after than before (a reset, a
/// driver reload) or gone after gets a warning and no delta; one at its saturation value gets its delta
/// marked a lower bound, with a warning; never a wrong delta.
HostFabric counter_deltas(const CounterSnapshot& before, const CounterSnapshot& after);

/// What one of HostFabric::warnings says of the evidence: a counter that went back (a reset, a driver reload),
/// stuck at its maximum before the run, gone after it, saturated during it (its delta a lower bound), or a file
/// not read; Other for anything else. The texts are counter_deltas' and the readers' (this file's pair).
enum class FabricWarning { WentBack, Stuck, Vanished, Saturated, NotRead, Other };
FabricWarning classify_fabric_warning(std::string_view warning);

/// The share of a host's TCP segments sent again above which its retransmissions are a finding (TCP's own
/// probing, and a shaped link's queue, retransmit a few in ten thousand: 2 in 120,000 on the cluster tier's
/// 200 Mbit/s links).
inline constexpr double kTcpRetransmitShare = 0.001;

/// What a run's fabric evidence tells its reader, one line per finding: per host, the error counters that moved
/// (device, counter, by how much; TCP's retransmissions past kTcpRetransmitShare of its segments), each link
/// trained below its capability, and the warnings of the reading. Empty when every host was quiet: congestion
/// and traffic counters are kept in the result, not reported here.
std::vector<std::string> fabric_findings(const std::vector<HostFabric>& hosts);

/// Bytes a moved data counter stands for (port_xmit_data x 4, tx_bytes x 1); unset for other counters.
std::optional<std::uint64_t> counted_bytes(const CounterDelta& delta);

}  // namespace ccbench

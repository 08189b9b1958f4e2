#pragma once
// The facts of an RDMA pair (the verbs backend's ib_write_bw / ib_write_lat) that go into a result.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ccbench {

/// One side of an RDMA pair (the verbs backend): where its queue pairs live.
struct RdmaEndpoint {
  int rank = 0;  // world rank
  std::string host;
  std::string device;  // "mlx5_0", "rxe0"
  int port = 1;
  std::string link_layer;        // "InfiniBand", "Ethernet"
  std::optional<int> gid_index;  // unset: InfiniBand addressed by LID
  std::string gid;               // "fe80::...", "::ffff:192.0.2.1"; empty without a GID
  std::string gid_type;          // "RoCE v2", "RoCE v1", "IB"; empty without a GID
  int lid = 0;
  std::optional<double> rate_Gbps;  // the port's active speed x width; unset when unknown
  int active_mtu = 0;               // bytes
};

/// How an RDMA pair was connected (ib_write_bw / ib_write_lat), for the result.
struct RdmaInfo {
  std::string transport = "RC";
  int mtu = 0;  // the path MTU in use, bytes
  int qps = 1;
  int tx_depth = 1;
  int cq_mod = 1;
  int inline_bytes = 0;  // writes up to this size go inline
  bool bidir = false;
  std::string mem = "host";
  std::vector<RdmaEndpoint> endpoints;  // the pair, in group rank order (the writer first)
  // ib_write_bw, one direction: bytes over wall time across the case's samples back to back (perftest's
  // BW average); unset for ib_write_lat and --bidirectional
  std::optional<double> run_bw_GBps;
  // 1.8.0: every RDMA WRITE the first endpoint posted for the case (warm-up, calibration, timed, and the
  // zero-byte writes that fence a stream), and their payload bytes: what its port's counters must show, plus the
  // protocol's headers, acknowledgements and retransmissions. The other side posts as many with ib_write_lat
  // and --bidirectional, none otherwise. Unset in older files.
  std::optional<std::uint64_t> posted_writes;
  std::optional<std::uint64_t> posted_bytes;
};

}  // namespace ccbench

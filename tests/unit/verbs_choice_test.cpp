// The verbs backend's choices without a device: which device and GID, the port's rate and MTU, and
// the checks on a peer's queue pair message. GID tables are shaped like the ones rdma_rxe and
// mlx5 RoCE ports show (show_gids): link-local v1/v2 pairs first, then IPv4-mapped v1/v2.
#include "ccbench/verbs/verbs_choice.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ccbench/errors.hpp"

namespace ccbench::verbs {
namespace {

template <typename Fn>
std::string usage_error(Fn&& fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(VerbsChoice, DeviceFirstActiveOrByName) {
  const std::vector<DeviceView> devices{{"mlx5_0", 1, false, "DOWN"}, {"mlx5_1", 1, true, "ACTIVE"}};
  EXPECT_EQ(choose_device(devices, "", 1), "mlx5_1");
  EXPECT_EQ(choose_device(devices, "mlx5_1", 1), "mlx5_1");
  EXPECT_EQ(usage_error([&] { choose_device(devices, "mlx5_0", 1); }),
            "port 1 of mlx5_0 is DOWN, not ACTIVE (check the cable/link: ibv_devinfo -d mlx5_0)");
  EXPECT_EQ(usage_error([&] { choose_device(devices, "mlx5_7", 1); }),
            "--ib-dev mlx5_7: no such RDMA device (devices here: mlx5_0 (port 1 DOWN), mlx5_1 (port 1 ACTIVE))");
  EXPECT_EQ(usage_error([&] { choose_device(devices, "mlx5_1", 2); }), "--ib-port 2: mlx5_1 has port(s) 1..1");
  const std::vector<DeviceView> down{{"rxe0", 1, false, "DOWN"}};
  EXPECT_EQ(usage_error([&] { choose_device(down, "", 1); }), "no RDMA device has port 1 ACTIVE: rxe0 (port 1 DOWN)");
  EXPECT_NE(usage_error([&] { choose_device({}, "", 1); }).find("no RDMA device here"), std::string::npos);
}

TEST(VerbsChoice, GidPrefersRoceV2WithIpv4) {
  const std::vector<GidView> gids{{0, "RoCE v1", "fe80::5054:ff:fe12:3456"},
                                  {1, "RoCE v2", "fe80::5054:ff:fe12:3456"},
                                  {2, "RoCE v1", "::ffff:192.0.2.1"},
                                  {3, "RoCE v2", "::ffff:192.0.2.1"}};
  EXPECT_EQ(choose_gid(gids, std::nullopt, true, 16, "mlx5_0", 1), 3);
  EXPECT_EQ(choose_gid({gids[0], gids[1]}, std::nullopt, true, 16, "mlx5_0", 1), 1);  // no IPv4: v2 link-local
  EXPECT_EQ(choose_gid({gids[0]}, std::nullopt, true, 16, "mlx5_0", 1), 0);           // v1 only
  EXPECT_EQ(choose_gid(gids, 2, true, 16, "mlx5_0", 1), 2);                           // -x wins
  EXPECT_EQ(choose_gid(gids, std::nullopt, false, 16, "mlx5_0", 1), std::nullopt);    // InfiniBand: LID
  // rxe on lo: one entry, index 1 (what recipes/rdma-vm.md found)
  EXPECT_EQ(choose_gid({{1, "RoCE v2", "::ffff:127.0.0.1"}}, std::nullopt, true, 1024, "rxe0", 1), 1);
}

TEST(VerbsChoice, GidIndexErrorsListTheValidOnes) {
  const std::vector<GidView> gids{{0, "RoCE v1", "fe80::1"}, {1, "RoCE v2", "fe80::1"}};
  EXPECT_EQ(usage_error([&] { choose_gid(gids, 16, true, 16, "rxe0", 1); }),
            "--gid-index 16 is out of range: port 1 of rxe0 has GID indices 0..15 (valid: 0 (RoCE v1 fe80::1), 1 "
            "(RoCE v2 fe80::1))");
  EXPECT_EQ(usage_error([&] { choose_gid(gids, 5, true, 16, "rxe0", 1); }),
            "--gid-index 5: that entry of rxe0 port 1 is empty (valid: 0 (RoCE v1 fe80::1), 1 (RoCE v2 fe80::1))");
  EXPECT_NE(usage_error([&] { choose_gid({}, std::nullopt, true, 16, "rxe0", 1); }).find("has no GID"),
            std::string::npos);
}

// ibv_devinfo's active_speed / active_width codes against the rates sysfs prints ("400 Gb/sec (4X NDR)").
TEST(VerbsChoice, PortRate) {
  EXPECT_EQ(port_rate_gbps(128, 2), 400.0);  // 4x NDR
  EXPECT_EQ(port_rate_gbps(64, 2), 200.0);   // 4x HDR
  EXPECT_EQ(port_rate_gbps(32, 2), 100.0);   // 4x EDR
  EXPECT_EQ(port_rate_gbps(16, 2), 56.0);    // 4x FDR
  EXPECT_EQ(port_rate_gbps(1, 1), 2.5);      // 1x SDR
  EXPECT_EQ(port_rate_gbps(64, 16), 100.0);  // 2x HDR (HDR100 split port)
  EXPECT_FALSE(port_rate_gbps(3, 2));
  EXPECT_FALSE(port_rate_gbps(128, 3));
}

TEST(VerbsChoice, Mtu) {
  EXPECT_EQ(mtu_bytes(1), 256);
  EXPECT_EQ(mtu_bytes(5), 4096);
  EXPECT_EQ(mtu_bytes(0), 0);
  EXPECT_EQ(ibv_mtu_of(1024), 3);
  EXPECT_FALSE(ibv_mtu_of(1500));
}

PeerInfo sample_side(int rank) {
  PeerInfo p;
  p.settings = "ib_write_bw_bench qps=1 bidir=0 max_bytes=8388608 mem=host";
  p.rank = rank;
  p.host = "vm";
  p.device = "rxe0";
  p.link_layer = "Ethernet";
  p.gid_index = 1;
  p.gid = "::ffff:127.0.0.1";
  p.gid_type = "RoCE v2";
  p.gid_raw.assign(16, 0);
  p.active_mtu = 1024;
  p.qpns = {17};
  p.psn = 0x123456;
  p.addr = 0x7f0000000000;
  p.rkey = 42;
  p.bytes = 8388608;
  return p;
}

TEST(VerbsChoice, PeerMessageRoundTrip) {
  const PeerInfo mine = sample_side(0);
  const PeerInfo peer = peer_from_text(to_text(sample_side(1)), mine);
  EXPECT_EQ(peer.rank, 1);
  EXPECT_EQ(peer.qpns, std::vector<std::uint32_t>{17});
  EXPECT_EQ(peer.addr, 0x7f0000000000U);
  EXPECT_EQ(peer.gid_raw.size(), 16U);
  EXPECT_EQ(peer.gid_index, 1);
}

TEST(VerbsChoice, PeerMessageMismatchesAreUsageErrors) {
  const PeerInfo mine = sample_side(0);
  EXPECT_NE(usage_error([&] { peer_from_text("hello", mine); }).find("not ccbench's"), std::string::npos);
  auto other = sample_side(1);
  other.version = 2;
  EXPECT_EQ(usage_error([&] { peer_from_text(to_text(other), mine); }),
            "the peer speaks version 2 of the queue pair exchange, this is version 1: run the same ccbench on both "
            "sides");
  other = sample_side(1);
  other.settings = "ib_write_bw_bench qps=4 bidir=0 max_bytes=8388608 mem=host";
  EXPECT_EQ(usage_error([&] { peer_from_text(to_text(other), mine); }),
            "the peer (rank 1 on vm, rxe0) was started with other flags: 'ib_write_bw_bench qps=4 bidir=0 "
            "max_bytes=8388608 mem=host' there, 'ib_write_bw_bench qps=1 bidir=0 max_bytes=8388608 mem=host' here");
  other = sample_side(1);
  other.link_layer = "InfiniBand";
  EXPECT_NE(usage_error([&] { peer_from_text(to_text(other), mine); }).find("cannot connect"), std::string::npos);
  other = sample_side(1);
  other.gid_index.reset();
  EXPECT_NE(usage_error([&] { peer_from_text(to_text(other), mine); }).find("give -x on both sides"),
            std::string::npos);
  other = sample_side(1);
  other.gid_raw.resize(4);
  EXPECT_NE(usage_error([&] { peer_from_text(to_text(other), mine); }).find("GID of 4 bytes"), std::string::npos);
  other = sample_side(1);
  other.bytes = 4096;
  EXPECT_NE(usage_error([&] { peer_from_text(to_text(other), mine); }).find("buffer of 4096 bytes"), std::string::npos);
}

}  // namespace
}  // namespace ccbench::verbs

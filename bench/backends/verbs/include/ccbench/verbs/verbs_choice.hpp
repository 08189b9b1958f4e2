#pragma once
// The verbs backend's decisions as pure functions over plain values (unit-tested without a device):
// which device and GID to use, the port's rate and MTU, and whether a peer's message fits ours.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccbench::verbs {

/// A device as the choice needs it: its name and the state of the port asked for.
struct DeviceView {
  std::string name;
  int port_count = 0;
  bool port_active = false;  // the port asked for (-i) is ACTIVE
  std::string port_state;    // "ACTIVE", "DOWN", ... for messages
};

/// The device to open: -d NAME, else the first whose port is ACTIVE. Throws UsageError naming the
/// devices there are (none: how to add Soft-RoCE).
std::string choose_device(const std::vector<DeviceView>& devices, const std::string& wanted, int port);

/// A valid GID table entry (ibv_query_gid_table).
struct GidView {
  int index = 0;
  std::string type;  // "IB", "RoCE v1", "RoCE v2"
  std::string text;  // inet_ntop form: "fe80::...", "::ffff:127.0.0.1"
};

/// The GID index: -x when given (it must be a valid entry: out of range or empty is a UsageError
/// listing the valid ones); else on Ethernet RoCE v2 with an IPv4-mapped address, then any RoCE v2,
/// then v1; on InfiniBand none (LID routing). `table_size` is the port's gid_tbl_len.
std::optional<int> choose_gid(const std::vector<GidView>& gids, std::optional<int> wanted, bool ethernet,
                              int table_size, const std::string& device, int port);

/// ibv_port_attr's active_speed (1, 2, 4, 8, 16, 32, 64, 128, 256) and active_width (1, 2, 4, 8, 16) as
/// Gb/s (4x NDR = 400, 4x HDR = 200, 4x EDR = 100, 4x FDR = 56); nullopt for values it does not know.
std::optional<double> port_rate_gbps(int active_speed, int active_width);

/// enum ibv_mtu (1..5) <-> bytes (256..4096); 0 / nullopt outside.
int mtu_bytes(int ibv_mtu);
std::optional<int> ibv_mtu_of(int bytes);

/// What each side sends the other before connecting, checked on arrival.
struct PeerInfo {
  int version = 1;       // of this message
  std::string settings;  // the flags both sides must agree on: bench, qps, sizes, bidir, ...
  int rank = 0;
  std::string host;
  std::string device;
  int port = 1;
  std::string link_layer;
  std::optional<int> gid_index;
  std::string gid;                    // text; empty without a GID
  std::string gid_type;               // empty without a GID
  std::vector<std::uint8_t> gid_raw;  // 16 bytes, or empty
  int lid = 0;
  int active_mtu = 0;  // bytes
  std::optional<double> rate_Gbps;
  std::vector<std::uint32_t> qpns;
  std::uint32_t psn = 0;
  std::uint64_t addr = 0;  // the peer's buffer, to write into
  std::uint32_t rkey = 0;
  std::uint64_t bytes = 0;  // its length
};

inline constexpr int kPeerInfoVersion = 1;

std::string to_text(const PeerInfo& p);
/// Parses and checks a peer's message against ours: throws UsageError when it is not ours
/// (garbage, another version, other settings, another link layer, a GID missing where we route by
/// GID, a different QP count, a buffer smaller than ours).
PeerInfo peer_from_text(const std::string& text, const PeerInfo& mine);

}  // namespace ccbench::verbs

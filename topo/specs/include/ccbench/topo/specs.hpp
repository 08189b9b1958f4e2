#pragma once
// The spec database: hardware bandwidths with a source per entry, from topo/specs/hardware.json
// (compiled into the library, so binaries need no data file at run time).
// All rates are GB/s = 1e9 B/s per direction (vendors usually quote both directions summed).
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::topo {

/// A database document that is malformed or incomplete; the message names the entry and the key.
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct GpuSpec {
  std::string model;                    // "H100 SXM"
  std::vector<std::string> nvml_names;  // regular expressions matched against NVML's whole name, case-insensitive
  std::string nvml_names_source;        // where those names were seen (driver README, nvidia-smi outputs)
  int nvlink_version = 0;               // 0: no NVLink
  int nvlink_links = 0;
  double nvlink_link_GBps = 0.0;   // per link, per direction
  double nvlink_total_GBps = 0.0;  // all links, per direction
  double hbm_GBps = 0.0;
  int pcie_gen = 0;    // host interface generation (x16)
  std::string source;  // where the numbers come from (URL and document)
};

struct LinkSpec {
  std::string name;   // "PCIe Gen5 x16", "InfiniBand NDR (4x NDR)", "RoCE 400 Gb/s"
  double GBps = 0.0;  // per direction
  std::string source;
};

/// A rated NIC port: the rate and link layer it is recognised by, and what it is worth.
struct NicPortSpec {
  std::string link_layer;  // "InfiniBand" or "Ethernet", as the port reports it
  double rate_Gbps = 0.0;  // as the port reports it (ibv rate, netdev speed)
  int width = 0;           // InfiniBand lanes (2 for HDR100 = 2x HDR, 4 for NDR); 0: any (Ethernet)
  LinkSpec link;
};

class SpecDatabase {
 public:
  /// The database compiled into the library (topo/specs/hardware.json), parsed once.
  static const SpecDatabase& builtin();
  /// Parses a database document (the format of topo/specs/hardware.json); throws SpecError.
  static SpecDatabase parse(std::string_view json_text);

  /// The GPU whose patterns match NVML's name, or nullptr (never a guess).
  [[nodiscard]] const GpuSpec* find_gpu(std::string_view nvml_name) const;
  /// Every GPU whose patterns match (more than one is a database error; find_gpu takes the first).
  [[nodiscard]] std::vector<const GpuSpec*> matching_gpus(std::string_view nvml_name) const;
  /// PCIe per direction for a generation (1..6) and width (1..32 lanes); nullopt when unknown.
  [[nodiscard]] std::optional<LinkSpec> pcie(int gen, int width) const;
  /// A NIC port by its rate in Gb/s, link layer and width in lanes ("InfiniBand" 100 Gb/s x4 -> EDR,
  /// x2 -> HDR100; "Ethernet" -> RoCE); nullopt when no rated port has that rate (the link layer is
  /// compared case-insensitively). Width 0 (not reported) matches any width; where that leaves
  /// several ports, the name says only the rate ("InfiniBand 100 Gb/s").
  [[nodiscard]] std::optional<LinkSpec> nic(double rate_Gbps, std::string_view link_layer, int width = 0) const;
  [[nodiscard]] const std::vector<GpuSpec>& gpus() const { return m_gpus; }
  [[nodiscard]] const std::vector<NicPortSpec>& nic_ports() const { return m_nic; }
  /// Where the PCIe per-lane figures come from.
  [[nodiscard]] const std::string& pcie_source() const { return m_pcie_source; }

 private:
  std::vector<GpuSpec> m_gpus;
  std::vector<std::vector<std::regex>> m_gpu_patterns;  // compiled nvml_names, parallel to m_gpus
  std::vector<double> m_pcie_lane_GBps;                 // index = generation - 1, per lane per direction
  std::string m_pcie_source;
  std::vector<NicPortSpec> m_nic;  // rated ports
};

}  // namespace ccbench::topo

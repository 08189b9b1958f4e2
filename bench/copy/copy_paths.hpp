#pragma once
// copy_bench's plan: which copies to measure (host<->device, within a GPU, between GPUs), what each is
// named, and the spec it is set against. Plain values without CUDA, so the planning is unit-tested on
// any machine.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/topo/specs.hpp"
#include "ccbench/topo/topology.hpp"

namespace ccbench::copy {

enum class Kind { H2D, D2H, D2D, P2P };
enum class Engine { CopyEngine, Sm };        // cudaMemcpyAsync (DMA engines) or a copy kernel (SM loads/stores)
enum class HostMemory { Pinned, Pageable };  // H2D / D2H only

struct Path {
  Kind kind = Kind::H2D;
  Engine engine = Engine::CopyEngine;
  HostMemory host = HostMemory::Pinned;
  bool bidirectional = false;  // P2P: both directions at once
  int src = 0;                 // CUDA device index (the GPU of H2D/D2H/D2D)
  int dst = 0;

  /// "h2d:pinned:gpu0", "d2d:sm:gpu1", "p2p:ce:bidir:gpu0-gpu1": the result's group_id and the
  /// Google Benchmark name's stem.
  [[nodiscard]] std::string id() const;
  /// Bytes moved per copy of `size` bytes (both directions for a bidirectional copy).
  [[nodiscard]] std::uint64_t bytes_moved(std::uint64_t size) const { return bidirectional ? 2 * size : size; }
  /// busbw / algbw: 2 for a copy within one GPU's memory (every byte read and written), else 1.
  [[nodiscard]] double bus_factor() const { return kind == Kind::D2D ? 2.0 : 1.0; }
};

/// What to measure: --kinds, --engines and --devices as given (parsed and checked).
struct Selection {
  bool h2d = true;
  bool d2h = true;
  bool d2d = true;
  bool p2p = true;
  bool ce = true;
  bool sm = true;
  std::vector<int> devices;  // empty: every visible device
};

/// "h2d,d2h,d2d,p2p" / "ce,sm" / "all" or "0,2" into a Selection; throws UsageError with one line.
Selection parse_selection(const std::string& kinds, const std::string& engines, const std::string& devices,
                          int visible_devices);

/// Every path of `selection` among the chosen devices: per GPU H2D and D2H (pinned, pageable; copy
/// engine) and D2D (engines as selected); per ordered pair of GPUs P2P uni (engines as selected) and
/// per unordered pair bidirectional. `peer_access(a, b)`: whether a can reach b's memory directly
/// (SM copies between GPUs need it; copy-engine copies without it go through the host, and still run).
std::vector<Path> plan_paths(const Selection& selection, const std::vector<std::vector<bool>>& peer_access);

/// The spec for `path`, per direction and comparable with busbw, from the GPUs' discovered topology
/// (`gpus`: index = CUDA device index; a GPU whose bus id is unknown gives nullopt):
/// H2D/D2H: the GPU's PCIe link at its max generation x width (GPUs idle at a lower generation; the basis
/// says when discovery saw it below); D2D: the GPU model's HBM bandwidth; P2P: NVLink
/// or PCIe between the two, as the collectives' peak model has it (busbw of a bidirectional copy is
/// its bytes moved over the time, so its peak is twice the per-direction figure).
struct CopyPeak {
  std::optional<double> GBps;
  std::string basis;
};
CopyPeak copy_peak(const Path& path, const topo::SpecDatabase& specs, const topo::HostTopology& host,
                   const std::vector<int>& topo_gpu_of_device);

}  // namespace ccbench::copy

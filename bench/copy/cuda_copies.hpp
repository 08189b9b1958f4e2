#pragma once
// copy_bench's CUDA side: devices and peer access, the buffers and streams of one path, and the
// Google Benchmark registrations that time it with CUDA events.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/topo/topology.hpp"
#include "copy_paths.hpp"

namespace ccbench::copy {

/// CUDA devices visible; 0 when none (or no driver).
int visible_devices();
/// Why there is none: CUDA's message.
std::string no_device_reason();
/// [a][b]: device a reaches b's memory directly; enables that access where it can be had.
std::vector<std::vector<bool>> peer_access_matrix(int devices);
/// For each CUDA device, its index in host.gpus (matched by PCI bus id), or -1.
std::vector<int> match_topology(const topo::HostTopology& host, int devices);
/// cuda_runtime, cuda_driver and gpuN: "model (bus id)", for environment.libraries.
std::map<std::string, std::string> cuda_versions();

/// Where a Google Benchmark function is in the plan.
struct CaseKey {
  std::size_t path = 0;
  std::size_t size = 0;
};

/// What one call of a benchmark function measured (Google Benchmark calls it more than once: first to
/// estimate the iterations, then for each repetition).
struct CallSamples {
  std::vector<double> seconds;
  std::optional<std::uint64_t> wrong;  // set when checked
  double elapsed_s = 0.0;
};

struct Samples {
  std::map<std::string, CaseKey> index;                   // benchmark name -> case
  std::map<std::string, std::vector<CallSamples>> calls;  // benchmark name -> each call
  /// The last call's samples (the reported one); an empty one when never called.
  [[nodiscard]] const CallSamples& last(const std::string& name) const;
};

/// One Google Benchmark per path and size, named "<path id>/<size>" (e.g. "p2p:ce:uni:gpu0-gpu1/64M"),
/// manual time from CUDA events, at least `min_time_s` of copies; before each timed copy (untimed) the L2 of
/// every GPU involved is flushed, so no copy is served from cache. Buffers are allocated for the largest
/// size, one path at a time.
/// `peaks_GBps`: per path, for the %peak column of the console table.
void register_benchmarks(const std::vector<Path>& paths, const std::vector<std::optional<double>>& peaks_GBps,
                         const std::vector<std::uint64_t>& sizes, bool check, double min_time_s, Samples& samples);

}  // namespace ccbench::copy

#pragma once
// The one place that knows which backends were built.
#include <map>
#include <memory>
#include <string>

#include "ccbench/backend.hpp"
#include "ccbench/config.hpp"
#include "ccbench/gpu_probe.hpp"
#include "ccbench/mpi/mpi_group.hpp"
#include "ccbench/version.hpp"

namespace ccbench {

struct RankPlacement {
  int local_rank = 0;
  int local_size = 1;
};

/// The backend a run uses, and for `auto` why (for the table header and the result's environment).
struct BackendResolution {
  BackendChoice choice = BackendChoice::Mpi;
  std::string why;    // empty unless --backend auto
  std::string cause;  // auto's choice alone, as a rank's reason: "CUDA cannot start: ...", "3 CUDA GPU(s) visible"
};

/// --version's library lines: CUDA and NCCL, MPI, verbs (loaded and built against), or that this
/// build has no such backend.
LibraryLines library_lines();

/// `auto` -> nccl when NCCL was built and a CUDA device is visible, else mpi; `why` says which case,
/// with CUDA's error when CUDA could not start.
BackendResolution resolve_backend(BackendChoice requested, const GpuProbe& gpus);

/// This process's CUDA devices (none without NCCL support), or why CUDA cannot start.
GpuProbe probe_gpus();

/// Local checks (no communication): throws UsageError when the backend was not built or cannot
/// run on this host with `gpus` (CUDA cannot start, no GPU, or more ranks on the host than GPUs).
void check_can_run(BackendChoice choice, RankPlacement placement, const std::string& host, const GpuProbe& gpus);

/// The verbs backend over any two-rank group (the standalone pair's TCP group too). Throws UsageError
/// when this build has none.
std::unique_ptr<Backend> make_rdma_backend(Group& pair, const RunConfig& config, int world_rank,
                                           const std::string& host);

/// Collective over `group`. Throws UsageError when the backend cannot run (see check_can_run).
/// `world_rank` and `host` name this rank where a backend records its side (verbs). `variant` is the plan's
/// (--nccl-variants): for "ring" the NCCL backend makes its communicators with NCCL_ALGO=Ring.
std::unique_ptr<Backend> make_backend(BackendChoice choice, MpiGroup& group, RankPlacement placement,
                                      const RunConfig& config, int world_rank, const std::string& host,
                                      std::string_view variant = {});

}  // namespace ccbench

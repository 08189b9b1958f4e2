#include "backend_registry.hpp"

#include <fmt/format.h>

#include <string_view>
#include <utility>

#include "ccbench/build_config.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/mpi/mpi_backend.hpp"
#include "debug_hooks.hpp"
#if CCBENCH_HAVE_NCCL
#include "ccbench/nccl/nccl_backend.hpp"
#endif
#if CCBENCH_HAVE_VERBS
#include "ccbench/verbs/verbs_backend.hpp"
#endif

namespace ccbench {
namespace {

constexpr bool kNcclBuilt = CCBENCH_HAVE_NCCL == 1;
constexpr bool kVerbsBuilt = CCBENCH_HAVE_VERBS == 1;
constexpr std::string_view kNoVerbs =
    "this build has no verbs backend (libibverbs was not found when it was configured: apt-get install "
    "libibverbs-dev, then reconfigure with -DCCBENCH_VERBS=ON)";

std::unique_ptr<Backend> make_verbs(Group& group, const RunConfig& config, int world_rank, const std::string& host) {
#if CCBENCH_HAVE_VERBS
  return make_verbs_backend(group, config, world_rank, host);
#else
  (void)group;
  (void)config;
  (void)world_rank;
  (void)host;
  throw UsageError(std::string{kNoVerbs});
#endif
}

/// Why NCCL cannot be used here (it is loaded at run time); empty when it can.
std::string nccl_missing() {
#if CCBENCH_HAVE_NCCL
  return nccl_unavailable();
#else
  return "this build has no NCCL backend";
#endif
}

std::unique_ptr<Backend> make_nccl(MpiGroup& group, RankPlacement placement, const RunConfig& config,
                                   std::string_view variant) {
#if CCBENCH_HAVE_NCCL
  return make_nccl_backend(group, placement.local_rank, placement.local_size, config.timeout_s, config.check,
                           config.registration, variant == "ring" ? "Ring" : "");
#else
  (void)group;
  (void)placement;
  (void)config;
  (void)variant;
  throw UsageError("--backend nccl: this build has no NCCL backend; reconfigure with -DCCBENCH_NCCL=ON");
#endif
}

}  // namespace

std::unique_ptr<Backend> make_rdma_backend(Group& pair, const RunConfig& config, int world_rank,
                                           const std::string& host) {
  return make_verbs(pair, config, world_rank, host);
}

GpuProbe probe_gpus() {
  if (const int claimed = debug::gpus_claimed(); claimed >= 0) {
    return {claimed, {}};
  }
#if CCBENCH_HAVE_NCCL
  return read_cuda_answer(cuda_answer());
#else
  return {};
#endif
}

void check_can_run(BackendChoice choice, RankPlacement placement, const std::string& host, const GpuProbe& gpus) {
  if (choice == BackendChoice::Verbs && !kVerbsBuilt) {
    throw UsageError(std::string{kNoVerbs});
  }
  if (choice != BackendChoice::Nccl) {
    return;
  }
  if (!kNcclBuilt) {
    throw UsageError("--backend nccl: this build has no NCCL backend; reconfigure with -DCCBENCH_NCCL=ON");
  }
  if (!gpus.problem.empty()) {
    throw UsageError(fmt::format("--backend nccl: CUDA cannot start on {}: {}", host, gpus.problem));
  }
  if (const std::string why = nccl_missing(); !why.empty()) {
    throw UsageError(fmt::format("--backend nccl on {}: {}", host, why));
  }
  if (const DeviceChoice d = choose_device(placement.local_rank, placement.local_size, gpus.count, host);
      d.device < 0) {
    throw UsageError("--backend nccl: " + d.how);
  }
}

LibraryLines library_lines() {
  LibraryLines lines;
#if CCBENCH_HAVE_NCCL
  lines = nccl_library_lines();
#elif CCBENCH_HAVE_CUDA
  lines.emplace_back("cuda", "built in (device buffers), without NCCL");
  lines.emplace_back("nccl", "not built in (NCCL was not found at build time, or CCBENCH_NCCL=OFF)");
#else
  lines.emplace_back("cuda", "not built in (CUDA was not found at build time, or CCBENCH_CUDA=OFF)");
  lines.emplace_back("nccl", "not built in");
#endif
  const auto mpi = mpi_library_lines();
  lines.insert(lines.end(), mpi.begin(), mpi.end());
#if CCBENCH_HAVE_VERBS
  const auto verbs = verbs_library_lines();
  lines.insert(lines.end(), verbs.begin(), verbs.end());
#else
  lines.emplace_back("verbs", "not built in (libibverbs was not found at build time, or CCBENCH_VERBS=OFF)");
#endif
  return lines;
}

BackendResolution resolve_backend(BackendChoice requested, const GpuProbe& gpus) {
  if (requested != BackendChoice::Auto) {
    return {requested, {}, {}};
  }
  const auto mpi = [](std::string cause, std::string_view joint = ": ") {
    return BackendResolution{BackendChoice::Mpi, fmt::format("--backend auto chose mpi{}{}", joint, cause), cause};
  };
  if (!kNcclBuilt) {
    return mpi("this build has no NCCL backend");
  }
  if (!gpus.problem.empty()) {
    return mpi("CUDA cannot start: " + gpus.problem, " because ");
  }
  if (gpus.count == 0) {
    return mpi("no CUDA GPU is visible");
  }
  if (std::string why = nccl_missing(); !why.empty()) {
    return mpi(std::move(why));
  }
  std::string visible = fmt::format("{} CUDA GPU(s) visible", gpus.count);
  return {BackendChoice::Nccl, "--backend auto chose nccl: " + visible, visible};
}

std::unique_ptr<Backend> make_backend(BackendChoice choice, MpiGroup& group, RankPlacement placement,
                                      const RunConfig& config, int world_rank, const std::string& host,
                                      std::string_view variant) {
  switch (choice) {
    case BackendChoice::Nccl:
      return make_nccl(group, placement, config, variant);
    case BackendChoice::Verbs:
      return make_verbs(group, config, world_rank, host);
    case BackendChoice::Mpi:
    case BackendChoice::Auto:
      break;
  }
  return make_mpi_backend(group);
}

}  // namespace ccbench

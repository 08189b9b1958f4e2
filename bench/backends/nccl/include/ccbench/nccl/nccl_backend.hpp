#pragma once
// The NCCL backend: one rank per GPU, collectives on device memory, timed with CUDA events.
// No CUDA or NCCL header is needed to use it.
#include <memory>
#include <string_view>

#include "ccbench/backend.hpp"
#include "ccbench/gpu_probe.hpp"
#include "ccbench/group.hpp"
#include "ccbench/registration.hpp"
#include "ccbench/version.hpp"

namespace ccbench {

/// What CUDA says about this process's devices (cuda::ask() of ccbench/cuda/device.hpp), in a library that
/// links CUDA so that its callers need not; read it with read_cuda_answer(). Never throws.
CudaAnswer cuda_answer() noexcept;

/// --version's lines for CUDA and NCCL: the runtime (static) and the driver here, the NCCL loaded (its
/// version and file: LD_LIBRARY_PATH swaps it) beside the one built against. Needs no GPU.
LibraryLines nccl_library_lines();

/// Empty when an NCCL library loads here (it is loaded at run time, not linked: nccl_api.hpp); else
/// why not, in one line that says where it looked.
std::string nccl_unavailable();

/// One rank per GPU: device = local_rank; the caller has checked that the host has a GPU for
/// each of its local_size ranks. Throws UsageError (one line, says how to fix) for a bad local
/// rank or an NCCL library older than 2.14, on every rank of `group` at once, so no rank is left
/// waiting. Communicator creation (unique id broadcast over `group` from rank 0) is covered by
/// `timeout_s` (TimeoutError on expiry); so is every later op. A non-positive timeout means no limit.
/// With `check` (-c), cases whose result cannot be checked exactly are refused with the reason. A non-empty
/// `algo` is set as NCCL_ALGO before the communicator is made (NCCL reads it then, for its tuning model):
/// "Ring" for --nccl-variants' ring variant; it stays set for the process. `registration` (-R) allocates the
/// buffers with ncclMemAlloc and registers them (1) or makes them symmetric windows (2); refused with one line
/// (UsageError, on every rank) where the NCCL built against or loaded is too old (registration_refusal).
std::unique_ptr<Backend> make_nccl_backend(Group& group, int local_rank, int local_size, double timeout_s, bool check,
                                           Registration registration = Registration::None, std::string_view algo = {});

}  // namespace ccbench

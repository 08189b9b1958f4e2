#pragma once
// NCCL, loaded at run time (dlopen), not linked: a build with NCCL starts on a host without it (the
// host-memory benches, the .deb on a GPU-less node), and the libnccl.so.2 a run uses is whichever the
// loader finds first, so a regression run after an NCCL upgrade needs no rebuild (LD_LIBRARY_PATH,
// CCBENCH_NCCL_LIBRARY, or a pip wheel's). nccl.h is needed at build time only.
#include <nccl.h>

#include <string>

namespace ccbench::nccl_detail {

/// The entry points this backend calls. AlltoAll, Gather and Scatter are null where the library has none
/// (before 2.28).
struct NcclApi {
  decltype(&::ncclGetVersion) GetVersion = nullptr;
  decltype(&::ncclGetUniqueId) GetUniqueId = nullptr;
  decltype(&::ncclGetErrorString) GetErrorString = nullptr;
  decltype(&::ncclGetLastError) GetLastError = nullptr;
  decltype(&::ncclCommInitRankConfig) CommInitRankConfig = nullptr;
  decltype(&::ncclCommFinalize) CommFinalize = nullptr;
  decltype(&::ncclCommDestroy) CommDestroy = nullptr;
  decltype(&::ncclCommAbort) CommAbort = nullptr;
  decltype(&::ncclCommGetAsyncError) CommGetAsyncError = nullptr;
  decltype(&::ncclGroupStart) GroupStart = nullptr;
  decltype(&::ncclGroupEnd) GroupEnd = nullptr;
  decltype(&::ncclSend) Send = nullptr;
  decltype(&::ncclRecv) Recv = nullptr;
  decltype(&::ncclAllReduce) AllReduce = nullptr;
  decltype(&::ncclAllGather) AllGather = nullptr;
  decltype(&::ncclReduceScatter) ReduceScatter = nullptr;
  decltype(&::ncclBroadcast) Broadcast = nullptr;
  decltype(&::ncclReduce) Reduce = nullptr;
  using AlltoAllFn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  AlltoAllFn AlltoAll = nullptr;
  using RootedFn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  RootedFn Gather = nullptr;  // 2.28 and later, as AlltoAll
  RootedFn Scatter = nullptr;
  // -R (2.19 and later; windows 2.27): null where the library has none. Declared by hand, not from nccl.h, so the
  // backend builds against an older header too; nccl.h's ncclWindow_t is a pointer, held here as void*.
  ncclResult_t (*MemAlloc)(void** ptr, size_t size) = nullptr;
  ncclResult_t (*MemFree)(void* ptr) = nullptr;
  ncclResult_t (*CommRegister)(ncclComm_t comm, void* buff, size_t size, void** handle) = nullptr;
  ncclResult_t (*CommDeregister)(ncclComm_t comm, void* handle) = nullptr;
  ncclResult_t (*CommWindowRegister)(ncclComm_t comm, void* buff, size_t size, void** win, int flags) = nullptr;
  ncclResult_t (*CommWindowDeregister)(ncclComm_t comm, void* win) = nullptr;
  std::string file;  // the library loaded, links resolved
};

/// NCCL_WIN_COLL_SYMMETRIC of nccl.h 2.27 (a window every rank registers alike).
inline constexpr int kWindowSymmetric = 0x01;

/// The library, loaded on first call and kept: CCBENCH_NCCL_LIBRARY (a file) when set, else
/// libnccl.so.2 as the loader finds it (LD_LIBRARY_PATH, the system's folders), else CUDA's
/// (/usr/local/cuda/lib64) or a pip wheel's (nvidia-nccl-cu12/-cu13: site-packages/nvidia/nccl/lib of
/// $VIRTUAL_ENV, $CONDA_PREFIX, /usr/local, /usr, ~/.local). Null when none loads; nccl_load_error() says
/// why, in one line that names where it looked.
const NcclApi* nccl_api() noexcept;
std::string nccl_load_error();

/// ncclGetVersion of the library loaded; 0 when none is loaded or it fails.
int loaded_version() noexcept;

/// The loaded library; only called where nccl_api() was checked (make_nccl_backend does).
const NcclApi& nccl();

}  // namespace ccbench::nccl_detail

#pragma once
// The control side of the recording stand-in libnccl (fake_nccl.cpp): a test loads it by path, as the NCCL
// backend does (CCBENCH_NCCL_LIBRARY), and reaches these functions through dlsym on the same handle.
//
// The stand-in keeps what real NCCL does that the backend must get right without a GPU:
// - ncclMemAlloc hands out the lowest free range (rounded to a 2 MiB granule), so a freed range comes back;
//   a registration over memory that was registered on the same communicator and freed since is logged as
//   "HAZARD" (NCCL keeps a graph's registration of the old memory and would adopt its stale slot);
// - on a non-blocking communicator a registration returns ncclSuccess and leaves the communicator in
//   progress for `settle_polls` ncclCommGetAsyncError polls; a call meanwhile is "MISUSE", ncclInvalidUsage;
// - a null handle or window where `null_registrations` / `null_windows` says so (NCCL_LOCAL_REGISTER=0,
//   symmetric memory unsupported);
// - two threads inside NCCL on one communicator at once are "CONCURRENT".
// Every call is a line of the log: "<thread>: <call> <arguments>", the thread named by fake_nccl_name_thread.
#include <cstddef>

// The stand-in's C entry points keep one spelling for dlsym.
// NOLINTBEGIN(readability-identifier-naming)
extern "C" {

struct FakeNcclScript {
  int version = 22809;           // ncclGetVersion
  int null_registrations = 0;    // ncclCommRegister: ncclSuccess with a null handle
  int null_windows = 0;          // ncclCommWindowRegister: ncclSuccess with a null window
  int settle_polls = 0;          // non-blocking: polls in progress after each (de)registration
  int async_error_delay_us = 0;  // ncclCommGetAsyncError takes this long (widens a race)
};

using FakeNcclResetFn = void (*)(const FakeNcclScript* script);
using FakeNcclNameThreadFn = void (*)(const char* name);
using FakeNcclLogSizeFn = std::size_t (*)();
using FakeNcclLogLineFn = const char* (*)(std::size_t index);

}  // extern "C"
// NOLINTEND(readability-identifier-naming)

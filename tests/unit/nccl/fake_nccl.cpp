// A recording stand-in libnccl for the NCCL backend's unit tests (what it models: fake_nccl.hpp). Declared as
// nccl.h declares these entry points, loaded by path (CCBENCH_NCCL_LIBRARY) as the real one is. No memory it
// hands out is real: the backend only passes NCCL's pointers on, and these tests never launch an op.
#include "fake_nccl.hpp"

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// NCCL's own names (and its struct ncclComm) are what this file must define.
// NOLINTBEGIN(readability-identifier-naming,readability-inconsistent-declaration-parameter-name)
struct ncclComm {
  bool blocking = true;
  std::atomic<bool> ended{false};  // destroyed or aborted
  std::atomic<int> pending{0};     // polls left in progress (non-blocking)
  std::atomic<int> inside{0};
  struct Registered {
    std::uintptr_t begin;
    std::uintptr_t end;
    std::uint64_t allocation;  // the serial of the allocation it lay in
  };
  std::vector<Registered> registered;  // every registration this communicator made
};

namespace {

constexpr std::uintptr_t kBase = 0x7f0000000000;
constexpr std::size_t kGranule = std::size_t{2} << 20;

struct Allocation {
  std::size_t bytes;
  std::uint64_t serial;
};

struct State {
  std::mutex mutex;
  FakeNcclScript script;
  std::vector<std::string> log;
  std::map<std::uintptr_t, Allocation> live;  // by address
  std::uint64_t serial = 0;
  std::vector<std::unique_ptr<ncclComm>> comms;  // kept: a call on an ended one is logged, not a crash
  std::string last_error;
};

State& state() {
  static State s;
  return s;
}

thread_local const char* t_thread = "main";  // a name the test keeps (a literal)

std::string hex(std::uintptr_t address) { return "@" + std::to_string((address - kBase) / kGranule); }

void record(const std::string& line) {
  const std::lock_guard lock(state().mutex);
  state().log.push_back(std::string(t_thread) + ": " + line);
}

/// Counts the threads inside NCCL on `comm` while it lives.
class Inside {
 public:
  Inside(ncclComm* comm, const char* call) : m_comm(comm) {
    if (m_comm != nullptr && m_comm->inside.fetch_add(1) > 0) {
      record(std::string("CONCURRENT: ") + call + " while another thread is inside NCCL on this communicator");
    }
  }
  ~Inside() {
    if (m_comm != nullptr) {
      m_comm->inside.fetch_sub(1);
    }
  }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
  Inside(Inside&&) = delete;
  Inside& operator=(Inside&&) = delete;

 private:
  ncclComm* m_comm;
};

/// As NCCL's ncclCommEnsureReady: a call on a communicator whose previous non-blocking call is in progress.
ncclResult_t usable(ncclComm* comm, const char* call) {
  if (comm == nullptr || comm->ended) {
    record(std::string("MISUSE: ") + call + " on a communicator that was destroyed or aborted");
    return ncclInvalidArgument;
  }
  if (comm->pending > 0) {
    record(std::string("MISUSE: ") + call +
           ": Attempt to use communicator before the previous operation returned "
           "ncclSuccess");
    const std::lock_guard lock(state().mutex);
    state().last_error = "Attempt to use communicator before the previous operation returned ncclSuccess";
    return ncclInvalidUsage;
  }
  return ncclSuccess;
}

void start_settling(ncclComm* comm) {
  if (!comm->blocking) {
    comm->pending = state().script.settle_polls;
  }
}

std::uint64_t allocation_at(std::uintptr_t address) {
  const std::lock_guard lock(state().mutex);
  auto it = state().live.upper_bound(address);
  if (it == state().live.begin()) {
    return 0;
  }
  --it;
  return address < it->first + it->second.bytes ? it->second.serial : 0;
}

ncclResult_t register_range(ncclComm* comm, void* buff, std::size_t size, const char* call) {
  const auto begin = reinterpret_cast<std::uintptr_t>(buff);
  const std::uint64_t serial = allocation_at(begin);
  for (const auto& r : comm->registered) {
    if (r.begin < begin + size && begin < r.end && r.allocation != serial) {
      record(std::string("HAZARD: ") + call + " " + hex(begin) +
             " lies where memory registered on this communicator was freed (a graph's registration of it would "
             "be adopted)");
    }
  }
  comm->registered.push_back({begin, begin + size, serial});
  return ncclSuccess;
}

}  // namespace

extern "C" {

// ---- control ----

__attribute__((visibility("default"))) void fake_nccl_reset(const FakeNcclScript* script) {
  const std::lock_guard lock(state().mutex);
  state().script = script != nullptr ? *script : FakeNcclScript{};
  state().log.clear();
  state().live.clear();
  state().last_error.clear();
}

__attribute__((visibility("default"))) void fake_nccl_name_thread(const char* name) { t_thread = name; }

__attribute__((visibility("default"))) std::size_t fake_nccl_log_size() {
  const std::lock_guard lock(state().mutex);
  return state().log.size();
}

__attribute__((visibility("default"))) const char* fake_nccl_log_line(std::size_t index) {
  const std::lock_guard lock(state().mutex);
  return index < state().log.size() ? state().log[index].c_str() : nullptr;
}

// ---- NCCL ----

ncclResult_t ncclGetVersion(int* version) {
  *version = state().script.version;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  *id = ncclUniqueId{};
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unhandled error";
  }
}

const char* ncclGetLastError(ncclComm_t /*comm*/) {
  const std::lock_guard lock(state().mutex);
  return state().last_error.c_str();
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId /*id*/, int rank, ncclConfig_t* config) {
  auto made = std::make_unique<ncclComm>();
  made->blocking = config == nullptr || config->blocking != 0;
  *comm = made.get();
  record("ncclCommInitRankConfig rank " + std::to_string(rank) + " of " + std::to_string(nranks) +
         (made->blocking ? " blocking" : " non-blocking"));
  const std::lock_guard lock(state().mutex);
  state().comms.push_back(std::move(made));
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* state_out) {
  const Inside inside(comm, "ncclCommGetAsyncError");
  if (const int delay = state().script.async_error_delay_us; delay > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(delay));
  }
  if (comm->ended) {
    record("MISUSE: ncclCommGetAsyncError on a communicator that was destroyed or aborted");
    return ncclInvalidArgument;
  }
  *state_out = comm->pending.fetch_sub(1) > 0 ? ncclInProgress : ncclSuccess;
  if (comm->pending.load() < 0) {
    comm->pending = 0;
  }
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  const Inside inside(comm, "ncclCommFinalize");
  record("ncclCommFinalize");
  return usable(comm, "ncclCommFinalize");
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  const Inside inside(comm, "ncclCommDestroy");
  record("ncclCommDestroy");
  comm->ended = true;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  const Inside inside(comm, "ncclCommAbort");
  record("ncclCommAbort");
  comm->ended = true;
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() { return ncclSuccess; }
ncclResult_t ncclGroupEnd() { return ncclSuccess; }

ncclResult_t ncclSend(const void* /*buff*/, size_t count, ncclDataType_t /*type*/, int peer, ncclComm_t comm,
                      cudaStream_t /*stream*/) {
  record("ncclSend " + std::to_string(count) + " to " + std::to_string(peer));
  return usable(comm, "ncclSend");
}

ncclResult_t ncclRecv(void* /*buff*/, size_t count, ncclDataType_t /*type*/, int peer, ncclComm_t comm,
                      cudaStream_t /*stream*/) {
  record("ncclRecv " + std::to_string(count) + " from " + std::to_string(peer));
  return usable(comm, "ncclRecv");
}

ncclResult_t ncclAllReduce(const void* /*send*/, void* /*recv*/, size_t count, ncclDataType_t /*type*/,
                           ncclRedOp_t /*op*/, ncclComm_t comm, cudaStream_t /*stream*/) {
  record("ncclAllReduce " + std::to_string(count));
  return usable(comm, "ncclAllReduce");
}

ncclResult_t ncclAllGather(const void* /*send*/, void* /*recv*/, size_t count, ncclDataType_t /*type*/, ncclComm_t comm,
                           cudaStream_t /*stream*/) {
  record("ncclAllGather " + std::to_string(count));
  return usable(comm, "ncclAllGather");
}

ncclResult_t ncclReduceScatter(const void* /*send*/, void* /*recv*/, size_t count, ncclDataType_t /*type*/,
                               ncclRedOp_t /*op*/, ncclComm_t comm, cudaStream_t /*stream*/) {
  record("ncclReduceScatter " + std::to_string(count));
  return usable(comm, "ncclReduceScatter");
}

ncclResult_t ncclBroadcast(const void* /*send*/, void* /*recv*/, size_t count, ncclDataType_t /*type*/, int /*root*/,
                           ncclComm_t comm, cudaStream_t /*stream*/) {
  record("ncclBroadcast " + std::to_string(count));
  return usable(comm, "ncclBroadcast");
}

ncclResult_t ncclReduce(const void* /*send*/, void* /*recv*/, size_t count, ncclDataType_t /*type*/, ncclRedOp_t /*op*/,
                        int /*root*/, ncclComm_t comm, cudaStream_t /*stream*/) {
  record("ncclReduce " + std::to_string(count));
  return usable(comm, "ncclReduce");
}

// The lowest free range, rounded up to the granule: a range freed is the first handed out again.
ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  const std::size_t bytes = (size + kGranule - 1) / kGranule * kGranule;
  std::uintptr_t at = kBase;
  std::uint64_t serial = 0;
  {
    const std::lock_guard lock(state().mutex);
    for (const auto& [address, a] : state().live) {
      if (address >= at + bytes) {
        break;
      }
      at = address + a.bytes;
    }
    serial = ++state().serial;
    state().live[at] = {bytes, serial};
  }
  *ptr = reinterpret_cast<void*>(at);  // NOLINT(performance-no-int-to-ptr): never dereferenced
  record("ncclMemAlloc " + std::to_string(size) + " -> " + hex(at));
  return ncclSuccess;
}

ncclResult_t ncclMemFree(void* ptr) {
  const auto at = reinterpret_cast<std::uintptr_t>(ptr);
  record("ncclMemFree " + hex(at));
  const std::lock_guard lock(state().mutex);
  return state().live.erase(at) == 1 ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  const Inside inside(comm, "ncclCommRegister");
  const bool null = state().script.null_registrations != 0;
  record("ncclCommRegister " + hex(reinterpret_cast<std::uintptr_t>(buff)) + " " + std::to_string(size) +
         (null ? " -> null" : ""));
  if (const ncclResult_t ok = usable(comm, "ncclCommRegister"); ok != ncclSuccess) {
    return ok;
  }
  *handle = null ? nullptr : buff;
  start_settling(comm);
  return null ? ncclSuccess : register_range(comm, buff, size, "ncclCommRegister");
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  const Inside inside(comm, "ncclCommDeregister");
  record("ncclCommDeregister " + hex(reinterpret_cast<std::uintptr_t>(handle)));
  if (const ncclResult_t ok = usable(comm, "ncclCommDeregister"); ok != ncclSuccess) {
    return ok;
  }
  start_settling(comm);
  return ncclSuccess;
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int flags) {
  const Inside inside(comm, "ncclCommWindowRegister");
  const bool null = state().script.null_windows != 0;
  record("ncclCommWindowRegister " + hex(reinterpret_cast<std::uintptr_t>(buff)) + " " + std::to_string(size) +
         " flags " + std::to_string(flags) + (null ? " -> null" : ""));
  if (const ncclResult_t ok = usable(comm, "ncclCommWindowRegister"); ok != ncclSuccess) {
    return ok;
  }
  *win = null ? nullptr : reinterpret_cast<ncclWindow_t>(buff);
  start_settling(comm);
  return null ? ncclSuccess : register_range(comm, buff, size, "ncclCommWindowRegister");
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  const Inside inside(comm, "ncclCommWindowDeregister");
  record("ncclCommWindowDeregister " + hex(reinterpret_cast<std::uintptr_t>(win)));
  if (const ncclResult_t ok = usable(comm, "ncclCommWindowDeregister"); ok != ncclSuccess) {
    return ok;
  }
  start_settling(comm);
  return ncclSuccess;
}

}  // extern "C"
// NOLINTEND(readability-identifier-naming,readability-inconsistent-declaration-parameter-name)
